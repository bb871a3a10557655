"""Fabric operations for the working set: "where was I" digests and the packets injected into IDE sessions.

The digest is a pure function of a bounded tail of the log (default
:data:`~zaxy_agents.workingset.DEFAULT_WINDOW` events), so it is cheap on long logs and backend-agnostic
(it reads through the ``EventLog`` protocol). Memory Checkout reuses :meth:`working_set`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zaxy_agents.errors import NotFoundError
from zaxy_agents.workingset import (
    DEFAULT_MAX_CHARS,
    DEFAULT_WINDOW,
    Packet,
    WorkingSet,
    build_working_set,
    render_packet,
)

if TYPE_CHECKING:
    from zaxy_agents.eventloom.protocol import EventLog


class WorkingSetOperations:
    """Mixin: the working-set part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    log: EventLog

    def working_set(
        self, session: str, *, window: int = DEFAULT_WINDOW, limits: dict[str, int] | None = None
    ) -> WorkingSet:
        """Open tasks, decisions, facts, unknowns, files, commands and prompts of the last ``window`` events."""
        if window < 1:
            from zaxy_agents.errors import InvalidRequestError

            raise InvalidRequestError(
                f"window must be >= 1, got {window}", field="window", remediation="Use a positive event count."
            )
        if not self.log.has_session(session):
            raise NotFoundError(
                f"no session {session!r}", field="session", remediation="List sessions with `zaxy sessions`."
            )
        head = self.log.head(session)
        if head is None:
            return WorkingSet(session)
        envelopes = self.log.replay_envelopes(session, max(1, head.seq - window + 1), head.seq)
        return build_working_set(session, envelopes, head_seq=head.seq, head_citation=head.citation, limits=limits)

    def recovery_packet(
        self, session: str, max_chars: int = DEFAULT_MAX_CHARS, *, window: int = DEFAULT_WINDOW
    ) -> Packet:
        """The packet injected after a context compaction (every line cited; at most ``max_chars``)."""
        return render_packet(self.working_set(session, window=window), "recovery", max_chars)

    def bootstrap_packet(
        self, session: str, max_chars: int = DEFAULT_MAX_CHARS, *, window: int = DEFAULT_WINDOW
    ) -> Packet:
        """The packet injected when a session starts or resumes (every line cited; at most ``max_chars``)."""
        return render_packet(self.working_set(session, window=window), "bootstrap", max_chars)
