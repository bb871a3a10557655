"""The MemoryFabric facade: surfaces call this; it owns the log and (lazily) the derived layers.

Data flows one way: surfaces -> fabric -> domain -> storage. The facade is assembled from one mixin per
feature area (``log_ops``, ...) so each area lives in a small module; heavy layers (graph projection,
indexes) are opened on first use so that cheap operations (append, replay, verify) stay cheap.
"""

from __future__ import annotations

import os
from typing import Any

from zaxy_agents.config import ZaxySettings
from zaxy_agents.eventloom.backends import open_event_log
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.eventloom.refs import MemoryRefs

from .backend_ops import BackendOperations
from .log_ops import LogOperations


class MemoryFabric(LogOperations, BackendOperations):
    """Memory for agents: cited, replayable, honest about what it knows."""

    def __init__(self, settings: ZaxySettings, *, log: EventLog | None = None) -> None:
        self.settings = settings
        self.log = log or open_event_log(settings)
        self.refs = MemoryRefs(self.log)
        self._closers: list[Any] = []

    @classmethod
    def from_path(cls, eventloom_path: str | os.PathLike[str] | None = None, **overrides: Any) -> MemoryFabric:
        """Open the configured backend (``ZAXY_BACKEND``; default the embedded log at ``eventloom_path``)."""
        return cls(ZaxySettings.resolve(eventloom_path, **overrides))

    def close(self) -> None:
        """Close derived layers first (they may flush), then the log."""
        while self._closers:
            self._closers.pop()()
        self.log.close()

    def __enter__(self) -> MemoryFabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
