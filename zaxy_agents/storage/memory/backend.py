"""The ``memory://`` backend object: one log and one graph per backend, gone when it closes."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from zaxy_agents.eventloom.protocol import EventLog

from ..protocols import SchemaMode, StorageBackend
from ..status import BackendStatus
from .graph import MemoryGraphStore
from .log import MemoryEventLog

if TYPE_CHECKING:
    from zaxy_agents.config import ZaxySettings


class MemoryBackend(StorageBackend):
    """No optional capability: nothing persists, nothing is shared, there is no schema to migrate."""

    name = "memory"
    graph_name = "memory"

    def __init__(self, settings: ZaxySettings) -> None:
        super().__init__(settings)
        self._log = MemoryEventLog(max_payload_bytes=settings.max_payload_bytes)
        self._graph = MemoryGraphStore()
        self._scratch: str | None = None

    @property
    def location(self) -> str:
        return self.settings.backend

    @property
    def derived_path(self) -> Path:
        """A private temporary folder (removed on close) for what the fabric's derived layers write to disk."""
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="zaxy-memory-")
        return Path(self._scratch)

    def open_log(self, *, schema_mode: SchemaMode = "auto") -> MemoryEventLog:
        return self._log

    def open_graph(self) -> MemoryGraphStore:
        """The graph, until it is closed; then a new, empty one (the projection rebuilds it from the log)."""
        if self._graph.closed:
            self._graph = MemoryGraphStore()
        return self._graph

    def status(self, log: EventLog) -> BackendStatus:
        return BackendStatus.counted(self.name, self.location, log, note="memory:// lives in this process only")

    def close(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
