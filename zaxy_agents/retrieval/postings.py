"""Postings on disk for the lexical lanes: term -> (doc ids, term frequencies), in SQLite, a few bytes per posting.

Layout (``<prefix>_post``, one row per *run*): ``(field, seg, term, first doc) -> (n, docs, tfs)``. A run holds
postings of one term in one segment — of every session — doc ascending, as LEB128 varints: ``docs`` one code per
posting, ``gap << 1 | (tf > 1)`` (the gap from the previous doc of the run; for the first posting, its offset in the
segment), and ``tfs`` the counts above one, ``tf - 2``, in order (usually empty). A realistic posting takes ~1.4
bytes, and the ~20 bytes of key, header and cell around a row are shared by up to ~``SEAL_BYTES`` of postings. The
layout before (issue 24) kept one run per (term, *session*): rows of ~5 postings at ~29 bytes per row, ~3x larger.

Which session a doc belongs to is kept once per doc, not per posting: ``<prefix>_post_seg(session, seg) -> ranges``
lists the session's docs in the segment as ``(offset, count)`` uint16 pairs of consecutive docs. A read scoped to
some sessions reads their ranges, then its terms' runs in those segments, and keeps the postings inside the ranges.

Segments: ``seg`` is ``doc >> SEGMENT_BITS`` of every posting of the run (a run never spans two). Doc ids only
grow, so a write appends its runs (one per term and ``RUN_BYTES``) in the newest segment's pages; once a write lands
past a segment, no write can reach it any more and it is *sealed*: its runs (one per write that touched a term) are
rewritten as one row per term, or rows of up to ``SEAL_BYTES`` for frequent terms (``_seal``, once per 16,384 docs,
mostly inside SQLite).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zaxy_agents.storage.derived.store import ID_LIST

from . import posting_codec as codec
from . import posting_open
from .posting_codec import (
    decode_columns,
    decode_runs,
    decode_varints,
    encode_columns,
    encode_runs,
    encode_varints,
    range_docs,
    ranges_of,
    run_starts,
    varint_sizes,
)

__all__ = [  # the codec's functions, as the modules and tests that call them through this one know them; its
    # constants are read (and patched by tests) in posting_codec only
    "decode_columns", "decode_runs", "decode_varints", "encode_columns", "encode_runs", "encode_varints",
    "range_docs", "ranges_of", "run_starts", "varint_sizes",
]  # fmt: skip

SEAL_BYTES = 900  # a sealed row holds at most ~this many bytes of postings: under the ~1,000 bytes an index B-tree
# cell of a 4 KB page keeps in the page (beyond, SQLite spills to overflow pages, about half empty)
CHUNK = 500  # SQL variables per IN list


def schema(prefix: str) -> list[str]:
    return [
        f"CREATE TABLE IF NOT EXISTS {prefix}_post(field INTEGER NOT NULL, seg INTEGER NOT NULL, "
        "term INTEGER NOT NULL, first INTEGER NOT NULL, n INTEGER NOT NULL, docs BLOB NOT NULL, tfs BLOB NOT NULL, "
        "PRIMARY KEY(field, seg, term, first)) WITHOUT ROWID",
        f"CREATE TABLE IF NOT EXISTS {prefix}_post_seg(session INTEGER NOT NULL, seg INTEGER NOT NULL, "
        "ranges BLOB NOT NULL, PRIMARY KEY(session, seg)) WITHOUT ROWID",
        *posting_open.schema(prefix),
    ]


def drop(prefix: str) -> list[str]:
    return [f"DROP TABLE IF EXISTS {p}" for p in (f"{prefix}_post", f"{prefix}_post_seg")] + posting_open.drop(prefix)


@dataclass
class Scope:
    """The docs of some sessions, as sorted disjoint ``[low, high)`` doc ranges, by segment."""

    segments: list[int]
    lows: np.ndarray
    highs: np.ndarray

    def holds(self, docs: np.ndarray) -> np.ndarray:
        where = np.searchsorted(self.lows, docs, side="right") - 1
        return (where >= 0) & (docs < self.highs[np.maximum(where, 0)])


@dataclass
class TermPostings:
    """One term's postings in one field, doc ids ascending."""

    docs: np.ndarray  # int64
    tfs: np.ndarray  # float64


RUNS_PER_INSERT = 100  # rows per multi-row INSERT (700 SQL variables)
RUN_VALUES = "(?, ?, ?, ?, ?, ?, ?)"  # the placeholders of one run's row


