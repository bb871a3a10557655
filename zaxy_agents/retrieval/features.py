"""Per-event scoring features of the verbatim lane, on disk in fixed-size blocks, cached as one numpy array.

Every indexed event (a *doc*, numbered in indexing order) has a 56-byte record: its Eventloom session and
segment group, its previous and next event in that group (the neighbour structure), speaker, event type, cue
flags, field lengths, question share, day, month and time. Records live in blocks of ``BLOCK`` docs stored as
BLOBs (``<prefix>_feat``); a query loads only the blocks of the docs it touches into one array (``FEATURE``
records indexed by doc id), so gathering the features of a candidate set is one numpy fancy-index.

Blocks change when docs are appended (the last block) and when a doc gains a next neighbour (its block). Every
write stamps the block with the index's write sequence, so a reader drops exactly the blocks written since it
last looked (by this process or another one sharing the database).
"""

from __future__ import annotations

import sqlite3
import threading

import numpy as np

from . import sorted_sets as sets

BLOCK = 256
LOAD_ALL = 512  # blocks per ordered scan of FeatureCache.load_all (~7 MB of records)
FLAG_TEMPORAL = 1  # the text holds a temporal expression
FLAG_ASKS = 2  # the text holds a question mark
FLAG_ERASED = 4

FEATURE = np.dtype(
    [
        ("session", "<i4"),  # Eventloom session id (index-local number)
        ("group", "<i4"),  # (session, segment) group: the neighbour structure
        ("prev", "<i4"),  # previous doc in the group, -1 when none
        ("next", "<i4"),  # next doc in the group, -1 when none
        ("speaker", "<i4"),  # -1 when none
        ("type", "<i2"),  # event type id
        ("flags", "u1"),
        ("pad", "u1"),
        ("tl", "<f4"),  # text length in terms
        ("cl", "<f4"),  # caption length in terms
        ("qshare", "<f8"),  # share of the words in questions
        ("day", "<i4"),  # proleptic ordinal of occurred_at, -1 when unknown
        ("month", "<i4"),  # year * 12 + month - 1, -1 when unknown
        ("epoch", "<f8"),  # occurred_at as POSIX seconds, 0 when unknown
    ]
)
assert FEATURE.itemsize == 56


def schema(prefix: str) -> list[str]:
    return [
        f"CREATE TABLE IF NOT EXISTS {prefix}_feat(block INTEGER PRIMARY KEY, wseq INTEGER NOT NULL, "
        "data BLOB NOT NULL)",
        f"CREATE INDEX IF NOT EXISTS {prefix}_feat_wseq ON {prefix}_feat(wseq)",
    ]


def drop(prefix: str) -> list[str]:
    return [f"DROP TABLE IF EXISTS {prefix}_feat"]


def empty_block(dtype: np.dtype = FEATURE) -> np.ndarray:
    block = np.zeros(BLOCK, dtype=dtype)
    for name in ("prev", "next", "speaker", "day", "month"):
        if name in dtype.names:  # type: ignore[operator]
            block[name] = -1
    return block


def raw(records: np.ndarray) -> np.ndarray:
    """``records`` seen as opaque fixed-size items (same memory): NumPy copies those with one ``memcpy`` each, where
    it copies a structured record field by field (~20x slower when a query gathers 10^4 records)."""
    return records.view(np.dtype((np.void, records.dtype.itemsize)))


