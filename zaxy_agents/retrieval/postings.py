"""Postings on disk for the lexical lanes: term -> (doc ids, term frequencies), per session, in SQLite.

Layout (``<prefix>_post``, one row per *run*): ``(field, term, session, first doc) -> (n, docs, tfs)``. ``docs``
holds the gaps from the previous doc as uint16 (the first gap from ``first`` is 0) when every gap fits, else the
doc ids as uint32; ``tfs`` is uint8 when every count fits, else uint16 — the width follows from the BLOB length
and ``n`` (:func:`encode_run` / :func:`decode_runs`). A term's postings in the sessions a query searches are
read with one range scan and decoded by numpy, runs of the same widths together, without per-posting Python. A
query scoped to some sessions reads only their runs: its cost follows the postings of the searched sessions,
not the memory.

Writes are log-structured: each write appends one run per (field, term, session) it touches (``executemany``;
O(postings written)), and every ``COMPACT_EVERY``-th write, the keys it touched that gathered ``MERGE_RUNS``
small runs have them merged into runs of up to ``RUN_SIZE`` postings (found by one join against the keys, a
read: no bookkeeping row is written per key). Small runs are always the newest (doc ids only grow), so a merge
keeps doc order and rewrites only the tail of a key.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RUN_SIZE = 1024  # postings per merged run (6 KB)
MERGE_RUNS = 8  # small runs of one key that trigger a merge
COMPACT_EVERY = 8  # writes between two compaction checks
DOC = np.dtype("<u4")
TF = np.dtype("<u2")
MAX_TF = 65535
CHUNK = 500  # SQL variables per IN list


def schema(prefix: str) -> list[str]:
    return [
        f"CREATE TABLE IF NOT EXISTS {prefix}_post(field INTEGER NOT NULL, term INTEGER NOT NULL, "
        "session INTEGER NOT NULL, first INTEGER NOT NULL, n INTEGER NOT NULL, docs BLOB NOT NULL, "
        "tfs BLOB NOT NULL, PRIMARY KEY(field, term, session, first)) WITHOUT ROWID",
    ]


def drop(prefix: str) -> list[str]:
    return [f"DROP TABLE IF EXISTS {prefix}_post"]


def encode_run(docs: np.ndarray, tfs: np.ndarray) -> tuple[bytes, bytes]:
    """The BLOBs of one run (``docs`` ascending int64, ``tfs`` counts): narrow encodings when they fit."""
    gaps = np.diff(docs, prepend=docs[0])
    encoded_docs = gaps.astype("<u2").tobytes() if gaps.max(initial=0) < 65536 else docs.astype(DOC).tobytes()
    counts = np.minimum(tfs, MAX_TF)
    encoded_tfs = counts.astype("u1").tobytes() if counts.max(initial=0) < 256 else counts.astype(TF).tobytes()
    return encoded_docs, encoded_tfs


def encode_runs(
    field: np.ndarray, term: np.ndarray, session: np.ndarray, docs: np.ndarray, tfs: np.ndarray, starts: np.ndarray
) -> list[tuple[int, int, int, int, int, bytes, bytes]]:
    """The rows ``(field, term, session, first, n, docs, tfs)`` of postings sorted by key then doc, whose keys start
    at ``starts``: each key cut into runs of up to ``RUN_SIZE``, every run encoded as :func:`encode_run` does (same
    bytes) but all at once — a batch writes one run per key it touches, hundreds of thousands of tiny runs in a
    bulk projection, and per-run NumPy calls cost more than the postings themselves."""
    size = docs.size
    lengths = np.diff(np.append(starts, size))
    key_of = np.repeat(np.arange(starts.size), lengths)
    offset = np.arange(size) - starts[key_of]
    runs = np.flatnonzero(offset % RUN_SIZE == 0)  # each key's start, then every RUN_SIZE-th posting of it
    ends = np.append(runs[1:], size)
    gaps = np.diff(docs, prepend=docs[0])
    gaps[runs] = 0
    counts = np.minimum(tfs, MAX_TF)
    wide_gap = np.maximum.reduceat(gaps, runs) >= 65536
    wide_tf = np.maximum.reduceat(counts, runs) >= 256
    gap_bytes, doc_bytes = gaps.astype("<u2").tobytes(), docs.astype(DOC).tobytes()
    tf_narrow, tf_wide = counts.astype("u1").tobytes(), counts.astype(TF).tobytes()
    keys = np.stack((field[runs], term[runs], session[runs], docs[runs]), axis=1).tolist()
    rows = []
    for (f, t, s, first), start, end, wide, wide_count in zip(
        keys, runs.tolist(), ends.tolist(), wide_gap.tolist(), wide_tf.tolist(), strict=True
    ):
        encoded_docs = doc_bytes[4 * start : 4 * end] if wide else gap_bytes[2 * start : 2 * end]
        encoded_tfs = tf_wide[2 * start : 2 * end] if wide_count else tf_narrow[start:end]
        rows.append((f, t, s, first, end - start, encoded_docs, encoded_tfs))
    return rows


def decode_runs(runs: Sequence[tuple[int, int, bytes, bytes]]) -> tuple[np.ndarray, np.ndarray]:
    """Docs (int64) and tfs (float64) of ``(first, n, docs, tfs)`` runs, concatenated (not in run order: runs of
    the same widths are decoded together)."""
    if not runs:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    firsts, sizes, doc_blobs, tf_blobs = zip(*runs, strict=True)
    return decode_columns(firsts, sizes, doc_blobs, tf_blobs)


FEW_RUNS = 4  # up to this many runs, each is decoded on its own


def _decode_run(first: int, n: int, docs: bytes, tfs: bytes) -> tuple[np.ndarray, np.ndarray]:
    if len(docs) == 2 * n:
        decoded = np.cumsum(np.frombuffer(docs, dtype="<u2"), dtype=np.int64) + first
    else:
        decoded = np.frombuffer(docs, dtype=DOC).astype(np.int64)
    return decoded, np.frombuffer(tfs, dtype="u1" if len(tfs) == n else TF).astype(np.float64)


def decode_columns(
    firsts: Sequence[int], sizes: Sequence[int], doc_blobs: Sequence[bytes], tf_blobs: Sequence[bytes]
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`decode_runs` over the columns of the runs (as ``zip(*rows)`` gives them): a whole-memory query
    reads thousands of runs per term, and a Python step per run cost more than decoding their postings."""
    count = len(sizes)
    if not count:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    if count <= FEW_RUNS:  # a session-scoped query: a few NumPy calls per run beat the grouping below
        parts = [_decode_run(*run) for run in zip(firsts, sizes, doc_blobs, tf_blobs, strict=True)]
        if count == 1:
            return parts[0]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    n = np.fromiter(sizes, dtype=np.int64, count=count)
    gaps = (np.fromiter(map(len, doc_blobs), dtype=np.int64, count=count) == 2 * n).astype(np.int64)
    narrow_tf = (np.fromiter(map(len, tf_blobs), dtype=np.int64, count=count) == n).astype(np.int64)
    doc_parts, tf_parts = [], []
    run_firsts = None
    widths = 2 * gaps + narrow_tf  # 3: gaps, one-byte counts; 2: gaps, two-byte; 1: uint32 docs, one-byte; 0
    codes = sorted(set(widths.tolist()))
    for code in codes:
        gap_width, narrow = code >= 2, code % 2 == 1
        if len(codes) == 1:  # the usual case: every run of the same widths
            same, doc_part, tf_part = np.arange(count), doc_blobs, tf_blobs
        else:
            same = np.flatnonzero(widths == code)
            chosen = same.tolist()
            doc_part, tf_part = [doc_blobs[i] for i in chosen], [tf_blobs[i] for i in chosen]
        blob = b"".join(doc_part)
        if gap_width:
            if run_firsts is None:
                run_firsts = np.fromiter(firsts, dtype=np.int64, count=count)
            values = np.frombuffer(blob, dtype="<u2").astype(np.int64)
            total = np.cumsum(values)
            group_sizes = n[same]
            starts = np.concatenate(([0], np.cumsum(group_sizes)[:-1]))
            before = total[starts] - values[starts]  # the running sum up to each run's start
            doc_parts.append(total - np.repeat(before - run_firsts[same], group_sizes))
        else:
            doc_parts.append(np.frombuffer(blob, dtype=DOC).astype(np.int64))
        width = "u1" if narrow else TF
        tf_parts.append(np.frombuffer(b"".join(tf_part), dtype=width).astype(np.float64))
    return np.concatenate(doc_parts), np.concatenate(tf_parts)


