"""Document frequencies of known terms, added per bulk write as ONE count row, folded later.

Used by both lexical indexes: the verbatim index (text and caption counts, ``verbatim_term_open``) and the entity
keyword index (one count, ``entity_keyword_term_open``, ``captions=False``: its caption column is left empty and its
term table has no ``cdf``).

A bulk write of 1,000 realistic events raises the document frequencies of ~19,000 known terms: one
``UPDATE verbatim_term`` per term cost ~50 us of CPU per event at SQLite's per-row floor, and the next writes raise
mostly the same terms again (the realistic stream's ~30,000-word vocabulary). So a bulk write stores its increments
as one row of ``verbatim_term_open``: ``(id) -> (tag, ids, df, cdf)``, the term ids ascending as varint gaps and the
text / caption counts as varints; every ``FOLD_ROWS`` rows (and before an erasure, which subtracts from the stored
counts and deletes terms that fall to zero) the rows are summed and applied with one UPDATE per distinct term.

Scores depend on document frequencies, so they stay exact: :func:`pending` gives what the rows add to some terms,
and ``VerbatimIndex.term_ids`` (every reader's way to them) adds it to the stored counts. Rows are decoded once per
process and kept under their ``tag`` (a digest of their content, as :mod:`.posting_open`'s rows).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from .posting_codec import decode_varints, encode_varints, varint_sizes

FOLD_ROWS = 16  # count rows kept before they are folded into the term table (~a segment of 1,000-event writes)
CACHE_ROWS = 64  # decoded count rows a process keeps


def schema(prefix: str) -> list[str]:
    return [
        f"CREATE TABLE IF NOT EXISTS {prefix}_term_open(id INTEGER PRIMARY KEY, tag INTEGER NOT NULL, "
        "ids BLOB NOT NULL, df BLOB NOT NULL, cdf BLOB NOT NULL)"
    ]


def drop(prefix: str) -> list[str]:
    return [f"DROP TABLE IF EXISTS {prefix}_term_open"]


Counts = tuple[np.ndarray, np.ndarray, np.ndarray]  # term ids ascending, text df, caption df (int64)


def _varints(values: np.ndarray) -> bytes:
    return encode_varints(values, varint_sizes(values))


def add(db: sqlite3.Connection, prefix: str, ids: np.ndarray, df: np.ndarray, cdf: np.ndarray | None) -> None:
    """Record a write's increments of known terms (``ids`` ascending), folding the rows when ``FOLD_ROWS`` are
    kept; ``cdf`` None: an index without caption counts (its rows' caption column stays empty)."""
    if not ids.size:
        return
    blobs = (_varints(np.diff(ids, prepend=0)), _varints(df), b"" if cdf is None else _varints(cdf))
    digest = hashlib.blake2b(digest_size=8)
    for blob in blobs:
        digest.update(len(blob).to_bytes(8, "little"))
        digest.update(blob)
    tag = int.from_bytes(digest.digest(), "little") >> 1
    db.execute(f"INSERT INTO {prefix}_term_open(tag, ids, df, cdf) VALUES (?, ?, ?, ?)", (tag, *blobs))
    if db.execute(f"SELECT count(*) FROM {prefix}_term_open").fetchone()[0] >= FOLD_ROWS:
        fold(db, prefix, captions=cdf is not None)


def fold(db: sqlite3.Connection, prefix: str, captions: bool = True) -> None:
    """Apply every count row to the term table (one UPDATE per distinct term, in id order) and delete the rows;
    ``captions`` False: the term table has no ``cdf`` column."""
    rows = _rows(db, prefix)
    if not rows:
        return
    ids = np.concatenate([row[0] for row in rows])
    unique, where = np.unique(ids, return_inverse=True)
    df = np.bincount(where, weights=np.concatenate([row[1] for row in rows])).astype(np.int64)
    if captions:
        cdf = np.bincount(where, weights=np.concatenate([row[2] for row in rows])).astype(np.int64)
        db.executemany(
            f"UPDATE {prefix}_term SET df = df + ?, cdf = cdf + ? WHERE id = ?",
            zip(df.tolist(), cdf.tolist(), unique.tolist(), strict=True),
        )
    else:
        db.executemany(
            f"UPDATE {prefix}_term SET df = df + ? WHERE id = ?", zip(df.tolist(), unique.tolist(), strict=True)
        )
    db.execute(f"DELETE FROM {prefix}_term_open")


def pending(db: sqlite3.Connection, prefix: str, ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """``id -> (text df, caption df)`` the count rows add to ``ids`` (only ids with an increment; the caption df
    is 0 in an index without caption counts)."""
    rows = _rows(db, prefix)
    if not rows or not ids:
        return {}
    wanted = np.array(sorted(set(ids)), dtype=np.int64)
    df = np.zeros(wanted.size, dtype=np.int64)
    cdf = np.zeros(wanted.size, dtype=np.int64)
    for row_ids, row_df, row_cdf in rows:
        at = np.minimum(np.searchsorted(row_ids, wanted), row_ids.size - 1)
        hit = row_ids[at] == wanted
        df[hit] += row_df[at[hit]]
        if row_cdf.size:  # (empty: no caption counts)
            cdf[hit] += row_cdf[at[hit]]
    some = np.flatnonzero((df > 0) | (cdf > 0))
    return {int(wanted[k]): (int(df[k]), int(cdf[k])) for k in some.tolist()}


class _Cache:
    def __init__(self) -> None:
        self.rows: OrderedDict[int, Counts] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, tag: int) -> Counts | None:
        with self.lock:
            return self.rows.get(tag)

    def put(self, tag: int, counts: Counts) -> None:
        for array in counts:
            array.flags.writeable = False
        with self.lock:
            self.rows[tag] = counts
            while len(self.rows) > CACHE_ROWS:
                self.rows.popitem(last=False)


_CACHE = _Cache()


def _rows(db: sqlite3.Connection, prefix: str) -> list[Counts]:
    found = []
    for row_id, tag in db.execute(f"SELECT id, tag FROM {prefix}_term_open ORDER BY id").fetchall():
        counts = _CACHE.get(tag)
        if counts is None:
            blobs = db.execute(f"SELECT ids, df, cdf FROM {prefix}_term_open WHERE id = ?", (row_id,)).fetchone()
            counts = (np.cumsum(decode_varints(blobs[0])), decode_varints(blobs[1]), decode_varints(blobs[2]))
            _CACHE.put(tag, counts)
        found.append(counts)
    return found
