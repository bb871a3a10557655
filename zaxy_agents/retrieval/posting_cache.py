"""Decoded main-table postings kept between queries, for as long as the caller knows those tables unchanged.

An agent asks about the same words turn after turn ("which", "option", "service"); reading and decoding their
postings again was a fixed share of every question. The owner decides validity: the verbatim lane's ``ReadCache``
(one write sequence, carried along this process's tail writes, which never touch the main tables) and the keyword
lane's ``KeywordReads`` (one state of its index). The arrays are shared between queries, so they are read-only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from .postings import PostingStore, TermPostings

LIMIT = 1_000_000  # postings kept (16 bytes each); past it, further terms are read each time


class PostingCache:
    """``PostingStore.read`` answers per (field, term, searched sessions), absent terms included."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.entries: dict[tuple[int, int, tuple[int, ...] | None], TermPostings | None] = {}
        self.count = 0
        self.limit = limit
        self.listed: dict[tuple[str, int], list[tuple[int, int, int]]] = {}  # the open rows' keys (same validity)

    def copy(self) -> PostingCache:
        """A cache holding the same (shared, read-only) entries, for a reader of an unchanged state."""
        fresh = PostingCache(self.limit)
        fresh.entries, fresh.count, fresh.listed = dict(self.entries), self.count, dict(self.listed)
        return fresh

    def read(
        self, store: PostingStore, db: sqlite3.Connection, field: int, terms: Sequence[int], scope: Sequence[int] | None
    ) -> dict[int, TermPostings]:
        """``store.read(db, field, terms, scope)``, the terms read before in this scope answered from memory."""
        sessions = None if scope is None else tuple(scope)
        known = self.entries
        unique = list(dict.fromkeys(int(term) for term in terms))
        missing = [term for term in unique if (field, term, sessions) not in known]
        read = store.read(db, field, missing, scope, self.listed) if missing else {}
        for term in missing:
            entry = read.get(term)
            if entry is not None:
                entry.docs.flags.writeable = False
                entry.tfs.flags.writeable = False
                if self.count + entry.docs.size > self.limit:
                    continue
                self.count += entry.docs.size
            known[(field, term, sessions)] = entry
        found = {}
        for term in unique:
            entry = known[(field, term, sessions)] if (field, term, sessions) in known else read.get(term)
            if entry is not None:
                found[term] = entry
        return found
