"""Postings on disk for the lexical lanes: term -> (doc ids, term frequencies), per session, in SQLite.

Layout (``<prefix>_post``, one row per *run*): ``(field, seg, term, session, first doc) -> (n, docs, tfs)``. ``docs``
holds the gaps from the previous doc as uint16 (the first gap from ``first`` is 0) when every gap fits, else the
doc ids as uint32; ``tfs`` is uint8 when every count fits, else uint16 — the width follows from the BLOB length
and ``n`` (:func:`encode_run` / :func:`decode_runs`). A term's postings in the sessions a query searches are
read with one range scan and decoded by numpy, runs of the same widths together, without per-posting Python. A
query scoped to some sessions reads only their runs: its cost follows the postings of the searched sessions,
not the memory.

Segments: ``seg`` is ``doc >> SEGMENT_BITS`` of every posting in the run (a run never spans two segments). Doc ids
only grow, so a write lands in the newest segment's pages: with the segment ahead of the term in the key, a
1,000-event batch (~19k runs, one per term it holds) dirties the pages of one segment (~16k events' postings)
instead of pages all over the table — without it, each commit of a bulk projection or a rebuild at 100k events
rewrote most of the table's leaf pages into the WAL (and CPU per event grew ~30 % from 10k to 100k). A reader
visits the segments in key order: a whole-memory read seeks once per segment and term; a session-scoped read
asks ``<prefix>_post_seg`` (which segments hold postings of which session) and reads only those.

Writes are log-structured: each write appends one run per (field, seg, term, session) it touches
(``executemany``; O(postings written)), and every ``COMPACT_EVERY``-th write, the keys it touched that gathered
``MERGE_RUNS`` small runs have them merged into runs of up to ``RUN_SIZE`` postings (found by one join against the
keys, a read: no bookkeeping row is written per key). Small runs are always the newest (doc ids only grow), so a
merge keeps doc order and rewrites only the tail of a key.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

RUN_SIZE = 1024  # postings per merged run (6 KB)
MERGE_RUNS = 8  # small runs of one key that trigger a merge
COMPACT_EVERY = 8  # writes between two compaction checks
DOC = np.dtype("<u4")
TF = np.dtype("<u2")
MAX_TF = 65535
CHUNK = 500  # SQL variables per IN list
SEGMENT_BITS = 14  # a segment holds the postings of 16,384 consecutive doc ids
FEW_SESSIONS = 16  # up to this many sessions, a scoped read finds their segments in a subquery
_ZERO_GAP = bytes(2)  # the docs BLOB of a one-posting run: its gap from its own first doc, as uint16
_ONE_BYTE = [bytes((value,)) for value in range(256)]  # the tfs BLOB of a one-posting run with a one-byte count


def schema(prefix: str) -> list[str]:
    return [
        f"CREATE TABLE IF NOT EXISTS {prefix}_post(field INTEGER NOT NULL, seg INTEGER NOT NULL, "
        "term INTEGER NOT NULL, session INTEGER NOT NULL, first INTEGER NOT NULL, n INTEGER NOT NULL, "
        "docs BLOB NOT NULL, tfs BLOB NOT NULL, PRIMARY KEY(field, seg, term, session, first)) WITHOUT ROWID",
        f"CREATE TABLE IF NOT EXISTS {prefix}_post_seg(session INTEGER NOT NULL, seg INTEGER NOT NULL, "
        "PRIMARY KEY(session, seg)) WITHOUT ROWID",
    ]


def drop(prefix: str) -> list[str]:
    return [f"DROP TABLE IF EXISTS {prefix}_post", f"DROP TABLE IF EXISTS {prefix}_post_seg"]


def encode_run(docs: np.ndarray, tfs: np.ndarray) -> tuple[bytes, bytes]:
    """The BLOBs of one run (``docs`` ascending int64, ``tfs`` counts): narrow encodings when they fit."""
    gaps = np.diff(docs, prepend=docs[0])
    encoded_docs = gaps.astype("<u2").tobytes() if gaps.max(initial=0) < 65536 else docs.astype(DOC).tobytes()
    counts = np.minimum(tfs, MAX_TF)
    encoded_tfs = counts.astype("u1").tobytes() if counts.max(initial=0) < 256 else counts.astype(TF).tobytes()
    return encoded_docs, encoded_tfs


def encode_runs(
    field: np.ndarray, term: np.ndarray, session: np.ndarray, docs: np.ndarray, tfs: np.ndarray, starts: np.ndarray,
    *, segments: bool = False,
) -> list[tuple[Any, ...]]:  # fmt: skip
    """The rows ``(field, term, session, first, n, docs, tfs)`` of postings sorted by key then doc, whose keys start
    at ``starts``: each key cut into runs of up to ``RUN_SIZE``, every run encoded as :func:`encode_run` does (same
    bytes) but all at once — a batch writes one run per key it touches, hundreds of thousands of tiny runs in a
    bulk projection, and per-run NumPy calls cost more than the postings themselves. With ``segments`` the rows
    are ``(field, seg, term, session, first, n, docs, tfs)`` (``starts`` must then cut keys at segment changes)."""
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
    columns = [field[runs], term[runs], session[runs], docs[runs]]
    if segments:
        columns.insert(1, docs[runs] >> SEGMENT_BITS)
    sizes = ends - runs
    # A run of one posting (most runs of a batch spread over many sessions: one per term and session) has the
    # bytes of a gap of 0 and of its count: shared objects, no slicing. Only the longer or wide ones are sliced.
    docs_column = [_ZERO_GAP] * runs.size
    tfs_column = [_ONE_BYTE[c] for c in np.minimum(counts[runs], 255).tolist()]
    sliced = np.flatnonzero((sizes > 1) | wide_gap | wide_tf).tolist()
    if sliced:
        gap_bytes, doc_bytes = gaps.astype("<u2").tobytes(), docs.astype(DOC).tobytes()
        tf_narrow, tf_wide = counts.astype("u1").tobytes(), counts.astype(TF).tobytes()
        starts_of, ends_of = runs.tolist(), ends.tolist()
        wide_gaps, wide_counts = wide_gap.tolist(), wide_tf.tolist()
        for i in sliced:
            start, end = starts_of[i], ends_of[i]
            docs_column[i] = doc_bytes[4 * start : 4 * end] if wide_gaps[i] else gap_bytes[2 * start : 2 * end]
            tfs_column[i] = tf_wide[2 * start : 2 * end] if wide_counts[i] else tf_narrow[start:end]
    return list(zip(*(c.tolist() for c in columns), sizes.tolist(), docs_column, tfs_column, strict=True))


RUNS_PER_INSERT = 100  # rows per multi-row INSERT (800 SQL variables)
RUN_VALUES = "(?, ?, ?, ?, ?, ?, ?, ?)"  # the placeholders of one run's row


def _insert_runs(db: sqlite3.Connection, table: str, rows: list[tuple[Any, ...]], values: str = RUN_VALUES) -> None:
    """Insert ``rows`` in this order, ``RUNS_PER_INSERT`` per statement (``values``: one row's placeholders): one
    SQLite step per 100 rows instead of one per row costs 0.6-0.7x the CPU of an ``executemany`` of single rows (a
    tail merge over many sessions writes ~100k one-posting runs; a bulk batch ~19k)."""
    full = len(rows) - len(rows) % RUNS_PER_INSERT
    if full:
        flat = list(itertools.chain.from_iterable(rows[:full]))
        width = values.count("?") * RUNS_PER_INSERT
        db.executemany(
            f"INSERT INTO {table} VALUES " + ",".join([values] * RUNS_PER_INSERT),
            [flat[start : start + width] for start in range(0, len(flat), width)],
        )
    if full < len(rows):
        db.executemany(f"INSERT INTO {table} VALUES {values}", rows[full:])


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
    """Reads and writes the runs of one index (tables ``<prefix>_post`` and ``<prefix>_post_seg``)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    # ------------------------------------------------------------------ writing
    def append_arrays(
        self, db: sqlite3.Connection, field: np.ndarray, term: np.ndarray, session: np.ndarray, doc: np.ndarray,
        tf: np.ndarray, *, compact: bool = False,
    ) -> None:  # fmt: skip
        """Append postings given as parallel arrays (one per posting): one new run per (field, seg, term, session),
        docs ascending and greater than any doc already stored under that key; with ``compact``, then merge the
        touched keys that gathered ``MERGE_RUNS`` small runs."""
        if doc.size == 0:
            return
        docs = doc.astype(np.int64)
        seg = docs >> SEGMENT_BITS
        order = np.lexsort((docs, session, term, seg, field))
        field, seg, term, session = field[order], seg[order], term[order], session[order]
        docs, tfs = docs[order], tf[order].astype(np.int64)
        change = (np.diff(field) != 0) | (np.diff(seg) != 0) | (np.diff(term) != 0) | (np.diff(session) != 0)
        starts = np.concatenate(([0], np.flatnonzero(change) + 1))
        rows = encode_runs(field, term, session, docs, tfs, starts, segments=True)
        p = self.prefix
        key_pairs = (session[starts].astype(np.int64) << 32) | seg[starts]  # each key's (session, seg) as one int
        pairs = np.unique(key_pairs)
        # a key whose session had no run in its segment before this write now holds one small run at most: only
        # the keys of sessions already there can have gathered MERGE_RUNS (a batch over many new sessions, e.g.
        # a tail of one-event LangGraph threads, skips the check for nearly all its keys)
        known = self._known_pairs(db, pairs) if compact else None
        _insert_runs(db, f"{p}_post", rows)
        db.executemany(
            f"INSERT OR IGNORE INTO {p}_post_seg VALUES (?, ?)",
            zip((pairs >> 32).tolist(), (pairs & 0xFFFFFFFF).tolist(), strict=True),
        )
        if known is not None and known.size:
            there = np.isin(key_pairs, known)
            keys = np.stack((field[starts], seg[starts], term[starts], session[starts]), axis=1)[there]
            self.compact(db, keys.tolist())

    def _known_pairs(self, db: sqlite3.Connection, pairs: np.ndarray) -> np.ndarray:
        """Which of ``pairs`` (``session << 32 | seg``, unique) already have a row in ``<prefix>_post_seg``."""
        found: list[int] = []
        segs = pairs & 0xFFFFFFFF
        for seg in np.unique(segs).tolist():
            sessions = (pairs[segs == seg] >> 32).tolist()
            for start in range(0, len(sessions), CHUNK):
                part = sessions[start : start + CHUNK]
                found += [
                    (session << 32) | seg
                    for (session,) in db.execute(
                        f"SELECT session FROM {self.prefix}_post_seg WHERE seg = ? "
                        f"AND session IN ({','.join('?' * len(part))})",
                        (seg, *part),
                    )
                ]
        return np.array(found, dtype=np.int64)

    def compact(self, db: sqlite3.Connection, keys: list[list[int]]) -> None:
        """Merge the small runs of those ``(field, seg, term, session)`` keys that have ``MERGE_RUNS`` of them."""
        p = self.prefix
        db.execute(
            "CREATE TEMP TABLE IF NOT EXISTS touched_runs(field INTEGER, seg INTEGER, term INTEGER, session INTEGER)"
        )
        db.execute("DELETE FROM touched_runs")
        _insert_runs(db, "touched_runs", keys, "(?, ?, ?, ?)")  # ~96k keys in a merge over many sessions: 0.46x
        crowded = db.execute(
            f"SELECT k.field, k.seg, k.term, k.session FROM touched_runs k JOIN {p}_post r ON r.field = k.field "
            f"AND r.seg = k.seg AND r.term = k.term AND r.session = k.session AND r.n < {RUN_SIZE} "
            f"GROUP BY k.field, k.seg, k.term, k.session HAVING count(*) >= {MERGE_RUNS}"
        ).fetchall()
        db.execute("DELETE FROM touched_runs")
        for key in crowded:
            self._merge(db, key)

    def _merge(self, db: sqlite3.Connection, key: tuple[int, int, int, int]) -> None:
        p = self.prefix
        rows = db.execute(
            f"SELECT first, n, docs, tfs FROM {p}_post WHERE field = ? AND seg = ? AND term = ? AND session = ? "
            "AND n < ? ORDER BY first",
            (*key, RUN_SIZE),
        ).fetchall()
        docs, tfs = decode_runs(rows)
        order = np.argsort(docs, kind="stable")
        db.executemany(
            f"DELETE FROM {p}_post WHERE field = ? AND seg = ? AND term = ? AND session = ? AND first = ?",
            [(*key, row[0]) for row in rows],
        )
        self._write_runs(db, key, docs[order], tfs[order].astype(np.int64))

    def _write_runs(
        self, db: sqlite3.Connection, key: tuple[int, int, int, int], docs: np.ndarray, tfs: np.ndarray
    ) -> None:
        """Store ``docs``/``tfs`` (ascending, all of the key's segment) as full runs plus at most one small one."""
        p = self.prefix
        rows = [
            (*key, int(docs[start]), int(min(RUN_SIZE, len(docs) - start)),
             *encode_run(docs[start : start + RUN_SIZE], tfs[start : start + RUN_SIZE]))
            for start in range(0, len(docs), RUN_SIZE)
        ]  # fmt: skip
        db.executemany(f"INSERT INTO {p}_post VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def remove(self, db: sqlite3.Connection, field: int, term: int, session: int, doomed: np.ndarray) -> int:
        """Delete the postings of ``doomed`` docs (sorted) under one (field, term, session); returns how many were
        removed."""
        removed = 0
        segs = doomed.astype(np.int64) >> SEGMENT_BITS
        for seg in np.unique(segs).tolist():
            removed += self._remove_key(db, (field, seg, term, session), doomed[segs == seg])
        return removed

    def _remove_key(self, db: sqlite3.Connection, key: tuple[int, int, int, int], doomed: np.ndarray) -> int:
        p = self.prefix
        low, high = int(doomed[0]), int(doomed[-1])
        rows = db.execute(
            f"SELECT first, n, docs, tfs FROM {p}_post WHERE field = ? AND seg = ? AND term = ? AND session = ? "
            "AND first <= ? ORDER BY first",
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
                f"DELETE FROM {p}_post WHERE field = ? AND seg = ? AND term = ? AND session = ? AND first = ?",
                (*key, run[0]),
            )
            if keep.any():
                kept_docs, kept_tfs = docs[keep], tfs[keep].astype(np.int64)
                db.execute(
                    f"INSERT INTO {p}_post VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (*key, int(kept_docs[0]), len(kept_docs), *encode_run(kept_docs, kept_tfs)),
                )
        return removed

    def remove_docs(self, db: sqlite3.Connection, session: int, gone: np.ndarray) -> dict[int, list[int]]:
        """Delete every posting of the ``gone`` docs (sorted, all of ``session``); returns ``{term: [postings
        lost per field]}``. Scans the runs of the session's doc range: erasure is rare and needs no forward index."""
        low, high = int(gone[0]), int(gone[-1])
        segs = ",".join(str(s) for s in range(low >> SEGMENT_BITS, (high >> SEGMENT_BITS) + 1))
        affected: dict[tuple[int, int, int], None] = {}
        rows = db.execute(
            f"SELECT field, seg, term, first, n, docs, tfs FROM {self.prefix}_post WHERE seg IN ({segs}) "
            "AND session = ? AND first <= ?",
            (session, high),
        )
        for field, seg, term, *run in rows.fetchall():
            found, _ = decode_runs([tuple(run)])  # type: ignore[list-item]
            if found.max() >= low and np.isin(found, gone).any():
                affected[(field, seg, term)] = None
        lost: dict[int, list[int]] = {}
        segments = gone.astype(np.int64) >> SEGMENT_BITS
        for field, seg, term in affected:
            counts = lost.setdefault(term, [0, 0])
            while len(counts) <= field:
                counts.append(0)
            counts[field] += self._remove_key(db, (field, seg, term, session), gone[segments == seg])
        return lost

    # ------------------------------------------------------------------ reading
    def segments(self, db: sqlite3.Connection, field: int) -> str:
        """Every segment that may hold runs of ``field``, as an SQL list (``0, 1, ..., last``)."""
        row = db.execute(f"SELECT seg FROM {self.prefix}_post WHERE field = ? ORDER BY seg DESC LIMIT 1", (field,))
        last = row.fetchone()
        return ",".join(map(str, range(int(last[0]) + 1))) if last else ""

    def session_segments(self, db: sqlite3.Connection, sessions: Sequence[int]) -> dict[int, list[int]]:
        """``{seg: [sessions with runs in it]}`` for ``sessions`` (each list ascending)."""
        by_segment: dict[int, list[int]] = {}
        for start in range(0, len(sessions), CHUNK):
            session_list = ",".join(str(int(s)) for s in sessions[start : start + CHUNK])
            for session, seg in db.execute(
                f"SELECT session, seg FROM {self.prefix}_post_seg WHERE session IN ({session_list})"
            ):
                by_segment.setdefault(seg, []).append(session)
        for members in by_segment.values():
            members.sort()
        return by_segment

    def _scoped(self, db: sqlite3.Connection, sessions: Sequence[int]) -> Iterator[tuple[str, str]]:
        """``(segment condition, SQL list of sessions)`` covering the runs of ``sessions``, at most ``CHUNK`` sessions
        each. A few sessions (a question scoped to a thread or a conversation): one statement whose segments come
        from a subquery; many: one statement per segment with the sessions that have runs in it (probes are
        segments x terms x sessions, so listing every segment for every session would multiply them)."""
        if len(sessions) <= FEW_SESSIONS:
            session_list = ",".join(str(int(s)) for s in sessions)
            yield f"IN (SELECT seg FROM {self.prefix}_post_seg WHERE session IN ({session_list}))", session_list
            return
        for seg, members in sorted(self.session_segments(db, sessions).items()):
            for start in range(0, len(members), CHUNK):
                yield f"= {int(seg)}", ",".join(map(str, members[start : start + CHUNK]))

    def read(
        self, db: sqlite3.Connection, field: int, terms: Sequence[int], sessions: Sequence[int] | None
    ) -> dict[int, TermPostings]:
        """Postings of ``terms`` in ``field``, restricted to ``sessions`` (all when None)."""
        if not terms or (sessions is not None and not sessions):
            return {}
        p, unique_terms = self.prefix, list(dict.fromkeys(int(t) for t in terms))
        if sessions is None:  # the whole memory: one range scan per segment and term, no term column to group by
            segs = self.segments(db, field)
            if not segs:
                return {}
            sql = f"SELECT first, n, docs, tfs FROM {p}_post WHERE field = ? AND seg IN ({segs}) AND term = ?"
            found = {}
            for term in unique_terms:
                rows = db.execute(sql, (field, term)).fetchall()
                if rows:
                    found[term] = TermPostings(*decode_columns(*zip(*rows, strict=True)))
            return found
        # Some sessions: a few runs per term, one statement per segment and CHUNK sessions, grouped in Python.
        term_list = ",".join(map(str, unique_terms))
        runs: dict[int, list[tuple[int, int, bytes, bytes]]] = {}
        for seg, session_list in self._scoped(db, sessions):
            for term, *run in db.execute(
                f"SELECT term, first, n, docs, tfs FROM {p}_post WHERE field = ? AND seg {seg} "
                f"AND term IN ({term_list}) AND session IN ({session_list})",
                (field,),
            ):
                runs.setdefault(term, []).append(run)  # type: ignore[arg-type]
        return {term: TermPostings(*decode_runs(runs[term])) for term in unique_terms if term in runs}

    def sample(self, db: sqlite3.Connection, field: int, term: int, limit: int) -> list[tuple[int, int, bytes, bytes]]:
        """Up to ``limit`` runs ``(first, n, docs, tfs)`` of ``term`` anywhere in the index (oldest segments first)."""
        segs = self.segments(db, field)
        if not segs:
            return []
        sql = f"SELECT first, n, docs, tfs FROM {self.prefix}_post WHERE field = ? AND seg IN ({segs}) AND term = ? "
        return db.execute(sql + f"LIMIT {int(limit)}", (field, term)).fetchall()

    def count(self, db: sqlite3.Connection, field: int, term: int, sessions: Sequence[int] | None) -> int:
        """Documents containing ``term`` in ``field`` within ``sessions`` (all when None)."""
        p = self.prefix
        if sessions is None:
            segs = self.segments(db, field)
            if not segs:
                return 0
            row = db.execute(
                f"SELECT sum(n) FROM {p}_post WHERE field = ? AND seg IN ({segs}) AND term = ?", (field, term)
            ).fetchone()
            return int(row[0] or 0)
        total = 0
        for seg, session_list in self._scoped(db, sessions):
            row = db.execute(
                f"SELECT sum(n) FROM {p}_post WHERE field = ? AND seg {seg} AND term = ? "
                f"AND session IN ({session_list})",
                (field, term),
            ).fetchone()
            total += int(row[0] or 0)
        return total

    def occurs(self, db: sqlite3.Connection, field: int, term: int, sessions: Sequence[int] | None) -> bool:
        p = self.prefix
        if sessions is None:
            return bool(self.sample(db, field, term, 1))
        for seg, session_list in self._scoped(db, sessions):
            sql = (
                f"SELECT 1 FROM {p}_post WHERE field = ? AND seg {seg} AND term = ? AND session IN ({session_list}) "
                "LIMIT 1"
            )
            if db.execute(sql, (field, term)).fetchone() is not None:
                return True
        return False


def bm25(tf: np.ndarray, lens: np.ndarray, avg: float, weights: np.ndarray, k1: float, b: float) -> np.ndarray:
    """Sum over query terms of weight * tf*(k1+1) / (tf + k1*(1-b+b*len/avg)); weights include IDF."""
    if tf.size == 0:
        return np.zeros(tf.shape[1] if tf.ndim == 2 else 0)
    norm = k1 * (1.0 - b + b * lens / max(avg, 1e-9))
    if tf.ndim == 2 and tf.flags.f_contiguous and not tf.flags.c_contiguous:
        # The verbatim scorer's terms x docs matrices are Fortran-ordered (gathered doc by doc). NumPy sums such a
        # matrix over terms one column at a time (a loop of a few terms per doc: ~10x slower than whole rows),
        # pairwise from 8 terms on. The same values are computed row-major and added in that same order, row by
        # row: identical scores to the last bit (tests/retrieval/test_bm25_layout.py).
        rows = np.ascontiguousarray(tf)
        return column_sums(weights[:, None] * rows * (k1 + 1.0) / (rows + norm[None, :]))
    return (weights[:, None] * tf * (k1 + 1.0) / (tf + norm[None, :])).sum(0)


def column_sums(rows: np.ndarray, start: int = 0, count: int | None = None) -> np.ndarray:
    """``rows[start:start + count].sum(0)`` as NumPy adds up each column of a Fortran-ordered matrix (its
    ``pairwise_sum``: one running sum under 8 terms, eight interleaved partial sums up to 128, halves beyond), with
    whole rows as the operands: the same additions in the same order, vectorised over the columns."""
    count = rows.shape[0] - start if count is None else count
    if count < 8:
        total = np.full(rows.shape[1], -0.0)
        for row in range(start, start + count):
            total += rows[row]
        return total
    if count <= 128:
        partial = rows[start : start + 8].copy()
        row = start + 8
        end = start + count - count % 8
        while row < end:
            partial += rows[row : row + 8]
            row += 8
        total = (partial[0] + partial[1] + (partial[2] + partial[3])) + (
            partial[4] + partial[5] + (partial[6] + partial[7])
        )
        for row in range(end, start + count):
            total += rows[row]
        return total
    half = count // 2
    half -= half % 8
    return column_sums(rows, start, half) + column_sums(rows, start + half, count - half)
