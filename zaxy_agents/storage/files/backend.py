"""The files backend: a folder holding one JSONL log per session, the embedded Kuzu graph and derived state.

The default (``./.eventloom`` or any folder path). One read-write process per graph file; other processes
append to the logs and reach the graph through its owner (``zaxy_agents.sharing``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zaxy_agents.config import DERIVED_DIR_NAME
from zaxy_agents.eventloom.protocol import EventLog

from ..protocols import Capability, SchemaMode, StorageBackend
from ..status import BackendStatus
from .jsonl_log import JsonlEventLog

if TYPE_CHECKING:
    from zaxy_agents.config import ZaxySettings

    from .kuzu_store import KuzuProjectionStore

GRAPH_FILE = "graph.kuzu"


class FilesBackend(StorageBackend):
    name = "files"
    graph_name = "kuzu"
    capabilities = frozenset({Capability.PERSISTENT, Capability.GROUP_COMMIT, Capability.GRAPH_SCHEMA_PLAN})
    status_name = "jsonl"  # what `zaxy backend status` has always called it

    def __init__(self, settings: ZaxySettings) -> None:
        super().__init__(settings)
        self._opened: list[EventLog] = []

    @property
    def location(self) -> str:
        return self.settings.eventloom_dir

    @property
    def derived_path(self) -> Path:
        return Path(self.settings.eventloom_dir) / DERIVED_DIR_NAME

    @property
    def cache_root(self) -> str | None:
        """The Eventloom folder itself (every process of this memory shares it), once it exists."""
        return self.settings.eventloom_dir if os.path.isdir(self.settings.eventloom_dir) else None

    def open_log(self, *, schema_mode: SchemaMode = "auto") -> EventLog:
        settings = self.settings
        return JsonlEventLog(
            settings.eventloom_dir, durability=settings.durability, max_payload_bytes=settings.max_payload_bytes
        )

    def open_graph(self) -> KuzuProjectionStore:
        from .kuzu_store import KuzuProjectionStore  # kuzu + pyarrow load only when the graph is needed

        return KuzuProjectionStore(self.derived_path / GRAPH_FILE)

    def status(self, log: EventLog) -> BackendStatus:
        return BackendStatus.counted(self.status_name, self.location, log)

    def group_commit_log(self, log: EventLog) -> EventLog:
        """A ``batch``-durability log on the same folder: appends are written at once (safe if this process
        dies) and fsynced by a background flusher, or by the next fsync-durability append's flush."""
        if not isinstance(log, JsonlEventLog) or log.durability != "fsync":
            return log
        grouped = JsonlEventLog(log.root, durability="batch", max_payload_bytes=log.max_payload_bytes)
        self._opened.append(grouped)
        return grouped

    @classmethod
    def graph_schema_plan(cls) -> dict[str, Any]:
        from .kuzu_schema import schema_plan

        return {"backend": "kuzu", "migrations": schema_plan()}

    def close(self) -> None:
        while self._opened:
            self._opened.pop().close()
