"""What the verbatim writer remembers between batches: ids it looked up or created, and the thread rows it wrote.

Valid only while no other process wrote the index (:meth:`WriteCache.valid_for`); term ids survive other writers'
writes (only an erasure or a rebuild changes them). Kept apart from :mod:`.verbatim_write` (the batch's writing).
"""

from __future__ import annotations

from dataclasses import dataclass


class WriteCache:
    """What the writer looked up or wrote, valid while the index is at the write sequence it recorded (no other
    process wrote since): session ids and last seqs, type / speaker / term ids, thread rows, speaker terms.
    Dropped on a rollback or when another writer moved the sequence — except the term ids, which only an erasure
    (it deletes terms no event holds any more) or a rebuild can change: they are kept while the index's
    ``erasures`` and ``created`` stamps are (several processes writing one memory each looked every term up again
    after any other's write)."""

    LIMIT = 500_000

    def __init__(self, wseq: float = -1.0, created: float = -1.0, erasures: float = -1.0) -> None:
        self.wseq, self.created, self.erasures = wseq, created, erasures
        self.sessions: dict[str, tuple[int, int]] = {}
        self.names: dict[str, dict[str, int]] = {"type": {}, "speaker": {}}
        self.terms: dict[str, int] = {}
        self.groups: dict[tuple[int, str | None], Group] = {}
        self.speaker_terms: dict[str, int] = {}

    def valid_for(self, stats: dict[str, float]) -> bool:
        return self.wseq == stats["wseq"] and self.created == stats["created"] and len(self.terms) < self.LIMIT

    def after(self, stats: dict[str, float]) -> WriteCache:
        """The cache for a write at ``stats``: this one, or a new one keeping the term ids when they still hold."""
        if self.valid_for(stats):
            return self
        fresh = WriteCache(stats["wseq"], stats["created"], stats["erasures"])
        if self.created == stats["created"] and self.erasures == stats["erasures"] and len(self.terms) < self.LIMIT:
            fresh.terms = self.terms
        return fresh


@dataclass
class Group:
    id: int
    docs: int
    len: float
    first: int
    second: int
    last: int
    last2: int
