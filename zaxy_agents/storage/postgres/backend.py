"""The PostgreSQL backend: the Eventloom, the graph of record and the vectors in one server schema, shared by
every worker; each worker keeps its derived in-process state under a local folder per deployment."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zaxy_agents.eventloom.protocol import EventLog

from ..protocols import Capability, SchemaMode, StorageBackend
from ..records import migration_plan
from ..status import BackendStatus
from .dsn import PostgresOptions, redact_dsn
from .log import PostgresEventLog

if TYPE_CHECKING:
    from zaxy_agents.config import ZaxySettings

    from .graph_store import PostgresProjectionStore
    from .vectors import PostgresVectorStore


class PostgresBackend(StorageBackend):
    name = "postgresql"
    graph_name = "postgresql"
    capabilities = frozenset(
        {
            Capability.PERSISTENT,
            Capability.SHARED_GRAPH,
            Capability.SHARED_VECTORS,
            Capability.GROUP_COMMIT,
            Capability.MIGRATIONS,
            Capability.GRAPH_SCHEMA_PLAN,
        }
    )

    def __init__(self, settings: ZaxySettings, *, schema: str | None = None) -> None:
        """``schema``: the schema holding Zaxy's tables (default ``ZAXY_POSTGRES_SCHEMA``, else ``zaxy``)."""
        super().__init__(settings)
        self.schema = PostgresOptions.from_env(schema=schema).schema

    @property
    def dsn(self) -> str:
        return self.settings.backend

    @property
    def location(self) -> str:
        return redact_dsn(self.dsn)

    @property
    def derived_path(self) -> Path:
        """A folder per (server, schema) under the local Eventloom folder, so switching servers never mixes the
        per-process state (catalog snapshot, index snapshots)."""
        identity = hashlib.sha256(f"{redact_dsn(self.dsn)}\x1f{self.schema}".encode()).hexdigest()[:16]
        return self.settings.derived_path / "postgresql" / identity

    def open_log(self, *, schema_mode: SchemaMode = "auto") -> PostgresEventLog:
        settings = self.settings
        return PostgresEventLog(
            self.dsn,
            schema=self.schema,
            durability=settings.durability,
            max_payload_bytes=settings.max_payload_bytes,
            schema_mode=schema_mode,
        )

    def open_graph(self) -> PostgresProjectionStore:
        from .graph_store import PostgresProjectionStore

        return PostgresProjectionStore(self.dsn, schema=self.schema)

    def open_vectors(self) -> PostgresVectorStore:
        from .vectors import PostgresVectorStore

        return PostgresVectorStore(self.dsn, schema=self.schema)

    def group_commit_log(self, log: EventLog) -> EventLog:
        """The same log, committing ``append_many`` without waiting for the WAL flush (``RelaxedCommits``)."""
        if not isinstance(log, PostgresEventLog):
            return log
        from .relaxed import RelaxedCommits

        return RelaxedCommits(log)

    def migrate(self) -> list[str]:
        """The Eventloom's pending migrations, then the graph projection's (and its optional extensions)."""
        from .graph_admin import projection_schema

        log = self.open_log(schema_mode="apply")
        try:
            applied = list(log.migrations.applied_now)
        finally:
            log.close()
        state, _features = projection_schema(self.dsn, apply=True, schema=self.schema)
        return [*applied, *state.applied_now]

    def status(self, log: EventLog) -> BackendStatus:
        """Every component sharing the schema (the Eventloom and the graph projection) and the optional
        extensions the projection uses."""
        from .graph_admin import projection_schema

        own = log if isinstance(log, PostgresEventLog) else self.open_log(schema_mode="skip")
        try:
            status = own.status()
        finally:
            if own is not log:
                own.close()
        state, features = projection_schema(self.dsn, apply=False, schema=self.schema)
        status.migrations.extend(state.records)
        status.features.update(features)
        if not all(record.state == "pending" for record in state.records):  # a fresh component is created on use
            for record in state.records:
                if record.state != "applied":
                    status.problems.append(
                        f"{record.component} migration {record.name} is {record.state}: run `zaxy backend migrate`"
                        if record.state == "pending"
                        else f"{record.component} migration {record.name} is {record.state}: upgrade zaxy-agents"
                    )
        status.schema_ok = not status.problems
        return status

    @classmethod
    def graph_schema_plan(cls) -> dict[str, Any]:
        from .graph_schema import MIGRATIONS

        return {"backend": cls.name, "migrations": migration_plan(MIGRATIONS)}