@dataclass
class TermPostings:
    """One term's postings in one field, doc ids ascending within each session (not across sessions)."""

    docs: np.ndarray  # uint32 -> int64 on read
    tfs: np.ndarray  # float64


class PostingStore:
    """Reads and writes the runs of one index (table ``<prefix>_post``)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    # ------------------------------------------------------------------ writing
    def append_arrays(
        self, db: sqlite3.Connection, field: np.ndarray, term: np.ndarray, session: np.ndarray, doc: np.ndarray,
        tf: np.ndarray, *, compact: bool = False,
    ) -> None:  # fmt: skip
        """Append postings given as parallel arrays (one per posting): one new run per (field, term, session),
        docs ascending and greater than any doc already stored under that key; with ``compact``, then merge the
        touched keys that gathered ``MERGE_RUNS`` small runs."""
        if doc.size == 0:
            return
        order = np.lexsort((doc, session, term, field))
        field, term, session = field[order], term[order], session[order]
        docs = doc[order].astype(np.int64)
        tfs = tf[order].astype(np.int64)
        change = np.flatnonzero((np.diff(field) != 0) | (np.diff(term) != 0) | (np.diff(session) != 0)) + 1
        starts = np.concatenate(([0], change))
        rows = encode_runs(field, term, session, docs, tfs, starts)
        db.executemany(f"INSERT INTO {self.prefix}_post VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        if compact:
            self.compact(db, np.stack((field[starts], term[starts], session[starts]), axis=1).tolist())

    def compact(self, db: sqlite3.Connection, keys: list[list[int]]) -> None:
        """Merge the small runs of those ``keys`` that have ``MERGE_RUNS`` of them or more."""
        p = self.prefix
        db.execute("CREATE TEMP TABLE IF NOT EXISTS touched_keys(field INTEGER, term INTEGER, session INTEGER)")
        db.execute("DELETE FROM touched_keys")
        db.executemany("INSERT INTO touched_keys VALUES (?, ?, ?)", keys)
        crowded = db.execute(
            f"SELECT k.field, k.term, k.session FROM touched_keys k JOIN {p}_post r ON r.field = k.field "
            f"AND r.term = k.term AND r.session = k.session AND r.n < {RUN_SIZE} "
            f"GROUP BY k.field, k.term, k.session HAVING count(*) >= {MERGE_RUNS}"
        ).fetchall()
        db.execute("DELETE FROM touched_keys")
        for key in crowded:
            self._merge(db, key)

    def _merge(self, db: sqlite3.Connection, key: tuple[int, int, int]) -> None:
        p = self.prefix
        rows = db.execute(
            f"SELECT first, n, docs, tfs FROM {p}_post WHERE field = ? AND term = ? AND session = ? AND n < ? "
            "ORDER BY first",
            (*key, RUN_SIZE),
        ).fetchall()
        docs, tfs = decode_runs(rows)
        order = np.argsort(docs, kind="stable")
        db.executemany(
            f"DELETE FROM {p}_post WHERE field = ? AND term = ? AND session = ? AND first = ?",
            [(*key, row[0]) for row in rows],
        )
        self._write_runs(db, key, docs[order], tfs[order].astype(np.int64))

    def _write_runs(self, db: sqlite3.Connection, key: tuple[int, int, int], docs: np.ndarray, tfs: np.ndarray) -> None:
        """Store ``docs``/``tfs`` (ascending) as full runs plus at most one small one."""
        p = self.prefix
        rows = [
            (*key, int(docs[start]), int(min(RUN_SIZE, len(docs) - start)),
             *encode_run(docs[start : start + RUN_SIZE], tfs[start : start + RUN_SIZE]))
            for start in range(0, len(docs), RUN_SIZE)
        ]  # fmt: skip
        db.executemany(f"INSERT INTO {p}_post VALUES (?, ?, ?, ?, ?, ?, ?)", rows)

    def remove(self, db: sqlite3.Connection, field: int, term: int, session: int, doomed: np.ndarray) -> int:
        """Delete the postings of ``doomed`` docs (sorted) under one key; returns how many were removed."""
        p = self.prefix
        key = (field, term, session)
        low, high = int(doomed[0]), int(doomed[-1])
        rows = db.execute(
            f"SELECT first, n, docs, tfs FROM {p}_post WHERE field = ? AND term = ? AND session = ? AND first <= ? "
            "ORDER BY first",
            (*key, high),
        ).fetchall()
        removed = 0
        for run in rows:
            docs, tfs = decode_runs([run])
            if docs[-1] < low:
                continue
            keep = ~np.isin(docs, doomed)
            if keep.all():
                continue
            removed += int((~keep).sum())
            db.execute(
                f"DELETE FROM {p}_post WHERE field = ? AND term = ? AND session = ? AND first = ?", (*key, run[0])
            )
            if keep.any():
                kept_docs, kept_tfs = docs[keep], tfs[keep].astype(np.int64)
                db.execute(
                    f"INSERT INTO {p}_post VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (*key, int(kept_docs[0]), len(kept_docs), *encode_run(kept_docs, kept_tfs)),
                )
        return removed

    def remove_docs(self, db: sqlite3.Connection, session: int, gone: np.ndarray) -> dict[int, list[int]]:
        """Delete every posting of the ``gone`` docs (sorted, all of ``session``); returns ``{term: [postings
        lost per field]}``. Scans the runs of the session's doc range: erasure is rare and needs no forward index."""
        low, high = int(gone[0]), int(gone[-1])
        affected: dict[tuple[int, int], None] = {}
        rows = db.execute(
            f"SELECT field, term, first, n, docs, tfs FROM {self.prefix}_post WHERE session = ? AND first <= ?",
            (session, high),
        )
        for field, term, *run in rows.fetchall():
            found, _ = decode_runs([tuple(run)])  # type: ignore[list-item]
            if found.max() >= low and np.isin(found, gone).any():
                affected[(field, term)] = None
        lost: dict[int, list[int]] = {}
        for field, term in affected:
            counts = lost.setdefault(term, [0, 0])
            while len(counts) <= field:
                counts.append(0)
            counts[field] += self.remove(db, field, term, session, gone)
        return lost

    # ------------------------------------------------------------------ reading
    def read(
        self, db: sqlite3.Connection, field: int, terms: Sequence[int], sessions: Sequence[int] | None
    ) -> dict[int, TermPostings]:
        """Postings of ``terms`` in ``field``, restricted to ``sessions`` (all when None)."""
        if not terms or (sessions is not None and not sessions):
            return {}
        p, unique_terms = self.prefix, list(dict.fromkeys(int(t) for t in terms))
        if sessions is None:  # the whole memory: one range scan per term, no term column to group by
            sql = f"SELECT first, n, docs, tfs FROM {p}_post WHERE field = ? AND term = ?"
            found = {}
            for term in unique_terms:
                rows = db.execute(sql, (field, term)).fetchall()
                if rows:
                    found[term] = TermPostings(*decode_columns(*zip(*rows, strict=True)))
            return found
        # Some sessions: a few runs per term, one statement per CHUNK sessions, grouped in Python.
        term_list = ",".join(map(str, unique_terms))
        runs: dict[int, list[tuple[int, int, bytes, bytes]]] = {}
        for start in range(0, len(sessions), CHUNK):
            session_list = ",".join(str(int(s)) for s in sessions[start : start + CHUNK])
            for term, *run in db.execute(
                f"SELECT term, first, n, docs, tfs FROM {p}_post WHERE field = ? AND term IN ({term_list}) "
                f"AND session IN ({session_list})",
                (field,),
            ):
                runs.setdefault(term, []).append(run)  # type: ignore[arg-type]
        return {term: TermPostings(*decode_runs(runs[term])) for term in unique_terms if term in runs}

    def count(self, db: sqlite3.Connection, field: int, term: int, sessions: Sequence[int] | None) -> int:
        """Documents containing ``term`` in ``field`` within ``sessions`` (all when None)."""
        p = self.prefix
        if sessions is None:
            row = db.execute(f"SELECT sum(n) FROM {p}_post WHERE field = ? AND term = ?", (field, term)).fetchone()
            return int(row[0] or 0)
        total = 0
        for start in range(0, len(sessions), CHUNK):
            session_list = ",".join(str(int(s)) for s in sessions[start : start + CHUNK])
            row = db.execute(
                f"SELECT sum(n) FROM {p}_post WHERE field = ? AND term = ? AND session IN ({session_list})",
                (field, term),
            ).fetchone()
            total += int(row[0] or 0)
        return total

    def occurs(self, db: sqlite3.Connection, field: int, term: int, sessions: Sequence[int] | None) -> bool:
        p = self.prefix
        if sessions is None:
            sql = f"SELECT 1 FROM {p}_post WHERE field = ? AND term = ? LIMIT 1"
            return db.execute(sql, (field, term)).fetchone() is not None
        for start in range(0, len(sessions), CHUNK):
            session_list = ",".join(str(int(s)) for s in sessions[start : start + CHUNK])
            sql = f"SELECT 1 FROM {p}_post WHERE field = ? AND term = ? AND session IN ({session_list}) LIMIT 1"
            if db.execute(sql, (field, term)).fetchone() is not None:
                return True
        return False


def bm25(tf: np.ndarray, lens: np.ndarray, avg: float, weights: np.ndarray, k1: float, b: float) -> np.ndarray:
    """Sum over query terms of weight * tf*(k1+1) / (tf + k1*(1-b+b*len/avg)); weights include IDF."""
    if tf.size == 0:
        return np.zeros(tf.shape[1] if tf.ndim == 2 else 0)
    norm = k1 * (1.0 - b + b * lens / max(avg, 1e-9))
    return (weights[:, None] * tf * (k1 + 1.0) / (tf + norm[None, :])).sum(0)
