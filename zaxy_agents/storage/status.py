"""What ``zaxy backend status`` reports, for every backend: where memory lives and whether it is usable."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from zaxy_agents.storage.records import MigrationRecord

if TYPE_CHECKING:
    from zaxy_agents.eventloom.protocol import EventLog


class BackendStatus(BaseModel):
    """Backend kind and location, server version, schema/migration state and how much memory it holds."""

    backend: str  # jsonl | postgresql
    location: str  # folder, or the server URI without its password
    server_version: str | None = None
    schema_name: str | None = None
    schema_ok: bool = True
    migrations: list[MigrationRecord] = Field(default_factory=list)
    session_count: int = 0
    event_count: int = 0
    size_bytes: int = 0
    problems: list[str] = Field(default_factory=list)
    note: str | None = None
    features: dict[str, str] = Field(default_factory=dict)  # optional server extensions and how they are used

    @classmethod
    def counted(cls, backend: str, location: str, log: EventLog, note: str | None = None) -> BackendStatus:
        """The status of a backend without a schema: where it is and how much the log holds."""
        summaries = log.sessions()
        return cls(
            backend=backend,
            location=location,
            session_count=len(summaries),
            event_count=sum(summary.event_count for summary in summaries),
            size_bytes=sum(summary.size_bytes for summary in summaries),
            note=note,
        )
