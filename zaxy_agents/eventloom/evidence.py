"""Checking that evidence a derived record cites still resolves to exactly that event."""

from __future__ import annotations

from zaxy_agents.errors import ZaxyError

from .protocol import EventLog


class EvidenceCheck:
    """``check(session, seq, digest)``: True when ``session``/``seq`` exists with exactly hash ``digest``.

    An erased event does not resolve: its hash stays in the chain, the content it vouched for is gone. Positive
    answers are cached (the log is append-only); an erasure in this process drops its events from the cache
    (:meth:`forget`), and another process's erasure is seen once this process reopens its memory.
    """

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self._resolved: set[tuple[str, int, str]] = set()

    def __call__(self, session: str, seq: int, digest: str) -> bool:
        if (session, seq, digest) in self._resolved:
            return True
        try:
            event = self.log.get(session, seq)
        except ZaxyError:
            return False
        ok = event.hash == digest and event.erased is None  # an erased event keeps its hash, not its content
        if ok:
            self._resolved.add((session, seq, digest))
        return ok

    def forget(self, session: str, seqs: list[int]) -> None:
        """Erased events of ``session`` no longer resolve: drop them from the positive cache."""
        gone = set(seqs)
        self._resolved = {key for key in self._resolved if key[0] != session or key[1] not in gone}
