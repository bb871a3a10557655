"""What this process's small writes to the verbatim index changed, kept so a reader's lookups survive them.

A query's lookups (term ids and document frequencies, speaker terms, thread rows: ``verbatim_search.ReadCache``)
hold for one write sequence of the index. An agent's turn appends a few events, which go to the index's tail: the
main term table's frequencies do not move (the tail keeps its own), only the terms, speaker terms and threads of
those events do. The writer records them here (:meth:`ReadDeltas.stage`, inside its transaction) and the index
adopts them once the transaction commits; a reader whose lookups are of an earlier write sequence then keeps every
entry outside those sets instead of reading them all again (the next turn's question shares most of them).

Exact by construction: a reader advances its lookups only along an unbroken chain of recorded writes from its own
write sequence to the current one, in the same tables (``created``). Any other write - a merge of the tail, a bulk
batch, an erasure, a rebuild, another process's commit - leaves no record for its step, so the chain breaks and the
reader reads everything again, as before.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

LIMIT = 64  # recorded writes kept (a reader more than that many writes behind reads everything again)


@dataclass(frozen=True)
class Delta:
    """One committed write, tail only: write sequence ``before`` -> ``after`` of the tables ``created``."""

    before: int
    after: int
    created: float
    terms: frozenset[str]  # index terms of its texts and captions (new ones among them)
    speakers: frozenset[str]  # speaker name terms it recorded
    groups: tuple[GroupRow, ...]  # the thread rows it changed or created, as committed


GroupRow = tuple[int, int, float, int, int]  # a thread's (id, docs, total length, first doc, last doc)


def _joined(earlier: Delta, later: Delta) -> Delta:
    """Two writes that follow each other as one (a thread's row as the later one left it)."""
    rows = {row[0]: row for row in earlier.groups} | {row[0]: row for row in later.groups}
    return Delta(
        earlier.before, later.after, later.created, earlier.terms | later.terms,
        earlier.speakers | later.speakers, tuple(rows.values()),
    )  # fmt: skip


class ReadDeltas:
    """The recorded writes of one index, in commit order (a bounded list); the writer's staged one until commit."""

    def __init__(self) -> None:
        self.deltas: list[Delta] = []
        self._staged: Delta | None = None
        self._broken = False  # this transaction also wrote what leaves no record (a merge, a bulk batch)
        self._lock = threading.Lock()

    def stage(self, delta: Delta | None) -> None:
        """Record a write of the current transaction (``None``: one whose changes are not recorded). Several
        writes in one transaction are joined when they follow each other."""
        staged = self._staged
        if delta is None or self._broken:
            self._broken, self._staged = True, None
        elif staged is None:
            self._staged = delta
        elif staged.after == delta.before and staged.created == delta.created:
            self._staged = _joined(staged, delta)
        else:
            self._broken, self._staged = True, None

    def committed(self) -> None:
        with self._lock:
            staged, broken = self._staged, self._broken
            self._staged, self._broken = None, False
            if broken:
                self.deltas = []  # a new list: readers iterate the one they took
            elif staged is not None:
                self.deltas = [*self.deltas[-(LIMIT - 1) :], staged]

    def rolled_back(self) -> None:
        self._staged, self._broken = None, False

    def clear(self) -> None:
        with self._lock:
            self.deltas, self._staged, self._broken = [], None, False

    def since(self, before: int, created: float, after: int) -> Delta | None:
        """The writes from write sequence ``before`` to ``after`` as one, or ``None`` when some step between them
        was not recorded."""
        if after <= before:
            return None
        joined: Delta | None = None
        for delta in self.deltas:
            at = before if joined is None else joined.after
            if delta.before != at or delta.created != created:
                continue
            joined = delta if joined is None else _joined(joined, delta)
            if joined.after == after:
                return joined
        return None
