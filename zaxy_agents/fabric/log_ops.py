"""Fabric operations on the Eventloom itself: append, replay, resolve, verify, sessions, refs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.citations import Citation
from zaxy_agents.eventloom.erasure import RESERVED_TYPES
from zaxy_agents.eventloom.models import Event, EventDraft, EventHead, SessionSummary, VerifyReport
from zaxy_agents.eventloom.refs import RefTarget

from .service import FabricService

if TYPE_CHECKING:
    pass


class LogService(FabricService):
    """Service: the log-level part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def append(self, session: str, type: str, payload: dict[str, Any] | None = None, *, actor: str = "agent") -> Event:
        """Append one event; the returned event carries ``.citation``.

        Contracted payloads (inferred edges, causal edges, consolidation records) are validated first; built-in
        producers may then append the inference events this event justifies.
        """
        _refuse_reserved(type, "type")
        self.features.contracts.validate(type, {} if payload is None else payload)
        event = self.log.append(session, type, payload, actor=actor)
        self._run_producers([event])
        return event

    def append_many(self, session: str, drafts: Iterable[EventDraft | dict[str, Any]]) -> list[Event]:
        """Append several events atomically (one lock, one write, one fsync); contracts checked for all first."""
        items = list(drafts)
        for index, draft in enumerate(items):
            kind = (
                draft.type if isinstance(draft, EventDraft) else draft.get("type") if isinstance(draft, dict) else None
            )
            _refuse_reserved(kind, f"events[{index}].type")
            if isinstance(draft, EventDraft):
                self.features.contracts.validate(draft.type, draft.payload, field_prefix=f"events[{index}].")
            elif isinstance(draft, dict) and isinstance(draft.get("type"), str):
                self.features.contracts.validate(
                    draft["type"], draft.get("payload", {}), field_prefix=f"events[{index}]."
                )
        events = self.log.append_many(session, items)
        self._run_producers(events)
        return events

    def _run_producers(self, events: list[Event]) -> None:
        for event in events:
            drafts = self.features.producers.produce(event, self.log)
            if drafts:
                self.log.append_many(event.session, drafts)

    def replay(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Event]:
        """Stream a session's events in order (bounded range, bounded memory)."""
        return self.log.replay(session, from_seq, to_seq)

    def resolve(self, citation: str | Citation) -> Event:
        """The event a citation names; refuses a citation whose hash prefix does not match."""
        return self.log.resolve(citation)

    def head(self, session: str) -> EventHead | None:
        return self.log.head(session)

    def verify(self, session: str) -> VerifyReport:
        return self.log.verify(session)

    def sessions(self) -> list[SessionSummary]:
        return self.log.sessions()

    def set_ref(self, session: str, name: str, seq: int | None = None) -> RefTarget:
        return self.refs.set(session, name, seq)

    def get_ref(self, session: str, name: str) -> RefTarget:
        return self.refs.get(session, name)


def _refuse_reserved(kind: object, field: str) -> None:
    """Erasure, repair and torn-tail records are written by the log itself: a forged one could vouch for removed
    content, so they cannot be appended."""
    if kind in RESERVED_TYPES:
        raise InvalidRequestError(
            f"{kind} events are written by the log itself",
            field=field,
            remediation="Use erase_events / `zaxy memory erase` to erase, `zaxy repair` to repair.",
        )
