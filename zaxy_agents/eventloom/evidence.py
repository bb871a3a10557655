"""Checking that evidence a derived record cites still resolves to exactly that event."""

from __future__ import annotations

from zaxy_agents.errors import ZaxyError

from .protocol import EventLog


class EvidenceCheck:
    """``check(session, seq, digest)``: True when ``session``/``seq`` exists with exactly hash ``digest``.

    Positive answers are cached: the log is append-only, so an event that resolved once keeps resolving.
    """

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self._resolved: set[tuple[str, int, str]] = set()

    def __call__(self, session: str, seq: int, digest: str) -> bool:
        if (session, seq, digest) in self._resolved:
            return True
        try:
            ok = self.log.get(session, seq).hash == digest
        except ZaxyError:
            return False
        if ok:
            self._resolved.add((session, seq, digest))
        return ok
