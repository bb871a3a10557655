"""The MemoryFabric facade: surfaces call this; it owns the log and (lazily) the derived layers.

Data flows one way: surfaces -> fabric -> domain -> storage. Heavy layers (graph projection, indexes) are
opened on first use so that cheap operations (append, replay, verify) stay cheap.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from zaxy_agents.config import ZaxySettings
from zaxy_agents.eventloom.citations import Citation
from zaxy_agents.eventloom.jsonl_log import JsonlEventLog
from zaxy_agents.eventloom.models import Event, EventDraft, EventHead, SessionSummary, VerifyReport
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.eventloom.refs import MemoryRefs, RefTarget


class MemoryFabric:
    """Memory for agents: cited, replayable, honest about what it knows."""

    def __init__(self, settings: ZaxySettings, *, log: EventLog | None = None) -> None:
        self.settings = settings
        self.log: EventLog = log or JsonlEventLog(
            settings.eventloom_path,
            durability=settings.durability,
            max_payload_bytes=settings.max_payload_bytes,
        )
        self.refs = MemoryRefs(self.log)

    @classmethod
    def from_path(cls, eventloom_path: str | os.PathLike[str] | None = None, **overrides: Any) -> MemoryFabric:
        """Open the embedded default at ``eventloom_path`` (or ``ZAXY_EVENTLOOM_PATH`` / ``.eventloom``)."""
        return cls(ZaxySettings.resolve(eventloom_path, **overrides))

    # ------------------------------------------------------------------ log
    def append(self, session: str, type: str, payload: dict[str, Any] | None = None, *, actor: str = "agent") -> Event:
        """Append one event; the returned event carries ``.citation``."""
        return self.log.append(session, type, payload, actor=actor)

    def append_many(self, session: str, drafts: Iterable[EventDraft | dict[str, Any]]) -> list[Event]:
        """Append several events atomically (one lock, one write, one fsync)."""
        return self.log.append_many(session, drafts)

    def replay(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Event]:
        return self.log.replay(session, from_seq, to_seq)

    def resolve(self, citation: str | Citation) -> Event:
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

    def close(self) -> None:
        self.log.close()

    def __enter__(self) -> MemoryFabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
