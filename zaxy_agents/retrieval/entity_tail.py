"""The entity keyword index's log-structured tail: small writes kept apart until they are merged in one batch.

Why: projecting one event at a time (MCP, hooks, LangGraph puts) wrote each event's ~40 postings straight into
the main tables: ~19 new runs at random places of ``entity_keyword_post``, ~14 ``df`` updates and a few new
terms at random places of ``entity_keyword_term`` and its UNIQUE index — ~17 of the ~62 pages one event's commit
wrote into the WAL, and ~38 statements. A small write now appends one row to ``entity_keyword_tail`` (its key,
the index's write sequence, only grows, so the row lands on the last page) holding the write's terms as text and
its postings packed (:data:`TAIL_POSTING`, a term's index in the row's term list). When the tail would pass
``TAIL_LIMIT`` postings, or a write is large (a batch, a rebuild), or an erasure runs, the tail and the write go
to the main tables together, in the order they were written: the terms get the ids one batch of those writes
would have given them, and every doc of the tail is older than any doc of the write (runs keep doc order).

A query reads the main tables plus the tail (:class:`TailView`, an in-memory copy of the tail's postings filed
by term, extended with the rows written since it last looked): document frequencies are the main table's plus
the tail's, postings the main runs' plus the tail's, so answers equal those of an index without a tail.
The tail lives in the same SQLite transaction as the rest of the index: a crash leaves it as the last commit
left it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

import numpy as np

TAIL_LIMIT = 16_384  # postings the tail holds before it is merged (~400 one-event writes of realistic entities)
DIRECT_MIN = 1_024  # a write with at least this many postings goes to the main tables (with the tail before it)
TAIL_POSTING = np.dtype([("term", "<u4"), ("session", "<u4"), ("doc", "<u4"), ("tf", "<u2")])
SEPARATOR = "\n"  # between a row's terms (analyser terms never hold one: tokens are word characters)


def schema(prefix: str) -> list[str]:
    return [
        f"CREATE TABLE IF NOT EXISTS {prefix}_tail(wseq INTEGER PRIMARY KEY, terms TEXT NOT NULL, post BLOB NOT NULL)"
    ]


def drop(prefix: str) -> list[str]:
    return [f"DROP TABLE IF EXISTS {prefix}_tail"]


def pack(
    post_term: Sequence[str], post_session: Sequence[int], post_doc: Sequence[int], post_tf: Sequence[int]
) -> tuple[str, bytes] | None:
    """One tail row ``(terms, post)`` of a write's postings (parallel columns, in write order); ``None`` when a
    term could not be stored (holds the separator) — the caller then writes to the main tables."""
    local: dict[str, int] = {}
    index = [local.setdefault(term, len(local)) for term in post_term]
    text = SEPARATOR.join(local)
    if text.count(SEPARATOR) != len(local) - 1:
        return None
    table = np.zeros(len(index), dtype=TAIL_POSTING)
    table["term"], table["session"], table["doc"] = index, post_session, post_doc
    table["tf"] = np.minimum(np.asarray(post_tf, dtype=np.int64), np.iinfo(np.uint16).max)
    return text, table.tobytes()


def unpack(terms: str, post: bytes) -> tuple[list[str], list[int], list[int], list[int]]:
    """The parallel columns ``(term, session, doc, tf)`` of one tail row, in write order."""
    names = terms.split(SEPARATOR)
    table = np.frombuffer(post, dtype=TAIL_POSTING)
    return (
        [names[i] for i in table["term"].tolist()],
        table["session"].tolist(),
        table["doc"].tolist(),
        table["tf"].tolist(),
    )


def read_all(db: sqlite3.Connection, prefix: str) -> tuple[list[str], list[int], list[int], list[int]]:
    """Every posting of the tail, in write order (what a merge moves to the main tables)."""
    term: list[str] = []
    session: list[int] = []
    doc: list[int] = []
    tf: list[int] = []
    for text, post in db.execute(f"SELECT terms, post FROM {prefix}_tail ORDER BY wseq"):
        columns = unpack(text, post)
        term += columns[0]
        session += columns[1]
        doc += columns[2]
        tf += columns[3]
    return term, session, doc, tf


class TailView:
    """The tail's postings in memory, filed by term, as of one committed state of the index.

    ``key`` is ``(created, merges)`` of the index's stats: a merge, an erasure that merged, or a reset changes it
    and the view is read again; otherwise the rows written after ``upto`` (the write sequence the view was last
    brought to) are added. A reader whose snapshot is older than the view reads the tail again. Thread-safe."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._lock = threading.Lock()
        self._reset(None)

    def _reset(self, key: tuple[int, int] | None) -> None:
        self.key = key
        self.upto = -1
        self.count = 0  # postings held
        self.by_term: dict[str, tuple[list[int], list[int], list[int]]] = {}  # term -> (sessions, docs, tfs)

    def clear(self) -> None:
        with self._lock:
            self._reset(None)

    def postings(
        self, db: sqlite3.Connection, key: tuple[int, int], wseq: int, count: int, terms: Sequence[str],
        scope: Sequence[int] | None,
    ) -> dict[str, tuple[np.ndarray, np.ndarray, int]]:  # fmt: skip
        """``{term: (docs, tfs, df)}`` of ``terms`` in the tail as ``db``'s snapshot holds it (index at write
        sequence ``wseq``, ``count`` tail postings): docs and tfs of ``scope``'s sessions (all when None), ``df``
        the documents holding the term in every session (as the main table's ``df`` counts)."""
        with self._lock:
            if not count:
                if self.key != key or self.count:
                    self._reset(key)
                self.upto = max(self.upto, wseq)
                return {}
            self._bring_to(db, key, wseq, count)
            out = {}
            allowed = None if scope is None else set(scope)
            for term in terms:
                entry = self.by_term.get(term)
                if entry is None:
                    continue
                sessions, docs, tfs = entry
                if allowed is not None:
                    kept = [i for i, session in enumerate(sessions) if session in allowed]
                    docs, tfs = [docs[i] for i in kept], [tfs[i] for i in kept]
                out[term] = (np.array(docs, dtype=np.int64), np.array(tfs, dtype=np.float64), len(sessions))
            return out

    def _bring_to(self, db: sqlite3.Connection, key: tuple[int, int], wseq: int, count: int) -> None:
        if self.key != key or self.upto > wseq:
            self._reset(key)
        if self.upto < wseq:
            self._add(db.execute(f"SELECT terms, post FROM {self.prefix}_tail WHERE wseq > ?", (self.upto,)))
            self.upto = wseq
        if self.count != count:  # never expected: read the whole tail again rather than answer from a stale view
            self._reset(key)
            self._add(db.execute(f"SELECT terms, post FROM {self.prefix}_tail"))
            self.upto = wseq

    def _add(self, rows: sqlite3.Cursor) -> None:
        by_term = self.by_term
        for text, post in rows:
            columns = unpack(text, post)
            for term, session, doc, tf in zip(*columns, strict=True):
                entry = by_term.get(term)
                if entry is None:
                    entry = by_term[term] = ([], [], [])
                entry[0].append(session)
                entry[1].append(doc)
                entry[2].append(tf)
            self.count += len(columns[0])
