"""The unsealed segments of a posting index: one row per write and (field, segment), per-term rows only at the seal.

A bulk write of 1,000 realistic events touches ~19,000 (field, segment, term) keys; one B-tree row per key cost
~110 us of CPU per event at SQLite's per-row floor, and the seal rewrote them all 16 writes later anyway (issue 24).
So the newest segments keep a write's runs as ONE row of ``<prefix>_post_open``:
``(field, seg, first) -> (tag, n, terms, docs, tfs)``, where

* ``docs`` / ``tfs`` are the write's runs of that field and segment, their bytes one after the other in (term, doc)
  order: exactly the bytes the runs would hold as rows (:mod:`.posting_codec`). Every run starts with a restart code,
  so the run boundaries are read back from the codes;
* ``terms`` is each run's term id, as varint gaps (ascending);
* ``first`` is the write's lowest doc in that segment (writes' docs never interleave), ``n`` its postings;
* ``tag`` is a 63-bit digest of ``(field, seg, terms, docs, tfs)``: a row's identity, which a rewrite (an erasure)
  changes. Readers keep decoded rows in a process-wide cache under it (:class:`RowCache`), so each row is decoded
  once per process, not once per question, and a row read again is never served stale.

When the writes pass a segment it is *sealed* (:func:`sealed_rows`): its open rows are cut into the rows a per-run
layout would have concatenated — one row per term, or rows of up to ``SEAL_BYTES`` for frequent terms — the same
bytes in the same order, and the open rows are deleted.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import posting_codec as codec
from .posting_codec import decode_varints, encode_stream, encode_varints, run_starts, varint_sizes

CACHE_POSTINGS = 2_000_000  # postings of decoded open rows a process keeps (~14 bytes each with their runs and
# bytes, ~28 MB): a whole open verbatim segment of realistic events (~1.5M postings) and the keyword index's


def schema(prefix: str) -> list[str]:
    return [
        f"CREATE TABLE IF NOT EXISTS {prefix}_post_open(field INTEGER NOT NULL, seg INTEGER NOT NULL, "
        "first INTEGER NOT NULL, tag INTEGER NOT NULL, n INTEGER NOT NULL, terms BLOB NOT NULL, docs BLOB NOT NULL, "
        "tfs BLOB NOT NULL, PRIMARY KEY(field, seg, first)) WITHOUT ROWID"
    ]


def drop(prefix: str) -> list[str]:
    return [f"DROP TABLE IF EXISTS {prefix}_post_open"]


@dataclass(frozen=True)
class OpenRow:
    """One open row, decoded compactly (~6 bytes per posting, ~32 per run, beside its bytes): postings in (term,
    doc) order, and where each run starts among them and in the bytes."""

    seg: int
    run_terms: np.ndarray  # int64, per run, ascending
    run_at: np.ndarray  # posting index where each run starts, then the end
    run_code: np.ndarray  # byte offset of each run in ``doc_blob``, then the end
    run_extra: np.ndarray  # byte offset of each run's counts above one in ``tf_blob``, then the end
    docs: np.ndarray  # int32, ascending within a term
    tfs: np.ndarray  # uint16
    doc_blob: bytes
    tf_blob: bytes

    @property
    def terms(self) -> np.ndarray:
        """Each posting's term (int64)."""
        return np.repeat(self.run_terms, np.diff(self.run_at))

    def bounds(self, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posting index ranges ``[low, high)`` of ``terms`` (sorted or not)."""
        at = self.run_at
        return at[np.searchsorted(self.run_terms, terms, "left")], at[np.searchsorted(self.run_terms, terms, "right")]

    def runs(self, term: int) -> list[tuple[int, int, bytes, bytes]]:
        """The term's runs as ``(seg, n, docs, tfs)`` (for :func:`.posting_codec.decode_runs`)."""
        low = int(np.searchsorted(self.run_terms, term, "left"))
        high = int(np.searchsorted(self.run_terms, term, "right"))
        at, code, extra = (a[low : high + 1].tolist() for a in (self.run_at, self.run_code, self.run_extra))
        return [
            (self.seg, at[k + 1] - at[k], self.doc_blob[code[k] : code[k + 1]], self.tf_blob[extra[k] : extra[k + 1]])
            for k in range(high - low)
        ]


def _tag(field: int, seg: int, terms: bytes, docs: bytes, tfs: bytes) -> int:
    digest = hashlib.blake2b(digest_size=8)
    digest.update(f"{field}:{seg}:{len(terms)}:{len(docs)}:".encode())
    for part in (terms, docs, tfs):
        digest.update(part)
    return int.from_bytes(digest.digest(), "little") >> 1


def _varints(values: np.ndarray) -> bytes:
    return encode_varints(values, varint_sizes(values))


def encode_rows(
    field: np.ndarray, seg: np.ndarray, term: np.ndarray, docs: np.ndarray, tfs: np.ndarray, runs: np.ndarray
) -> list[tuple[Any, ...]]:
    """The open rows of postings sorted by (field, seg, term, doc) with their run starts (:func:`run_starts`): one
    row per (field, seg), its bytes cut from one encoding of every posting."""
    stream = encode_stream(docs, tfs, runs)
    change = np.flatnonzero((np.diff(field) != 0) | (np.diff(seg) != 0)) + 1
    lows, highs = np.concatenate(([0], change)), np.append(change, docs.size)
    run_lows = np.searchsorted(runs, lows)
    run_highs = np.searchsorted(runs, highs)
    rows = []
    for low, high, run_low, run_high in zip(
        lows.tolist(), highs.tolist(), run_lows.tolist(), run_highs.tolist(), strict=True
    ):
        run_terms = term[runs[run_low:run_high]]
        terms = _varints(np.diff(run_terms, prepend=0))
        doc_blob = stream.codes[int(stream.code_at[low]) : int(stream.code_at[high])]
        tf_blob = stream.extra[int(stream.extra_at[low]) : int(stream.extra_at[high])]
        f, s = int(field[low]), int(seg[low])
        first = int(docs[low:high].min())
        rows.append((f, s, first, _tag(f, s, terms, doc_blob, tf_blob), high - low, terms, doc_blob, tf_blob))
    return rows


def decode_row(seg: int, terms: bytes, doc_blob: bytes, tf_blob: bytes) -> OpenRow:
    """An open row's postings and run boundaries (the inverse of :func:`encode_rows`)."""
    raw = np.frombuffer(doc_blob, dtype=np.uint8)
    codes = decode_varints(doc_blob)
    size = codes.size
    restarts = np.flatnonzero(codes & codec.RESTART)  # one per run: a write's run holds one stretch
    run_at = np.append(restarts, size)
    lengths = np.diff(run_at)
    gaps = codes >> 2
    total = np.cumsum(gaps)
    docs = total + np.repeat((seg << codec.SEGMENT_BITS) - (total[restarts] - gaps[restarts]), lengths)
    many = (codes & 1).astype(bool)
    tfs = np.ones(size, dtype=np.uint16)
    run_extra = np.zeros(run_at.size, dtype=np.int64)
    if many.any():
        tfs[many] = decode_varints(tf_blob) + 2
        extra_ends = np.append(0, np.flatnonzero(np.frombuffer(tf_blob, dtype=np.uint8) < 128) + 1)
        run_extra = extra_ends[np.append(0, np.cumsum(many))[run_at]]
    run_code = np.append(0, np.flatnonzero(raw < 128) + 1)[run_at]
    run_terms = np.cumsum(decode_varints(terms))
    return OpenRow(seg, run_terms, run_at, run_code, run_extra, docs.astype(np.int32), tfs, doc_blob, tf_blob)


class RowCache:
    """Decoded open rows by tag, least recently used out past ``CACHE_POSTINGS`` postings (shared by threads)."""

    def __init__(self) -> None:
        self.rows: OrderedDict[int, OpenRow] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def get(self, tag: int) -> OpenRow | None:
        with self.lock:
            row = self.rows.get(tag)
            if row is not None:
                self.rows.move_to_end(tag)
            return row

    def put(self, tag: int, row: OpenRow) -> None:
        for array in (row.run_terms, row.run_at, row.run_code, row.run_extra, row.docs, row.tfs):
            array.flags.writeable = False  # shared between readers
        with self.lock:
            if tag in self.rows:
                return
            self.rows[tag] = row
            self.size += row.docs.size
            while self.size > CACHE_POSTINGS and len(self.rows) > 1:
                _, old = self.rows.popitem(last=False)
                self.size -= old.docs.size


CACHE = RowCache()


def read_rows(
    db: sqlite3.Connection,
    prefix: str,
    field: int,
    segs: list[int] | None = None,
    listed: dict[tuple[str, int], list[tuple[int, int, int]]] | None = None,
) -> list[OpenRow]:
    """The open rows of ``field`` (in ``segs`` when given), in doc order, decoded once per process. ``listed``: the
    rows' keys by ``(prefix, field)``, kept by a caller that knows the main tables unchanged since it filled it (a
    :class:`.posting_cache.PostingCache`): listing the keys of a segment's ~18 open rows of ~2.5 MB read them from
    SQLite at ~1.3 ms of CPU a query at 1M, at every question holding a new term."""
    keys = listed.get((prefix, field)) if listed is not None else None
    if keys is None:
        keys = db.execute(
            f"SELECT seg, first, tag FROM {prefix}_post_open WHERE field = ? ORDER BY seg, first", (field,)
        ).fetchall()
        if listed is not None:
            listed[(prefix, field)] = keys
    if segs is not None:
        wanted = set(segs)
        keys = [key for key in keys if key[0] in wanted]
    found = []
    for seg, first, tag in keys:
        row = CACHE.get(tag)
        if row is None:
            blobs = db.execute(
                f"SELECT terms, docs, tfs FROM {prefix}_post_open WHERE field = ? AND seg = ? AND first = ?",
                (field, seg, first),
            ).fetchone()
            row = decode_row(seg, *blobs)
            CACHE.put(tag, row)
        found.append(row)
    return found


def gather(rows: list[OpenRow], terms: list[int]) -> dict[int, tuple[list[np.ndarray], list[np.ndarray]]]:
    """``term -> ([docs], [tfs])`` of ``terms`` in ``rows`` (int64 / float64, doc ascending: rows in doc order):
    each term's slices of every row joined and converted once."""
    if not rows or not terms:
        return {}
    wanted = np.array(terms, dtype=np.int64)
    pieces: dict[int, list[tuple[OpenRow, int, int]]] = {}
    for row in rows:
        lows, highs = row.bounds(wanted)
        for k in np.flatnonzero(highs > lows).tolist():
            pieces.setdefault(k, []).append((row, int(lows[k]), int(highs[k])))
    found = {}
    for k, parts in pieces.items():
        if len(parts) == 1:
            row, low, high = parts[0]
            docs, tfs = row.docs[low:high], row.tfs[low:high]
        else:
            docs = np.concatenate([row.docs[low:high] for row, low, high in parts])
            tfs = np.concatenate([row.tfs[low:high] for row, low, high in parts])
        found[terms[k]] = ([docs.astype(np.int64)], [tfs.astype(np.float64)])
    return found


def sealed_rows(field: int, rows: list[OpenRow], seal_bytes: int) -> list[list[Any]]:
    """The per-term rows of a segment's open ``rows`` (in doc order), as columns of ``<prefix>_post`` rows: one row
    per term, or for a term whose runs add up to more than ``seal_bytes``, rows of consecutive runs of up to
    ``seal_bytes``: each row the concatenation of its runs' bytes, in doc order (each run starts with a restart
    code, so it decodes as it is). All at once in NumPy but for the frequent terms' cuts; the per-run layout's
    ``GROUP BY term`` with ``group_concat`` inside SQLite cost ~20 us per event on its own."""
    seg = rows[0].seg
    run_terms, run_first, run_n, doc_low, doc_high, tf_low, tf_high = [], [], [], [], [], [], []
    doc_base = tf_base = 0
    for row in rows:
        run_terms.append(row.run_terms)
        run_first.append(row.docs[row.run_at[:-1]].astype(np.int64))
        run_n.append(np.diff(row.run_at))
        doc_low.append(row.run_code[:-1] + doc_base)
        doc_high.append(row.run_code[1:] + doc_base)
        tf_low.append(row.run_extra[:-1] + tf_base)
        tf_high.append(row.run_extra[1:] + tf_base)
        doc_base += len(row.doc_blob)
        tf_base += len(row.tf_blob)
    order = np.argsort(np.concatenate(run_terms), kind="stable")  # by term, then doc: rows and runs in doc order
    terms, firsts, ns = (np.concatenate(a)[order] for a in (run_terms, run_first, run_n))
    doc_bytes, doc_at = _gathered(b"".join(r.doc_blob for r in rows), doc_low, doc_high, order)
    tf_bytes, tf_at = _gathered(b"".join(r.tf_blob for r in rows), tf_low, tf_high, order)
    size = np.diff(doc_at) + np.diff(tf_at)  # bytes per run
    term_starts = np.flatnonzero(np.concatenate(([True], np.diff(terms) != 0)))
    term_ends = np.append(term_starts[1:], terms.size)
    totals = np.add.reduceat(size, term_starts)
    long = totals > seal_bytes
    cuts = [term_starts[~long]]
    for start, end in zip(term_starts[long].tolist(), term_ends[long].tolist(), strict=True):
        group, kept = 0, []
        for run in range(start, end):  # consecutive runs of a frequent term, up to seal_bytes per row
            length = int(size[run])
            if run > start and group + length > seal_bytes:
                kept.append(run)
                group = 0
            group += length
        cuts.append(np.array([start, *kept], dtype=np.int64))
    lows = np.sort(np.concatenate(cuts))
    highs = np.append(lows[1:], terms.size)
    n_at = np.append(0, np.cumsum(ns))
    doc_slices = map(slice, doc_at[lows].tolist(), doc_at[highs].tolist())
    tf_slices = map(slice, tf_at[lows].tolist(), tf_at[highs].tolist())
    return [
        [field] * lows.size, [seg] * lows.size, terms[lows].tolist(), firsts[lows].tolist(),
        (n_at[highs] - n_at[lows]).tolist(), list(map(doc_bytes.__getitem__, doc_slices)),
        list(map(tf_bytes.__getitem__, tf_slices)),
    ]  # fmt: skip


def _gathered(
    data: bytes, lows: list[np.ndarray], highs: list[np.ndarray], order: np.ndarray
) -> tuple[bytes, np.ndarray]:
    """The byte ranges ``[low, high)`` of ``data`` in ``order``, one after the other, and where each starts (then
    the end)."""
    low, high = np.concatenate(lows)[order], np.concatenate(highs)[order]
    lengths = high - low
    at = np.append(0, np.cumsum(lengths))
    if not at[-1]:
        return b"", at
    index = np.repeat(low - at[:-1], lengths) + np.arange(int(at[-1]))
    return np.frombuffer(data, dtype=np.uint8)[index].tobytes(), at


def without(row: OpenRow, field: int, doomed: np.ndarray) -> tuple[np.ndarray, tuple[Any, ...] | None]:
    """``row`` less the postings of ``doomed`` docs: the lost postings' terms (one per posting; empty when none is
    lost) and the row written again without them (``None`` when nothing is left or nothing is lost)."""
    hit = np.isin(row.docs, doomed)
    if not hit.any():
        return np.zeros(0, dtype=np.int64), None
    keep = ~hit
    every = row.terms
    if not keep.any():
        return every[hit], None
    terms, docs = every[keep], row.docs[keep].astype(np.int64)
    tfs = row.tfs[keep].astype(np.int64)
    key_starts = np.flatnonzero(np.concatenate(([True], np.diff(terms) != 0)))
    runs = run_starts(key_starts, docs, tfs)
    count = terms.size
    rewritten = encode_rows(
        np.full(count, field, dtype=np.int64), np.full(count, row.seg, dtype=np.int64), terms, docs, tfs, runs
    )
    return every[hit], rewritten[0]


def count_lost(lost: dict[int, list[int]], field: int, terms: np.ndarray) -> None:
    """Add the postings of ``terms`` (one entry per lost posting) to ``lost[term][field]``."""
    for term, count in zip(*np.unique(terms, return_counts=True), strict=True):
        counts = lost.setdefault(int(term), [0, 0])
        while len(counts) <= field:
            counts.append(0)
        counts[field] += int(count)


def remove(
    db: sqlite3.Connection, prefix: str, field: int, seg: int, doomed: np.ndarray, lost: dict[int, list[int]]
) -> None:
    """Remove ``doomed`` docs from the open rows of ``field`` in segment ``seg`` (counted in ``lost``): each row that
    held any is deleted and, when postings are left, written again without them under a new tag (no reader's cache
    serves the old one; ``secure_delete`` zeroes the old bytes)."""
    keys = db.execute(
        f"SELECT first FROM {prefix}_post_open WHERE field = ? AND seg = ? ORDER BY first", (field, seg)
    ).fetchall()
    for (first,), row in zip(keys, read_rows(db, prefix, field, [seg]), strict=True):
        gone_terms, rewritten = without(row, field, doomed)
        if not gone_terms.size:
            continue
        count_lost(lost, field, gone_terms)
        db.execute(f"DELETE FROM {prefix}_post_open WHERE field = ? AND seg = ? AND first = ?", (field, seg, first))
        if rewritten is not None:
            db.execute(f"INSERT INTO {prefix}_post_open VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rewritten)