def take(records: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """``records[docs]`` (a new structured array), copied as raw items."""
    return raw(records)[docs].view(records.dtype)


class FeatureWriter:
    """The blocks one write transaction changes (read from the database, the source of truth)."""

    def __init__(self, prefix: str, db: sqlite3.Connection, dtype: np.dtype = FEATURE) -> None:
        self.prefix, self.db, self.dtype = prefix, db, dtype
        self.blocks: dict[int, np.ndarray] = {}
        self.dirty: set[int] = set()

    def block(self, number: int) -> np.ndarray:
        block = self.blocks.get(number)
        if block is None:
            row = self.db.execute(f"SELECT data FROM {self.prefix}_feat WHERE block = ?", (number,)).fetchone()
            block = np.frombuffer(row[0], dtype=self.dtype).copy() if row else empty_block(self.dtype)
            self.blocks[number] = block
        return block

    def record(self, doc: int) -> np.void:
        """Doc's record, to read (:meth:`set` / :meth:`put` to change it)."""
        return self.block(doc // BLOCK)[doc % BLOCK]

    def set(self, doc: int, field: str, value: object) -> None:
        self.block(doc // BLOCK)[field][doc % BLOCK] = value
        self.dirty.add(doc // BLOCK)

    def put(self, doc: int, record: np.void) -> None:
        self.block(doc // BLOCK)[doc % BLOCK] = record
        self.dirty.add(doc // BLOCK)

    def put_many(self, first: int, records: np.ndarray) -> None:
        """Records of docs ``first``, ``first + 1``, ...: one slice per block (a :meth:`put` per doc was ~3 us of a
        bulk event's CPU)."""
        at, end = 0, len(records)
        while at < end:
            doc = first + at
            number, offset = divmod(doc, BLOCK)
            size = min(BLOCK - offset, end - at)
            self.block(number)[offset : offset + size] = records[at : at + size]
            self.dirty.add(number)
            at += size

    def flush(self, wseq: int) -> dict[int, np.ndarray]:
        """Write the changed blocks; returns them (for the readers' cache once committed)."""
        changed = {number: self.blocks[number] for number in sorted(self.dirty)}
        self.db.executemany(
            f"INSERT OR REPLACE INTO {self.prefix}_feat VALUES (?, ?, ?)",
            [(number, wseq, block.tobytes()) for number, block in changed.items()],
        )
        self.dirty.clear()
        return changed


class FeatureCache:
    """Decoded feature blocks of one index, loaded on demand; thread-safe."""

    def __init__(self, prefix: str, dtype: np.dtype = FEATURE) -> None:
        self.prefix, self.dtype = prefix, dtype
        self._lock = threading.Lock()
        self.clear()

    def clear(self) -> None:
        self.records = np.zeros(0, dtype=self.dtype)
        self.loaded = np.zeros(0, dtype=bool)
        # every block below this one is loaded: a gather of docs below it skips checking their blocks (at 1M a
        # whole-memory query gathers 10^4-10^5 docs ~20 times, and the check cost as much as the gather)
        self.complete = 0
        self.seen_wseq = -1

    def _settle(self) -> None:
        """Move :attr:`complete` to the first block not loaded (after blocks were loaded)."""
        missing = np.flatnonzero(~self.loaded[self.complete :])
        self.complete += int(missing[0]) if missing.size else self.loaded.size - self.complete

    def refresh(self, db: sqlite3.Connection, wseq: int) -> None:
        """Forget blocks written since this cache last looked (``wseq``: the index's current write sequence)."""
        with self._lock:
            if wseq == self.seen_wseq:
                return
            if self.seen_wseq < 0 or wseq < self.seen_wseq:
                self.loaded[:] = False
                self.complete = 0
            else:
                changed = db.execute(
                    f"SELECT block FROM {self.prefix}_feat WHERE wseq > ?", (self.seen_wseq,)
                ).fetchall()
                for (number,) in changed:
                    if number < len(self.loaded):
                        self.loaded[number] = False
                        self.complete = min(self.complete, number)
            self.seen_wseq = wseq

    def install(self, blocks: dict[int, np.ndarray], before: int, after: int) -> None:
        """Adopt blocks this process just committed (write sequence ``before`` -> ``after``)."""
        with self._lock:
            for number, block in blocks.items():
                self._grow(number + 1)
                self.records[number * BLOCK : (number + 1) * BLOCK] = block
                self.loaded[number] = True
            self._settle()
            if self.seen_wseq == before:
                self.seen_wseq = after

    def gather(self, db: sqlite3.Connection, docs: np.ndarray, field: str | None = None) -> np.ndarray:
        """Feature records of ``docs`` (int64 doc ids), or only their ``field``."""
        if docs.size == 0:
            return np.zeros(0, dtype=self.dtype if field is None else self.dtype[field])
        with self._lock:
            if int(docs.max()) // BLOCK >= self.complete:  # else every block of ``docs`` is loaded
                numbers = docs // BLOCK
                self._grow(int(numbers.max()) + 1)
                if not self.loaded[numbers].all():
                    self._load(db, sets.unique(numbers[~self.loaded[numbers]]))
                    self._settle()
            return take(self.records, docs) if field is None else self.records[field][docs]

    def load_all(self, db: sqlite3.Connection) -> None:
        """Every block this cache lacks, in ordered scans of ``LOAD_ALL`` blocks: a whole-memory query touches
        nearly every block, and loading them by lookups of 500 one record copy each cost ~2x (at 1M events the
        first whole-memory question of a process loaded 56 MB). A few missing blocks (written since) are looked
        up as :meth:`gather` does."""
        with self._lock:
            top = db.execute(f"SELECT max(block) FROM {self.prefix}_feat").fetchone()[0]
            if top is None:
                return
            self._grow(int(top) + 1)
            missing = np.flatnonzero(~self.loaded[: int(top) + 1])
            if len(missing) <= LOAD_ALL:
                if len(missing):
                    self._load(db, missing)
                    self._settle()
                return
            cursor = db.execute(
                f"SELECT block, data FROM {self.prefix}_feat WHERE block >= ? ORDER BY block", (int(missing[0]),)
            )
            blocks = self.records.reshape(-1, BLOCK)  # a view: writing its rows writes the records
            while rows := cursor.fetchmany(LOAD_ALL):
                numbers = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
                wanted = ~self.loaded[numbers]
                if wanted.any():
                    data = b"".join(row[1] for row, keep in zip(rows, wanted.tolist(), strict=True) if keep)
                    blocks[numbers[wanted]] = np.frombuffer(data, dtype=self.dtype).reshape(-1, BLOCK)
                    self.loaded[numbers[wanted]] = True
            self._settle()

    def _load(self, db: sqlite3.Connection, missing: np.ndarray) -> None:
        for start in range(0, len(missing), 500):
            chunk = ",".join(str(int(n)) for n in missing[start : start + 500])
            for number, data in db.execute(f"SELECT block, data FROM {self.prefix}_feat WHERE block IN ({chunk})"):
                self.records[number * BLOCK : (number + 1) * BLOCK] = np.frombuffer(data, dtype=self.dtype)
                self.loaded[number] = True

    def _grow(self, blocks: int) -> None:
        if blocks <= len(self.loaded):
            return
        capacity = max(blocks, 2 * len(self.loaded), 4)
        records = np.zeros(capacity * BLOCK, dtype=self.dtype)
        records[: len(self.records)] = self.records
        loaded = np.zeros(capacity, dtype=bool)
        loaded[: len(self.loaded)] = self.loaded
        self.records, self.loaded = records, loaded