def _insert_runs(db: sqlite3.Connection, sql: str, rows: list[tuple[Any, ...]], values: str = RUN_VALUES) -> None:
    """Run ``sql`` (``INSERT ... VALUES``) over ``rows`` in this order, ``RUNS_PER_INSERT`` per statement: one SQLite
    step per 100 rows costs 0.6-0.7x the CPU of an ``executemany`` of single rows."""
    full = len(rows) - len(rows) % RUNS_PER_INSERT
    if full:
        width = values.count("?") * RUNS_PER_INSERT
        flat = [value for row in rows[:full] for value in row]
        db.executemany(
            f"{sql} " + ",".join([values] * RUNS_PER_INSERT),
            [flat[start : start + width] for start in range(0, len(flat), width)],
        )
    if full < len(rows):
        db.executemany(f"{sql} {values}", rows[full:])


def insert_columns(db: sqlite3.Connection, sql: str, columns: Sequence[list[Any]]) -> None:
    """``sql`` (``INSERT ... VALUES``) over rows given as columns, ``RUNS_PER_INSERT`` rows per statement, in order
    (rows get their ids in that order, as with one insert per row). The parameters are interleaved by slice
    assignment (``flat[k::width] = column``, at C speed) instead of a tuple per row and a comprehension over every
    value (:func:`_insert_runs`; ~15 % of a bulk write's posting CPU)."""
    width, count = len(columns), len(columns[0])
    if not count:
        return
    values = "(" + ", ".join("?" * width) + ")"
    flat: list[Any] = [None] * (width * count)
    for k, column in enumerate(columns):
        flat[k::width] = column
    full = count - count % RUNS_PER_INSERT
    if full:
        step = width * RUNS_PER_INSERT
        db.executemany(
            f"{sql} " + ",".join([values] * RUNS_PER_INSERT),
            [flat[at : at + step] for at in range(0, full * width, step)],
        )
    if full < count:
        rest = flat[full * width :]
        db.executemany(f"{sql} {values}", [rest[at : at + width] for at in range(0, len(rest), width)])


