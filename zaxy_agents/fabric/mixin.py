"""The base of every feature mixin of :class:`~zaxy_agents.fabric.MemoryFabric`.

A mixin implements one feature area and calls the log, the projection and appends that other mixins provide.
This class declares those (for type checkers only: it adds nothing at run time), so each mixin states just
what is particular to it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zaxy_agents.eventloom.evidence import EvidenceCheck
    from zaxy_agents.eventloom.models import Event, EventDraft
    from zaxy_agents.eventloom.protocol import EventLog
    from zaxy_agents.projection.projector import Projector

    from .features import Features


class FabricMixin:
    """Declarations shared by the fabric's mixins: the log, the projector, ``project``, ``append``."""

    log: EventLog
    features: Features
    evidence_check: EvidenceCheck

    if TYPE_CHECKING:

        @property
        def projector(self) -> Projector: ...

        def project(self, sessions: list[str] | None = None) -> int: ...

        def append(
            self, session: str, type: str, payload: dict[str, Any] | None = None, *, actor: str = "agent"
        ) -> Event: ...

        def append_many(self, session: str, drafts: Iterable[EventDraft | dict[str, Any]]) -> list[Event]: ...