class PostingStore:
    """Reads and writes the runs of one index (tables ``<prefix>_post`` and ``<prefix>_post_seg``)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    # ------------------------------------------------------------------ writing
    def append_arrays(
        self, db: sqlite3.Connection, field: np.ndarray, term: np.ndarray, session: np.ndarray, doc: np.ndarray,
        tf: np.ndarray,
    ) -> None:  # fmt: skip
        """Append postings given as parallel arrays (one per posting): every doc greater than any doc already
        stored; one open row per (field, seg) (:mod:`.posting_open`), its runs cut per (term, ``RUN_BYTES``). Once a
        write lands past a segment, that segment is sealed (:meth:`_seal`)."""
        if doc.size == 0:
            return
        docs = np.asarray(doc, dtype=np.int64)
        self._add_sessions(db, np.asarray(session, dtype=np.int64), docs)
        field, term, tfs = (np.asarray(a, dtype=np.int64) for a in (field, term, tf))
        seg = docs >> codec.SEGMENT_BITS
        order = np.lexsort((docs, term, seg, field))
        field, seg, term, docs, tfs = field[order], seg[order], term[order], docs[order], tfs[order]
        runs = run_starts(_key_starts(field, seg, term), docs, tfs)
        db.executemany(
            f"INSERT INTO {self.prefix}_post_open VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            posting_open.encode_rows(field, seg, term, docs, tfs, runs),
        )
        self._seal_before(db, int(seg[0]) if field[0] == field[-1] else int(seg.min()))

    def _seal_before(self, db: sqlite3.Connection, lowest: int) -> None:
        """Seal every segment below ``lowest`` not sealed yet (recorded in ``<prefix>_post_seg`` under session -1):
        no write can reach them any more (doc ids only grow)."""
        p = self.prefix
        row = db.execute(f"SELECT max(seg) FROM {p}_post_seg WHERE session = -1").fetchone()
        done = -1 if row[0] is None else int(row[0])
        for seg in range(done + 1, lowest):
            for field in self._fields(db, f"{p}_post_open"):
                self._seal(db, field, seg)
            db.execute(f"INSERT OR IGNORE INTO {p}_post_seg VALUES (-1, ?, x'')", (seg,))

    def _seal(self, db: sqlite3.Connection, field: int, seg: int) -> None:
        """Rewrite the open rows of ``field`` in segment ``seg`` — one per write — as one row per term, or rows of up
        to ``SEAL_BYTES`` for a frequent term (a row past ~1,000 bytes would spill into half-empty overflow pages):
        :func:`.posting_open.sealed_rows`."""
        rows = posting_open.read_rows(db, self.prefix, field, [seg])
        if not rows:
            return
        insert_columns(db, f"INSERT INTO {self.prefix}_post VALUES", posting_open.sealed_rows(field, rows, SEAL_BYTES))
        db.execute(f"DELETE FROM {self.prefix}_post_open WHERE field = ? AND seg = ?", (field, seg))

    def _add_sessions(self, db: sqlite3.Connection, session: np.ndarray, docs: np.ndarray) -> None:
        """Record which session each doc belongs to: ``(offset, count)`` ranges appended to ``<prefix>_post_seg``."""
        low = int(docs.min())
        span = int(docs.max()) - low + 1
        if span <= 4 * docs.size:  # a batch's docs are consecutive: mark them instead of sorting the postings
            owner = np.full(span, -1, dtype=np.int64)
            owner[docs - low] = session
            owned = np.flatnonzero(owner >= 0)
            sessions, owned = owner[owned], owned + low
        else:
            owned, where = np.unique(docs, return_index=True)
            sessions = session[where]
        if sessions.size > 1 and not bool((np.diff(sessions) >= 0).all()):
            order = np.argsort(sessions, kind="stable")
            sessions, owned = sessions[order], owned[order]
        segs = owned >> codec.SEGMENT_BITS
        offsets = owned - (segs << codec.SEGMENT_BITS)
        group = np.concatenate(([True], (np.diff(sessions) != 0) | (np.diff(segs) != 0)))
        breaks = group | np.concatenate(([True], np.diff(offsets) != 1))
        starts = np.flatnonzero(breaks)
        counts = np.diff(np.append(starts, owned.size))
        data = np.stack((offsets[starts], counts), axis=1).astype(codec.RANGE).tobytes()
        heads = np.flatnonzero(group)
        first_range = np.searchsorted(starts, heads)
        last_range = np.append(first_range[1:], starts.size)
        rows = [
            (s, g, data[4 * low : 4 * high])
            for s, g, low, high in zip(
                sessions[heads].tolist(), segs[heads].tolist(), first_range.tolist(), last_range.tolist(), strict=True
            )
        ]
        db.executemany(
            f"INSERT INTO {self.prefix}_post_seg VALUES (?, ?, ?) "
            "ON CONFLICT(session, seg) DO UPDATE SET ranges = CAST(ranges || excluded.ranges AS BLOB)",  # || makes text
            rows,
        )

    def remove_docs(self, db: sqlite3.Connection, session: int, gone: np.ndarray) -> dict[int, list[int]]:
        """Delete every posting of the ``gone`` docs (sorted, all of ``session``); returns ``{term: [postings
        lost per field]}``. Scans the runs of the segments of those docs: erasure is rare and needs no forward
        index."""
        p = self.prefix
        gone = np.asarray(gone, dtype=np.int64)
        lost: dict[int, list[int]] = {}
        segments = gone >> codec.SEGMENT_BITS
        for seg in np.unique(segments).tolist():
            doomed = gone[segments == seg]
            for field in self._fields(db, f"{p}_post"):
                self._remove_in(db, field, seg, doomed, lost)
            for field in self._fields(db, f"{p}_post_open"):
                posting_open.remove(db, p, field, seg, doomed, lost)
            row = db.execute(f"SELECT ranges FROM {p}_post_seg WHERE session = ? AND seg = ?", (session, seg))
            found = row.fetchone()
            if found is None:
                continue
            owned = range_docs(seg, found[0])
            kept = owned[~np.isin(owned, doomed)]
            if kept.size:
                db.execute(
                    f"UPDATE {p}_post_seg SET ranges = ? WHERE session = ? AND seg = ?",
                    (ranges_of(kept - (seg << codec.SEGMENT_BITS)), session, seg),
                )
            else:
                db.execute(f"DELETE FROM {p}_post_seg WHERE session = ? AND seg = ?", (session, seg))
        return lost

    def _fields(self, db: sqlite3.Connection, table: str) -> list[int]:
        """The fields ``table`` holds rows of (one index seek per field)."""
        fields: list[int] = []
        while True:
            row = db.execute(
                f"SELECT field FROM {table} WHERE field > ? ORDER BY field LIMIT 1",
                (fields[-1] if fields else -1,),
            ).fetchone()
            if row is None:
                return fields
            fields.append(int(row[0]))

    def _remove_in(
        self, db: sqlite3.Connection, field: int, seg: int, doomed: np.ndarray, lost: dict[int, list[int]]
    ) -> None:
        """Remove ``doomed`` docs from the runs of ``field`` in segment ``seg``."""
        p = self.prefix
        rows = db.execute(f"SELECT term, first, n, docs, tfs FROM {p}_post WHERE field = ? AND seg = ?", (field, seg))
        rows = rows.fetchall()
        if not rows:
            return
        terms, firsts, sizes, doc_blobs, tf_blobs = zip(*rows, strict=True)
        docs, tfs = decode_columns([seg] * len(rows), sizes, doc_blobs, tf_blobs)
        n = np.array(sizes, dtype=np.int64)
        row_of = np.repeat(np.arange(n.size), n)
        hit = np.isin(docs, doomed)
        if not hit.any():
            return
        touched = np.unique(row_of[hit])
        term_ids = np.array(terms, dtype=np.int64)
        posting_open.count_lost(lost, field, term_ids[row_of[hit]])
        db.executemany(
            f"DELETE FROM {p}_post WHERE field = ? AND seg = ? AND term = ? AND first = ?",
            [(field, seg, terms[i], firsts[i]) for i in touched.tolist()],
        )
        keep = np.isin(row_of, touched) & ~hit
        if not keep.any():
            return
        kept_rows = row_of[keep]
        starts = np.flatnonzero(np.concatenate(([True], np.diff(kept_rows) != 0)))
        runs = encode_runs(docs[keep], tfs[keep].astype(np.int64), starts)
        owners = term_ids[kept_rows[starts]].tolist()
        opened = (
            seg + 1
        ) << codec.SEGMENT_BITS  # an open run stays open (under its key), a full one takes its new first
        keys = [
            firsts[i] if firsts[i] == opened else run[0]
            for i, run in zip(kept_rows[starts].tolist(), runs, strict=True)
        ]
        _insert_runs(
            db,
            f"INSERT INTO {p}_post VALUES",
            [(field, seg, t, k, *run[1:]) for t, k, run in zip(owners, keys, runs, strict=True)],
        )

    # ------------------------------------------------------------------ reading
    def segments(self, db: sqlite3.Connection, field: int) -> list[int]:
        """Every segment that may hold runs of ``field``."""
        row = db.execute(f"SELECT seg FROM {self.prefix}_post WHERE field = ? ORDER BY seg DESC LIMIT 1", (field,))
        last = row.fetchone()
        return list(range(int(last[0]) + 1)) if last else []

    def scope(self, db: sqlite3.Connection, sessions: Sequence[int]) -> Scope:
        """The docs of ``sessions``, from their ranges."""
        rows = db.execute(
            f"SELECT seg, ranges FROM {self.prefix}_post_seg WHERE session IN {ID_LIST}",
            (json.dumps([int(s) for s in sessions]),),
        ).fetchall()
        if not rows:
            return Scope([], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        segs, blobs = zip(*rows, strict=True)
        pairs = np.frombuffer(b"".join(blobs), dtype=codec.RANGE).reshape(-1, 2).astype(np.int64)
        per_row = np.fromiter((len(b) // 4 for b in blobs), dtype=np.int64, count=len(blobs))
        lows = pairs[:, 0] + (np.repeat(np.array(segs, dtype=np.int64), per_row) << codec.SEGMENT_BITS)
        order = np.argsort(lows, kind="stable")
        return Scope(sorted(set(segs)), lows[order], (lows + pairs[:, 1])[order])

    def read(
        self,
        db: sqlite3.Connection,
        field: int,
        terms: Sequence[int],
        sessions: Sequence[int] | None,
        listed: dict[tuple[str, int], list[tuple[int, int, int]]] | None = None,
    ) -> dict[int, TermPostings]:
        """Postings of ``terms`` in ``field``, restricted to ``sessions`` (all when None); docs ascending: the sealed
        segments' rows, then the open rows (:mod:`.posting_open`; their docs are the newest). ``listed``: the open
        rows' keys, kept by a caller that knows the main tables unchanged (:func:`.posting_open.read_rows`)."""
        if not terms or (sessions is not None and not sessions):
            return {}
        p, unique_terms = self.prefix, list(dict.fromkeys(int(t) for t in terms))
        if sessions is None:  # the whole memory: one range scan per segment and term
            segs = json.dumps(self.segments(db, field))
            sql = f"SELECT seg, n, docs, tfs FROM {p}_post WHERE field = ? AND seg IN {ID_LIST} AND term = ?"
            opened = posting_open.gather(posting_open.read_rows(db, p, field, None, listed), unique_terms)
            found = {}
            for term in unique_terms:
                rows = db.execute(sql, (field, segs, term)).fetchall()
                more = opened.get(term)
                if not rows and more is None:
                    continue
                docs, tfs = decode_columns(*zip(*rows, strict=True)) if rows else (None, None)
                if more is not None:
                    docs = np.concatenate(more[0] if docs is None else [docs, *more[0]])
                    tfs = np.concatenate(more[1] if tfs is None else [tfs, *more[1]])
                found[term] = TermPostings(*_ascending(docs, tfs))
            return found
        scope = self.scope(db, sessions)
        if not scope.segments:
            return {}
        rows = db.execute(
            f"SELECT term, seg, n, docs, tfs FROM {p}_post WHERE field = ? AND seg IN {ID_LIST} AND term IN {ID_LIST}",
            (field, json.dumps(scope.segments), json.dumps(unique_terms)),
        ).fetchall()
        doc_parts, tf_parts, term_parts = [], [], []
        if rows:
            owners, segs, sizes, doc_blobs, tf_blobs = zip(*rows, strict=True)
            docs, tfs = decode_columns(segs, sizes, doc_blobs, tf_blobs)
            doc_parts.append(docs)
            tf_parts.append(tfs)
            term_parts.append(np.repeat(np.array(owners, dtype=np.int64), np.array(sizes, dtype=np.int64)))
        for term, (docs_of, tfs_of) in posting_open.gather(
            posting_open.read_rows(db, p, field, scope.segments, listed), unique_terms
        ).items():
            doc_parts += docs_of
            tf_parts += tfs_of
            term_parts += [np.full(part.size, term, dtype=np.int64) for part in docs_of]
        if not doc_parts:
            return {}
        docs, tfs, term_of = (np.concatenate(parts) for parts in (doc_parts, tf_parts, term_parts))
        inside = scope.holds(docs)
        docs, tfs, term_of = docs[inside], tfs[inside], term_of[inside]
        if not docs.size:
            return {}
        order = np.lexsort((docs, term_of))
        docs, tfs, term_of = docs[order], tfs[order], term_of[order]
        cuts = np.flatnonzero(np.diff(term_of)) + 1
        bounds = zip(np.concatenate(([0], cuts)).tolist(), np.append(cuts, docs.size).tolist(), strict=True)
        return {int(term_of[low]): TermPostings(docs[low:high], tfs[low:high]) for low, high in bounds}

    def sample(self, db: sqlite3.Connection, field: int, term: int, limit: int) -> list[tuple[int, int, bytes, bytes]]:
        """Up to ``limit`` runs ``(seg, n, docs, tfs)`` of ``term`` anywhere in the index (oldest segments first), for
        :func:`decode_runs`."""
        sql = f"SELECT seg, n, docs, tfs FROM {self.prefix}_post WHERE field = ? AND seg IN {ID_LIST} AND term = ? "
        found = db.execute(sql + f"LIMIT {int(limit)}", (field, json.dumps(self.segments(db, field)), term))
        runs: list[tuple[int, int, bytes, bytes]] = found.fetchall()
        for row in posting_open.read_rows(db, self.prefix, field) if len(runs) < limit else ():
            runs += row.runs(int(term))[: limit - len(runs)]
            if len(runs) >= limit:
                break
        return runs

    def count(self, db: sqlite3.Connection, field: int, term: int, sessions: Sequence[int] | None) -> int:
        """Documents containing ``term`` in ``field`` within ``sessions`` (all when None)."""
        if sessions is None:
            row = db.execute(
                f"SELECT sum(n) FROM {self.prefix}_post WHERE field = ? AND seg IN {ID_LIST} AND term = ?",
                (field, json.dumps(self.segments(db, field)), term),
            ).fetchone()
            wanted = np.array([int(term)], dtype=np.int64)
            opened = sum(
                int(high[0] - low[0])
                for low, high in (row.bounds(wanted) for row in posting_open.read_rows(db, self.prefix, field))
            )
            return int(row[0] or 0) + opened
        found = self.read(db, field, [term], sessions).get(int(term))
        return 0 if found is None else int(found.docs.size)

    def occurs(self, db: sqlite3.Connection, field: int, term: int, sessions: Sequence[int] | None) -> bool:
        if sessions is None:
            return bool(self.sample(db, field, term, 1))
        return self.count(db, field, term, sessions) > 0


def _key_starts(field: np.ndarray, seg: np.ndarray, term: np.ndarray) -> np.ndarray:
    change = (np.diff(field) != 0) | (np.diff(seg) != 0) | (np.diff(term) != 0)
    return np.concatenate(([0], np.flatnonzero(change) + 1))


def _ascending(docs: np.ndarray, tfs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Runs read in key order are already ascending; sorted here only if SQLite returned them otherwise."""
    if docs.size > 1 and not bool((np.diff(docs) > 0).all()):
        order = np.argsort(docs, kind="stable")
        return docs[order], tfs[order]
    return docs, tfs


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
