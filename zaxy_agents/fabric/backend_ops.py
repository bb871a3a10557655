"""Fabric operations on the storage backend itself: status, migrations, moving logs in and out as JSONL."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from zaxy_agents.config import BACKEND_JSONL, BACKEND_POSTGRESQL, ZaxySettings
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.backends import open_event_log
from zaxy_agents.eventloom.transfer import TransferResult, export_session, export_sessions, import_paths
from zaxy_agents.storage.status import BackendStatus

if TYPE_CHECKING:
    from zaxy_agents.eventloom.protocol import EventLog


class BackendOperations:
    """Mixin: the backend-management part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    log: EventLog
    settings: ZaxySettings

    @classmethod
    def for_maintenance(cls, settings: ZaxySettings, *, apply_migrations: bool = False) -> Any:
        """A fabric that opens even when the schema needs migrating (``skip``), or migrates it (``apply``): on
        PostgreSQL every component sharing the schema (the Eventloom, then the graph projection)."""
        mode = "apply" if apply_migrations else "skip"
        fabric = cls(settings, log=open_event_log(settings, schema_mode=mode))  # type: ignore[call-arg]
        if apply_migrations and settings.backend_kind == BACKEND_POSTGRESQL:
            from zaxy_agents.storage.postgres.graph_admin import projection_schema

            state, _features = projection_schema(settings.backend, apply=True)
            fabric._projection_applied = list(state.applied_now)
        return fabric

    def backend_status(self) -> BackendStatus:
        """Which backend, where, which server version and schema state, and how much memory it holds.

        On PostgreSQL the report covers every component sharing the schema (the Eventloom and the graph
        projection) and the optional extensions the projection uses.
        """
        describe = getattr(self.log, "status", None)
        if callable(describe):
            status: BackendStatus = describe()
            if self.settings.backend_kind == BACKEND_POSTGRESQL:
                self._add_projection_status(status)
            return status
        summaries = self.log.sessions()
        return BackendStatus(
            backend=BACKEND_JSONL,
            location=self.settings.location,
            session_count=len(summaries),
            event_count=sum(summary.event_count for summary in summaries),
            size_bytes=sum(summary.size_bytes for summary in summaries),
        )

    def _add_projection_status(self, status: BackendStatus) -> None:
        from zaxy_agents.storage.postgres.graph_admin import projection_schema

        state, features = projection_schema(self.settings.backend, apply=False)
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

    def applied_migrations(self) -> list[str]:
        """Migrations applied when this fabric opened its backend (``for_maintenance(apply_migrations=True)``):
        the Eventloom's, then the projection's."""
        state = getattr(self.log, "migrations", None)
        return [*getattr(state, "applied_now", []), *getattr(self, "_projection_applied", [])]

    def export_jsonl(
        self,
        *,
        output_dir: str | os.PathLike[str] | None = None,
        output_file: str | os.PathLike[str] | None = None,
        sessions: Iterable[str] | None = None,
        overwrite: bool = False,
    ) -> list[TransferResult]:
        """Export one session to a file, or sessions (default all) to ``<dir>/<session>.jsonl``."""
        if (output_file is None) == (output_dir is None):
            raise InvalidRequestError(
                "give exactly one of an output file or an output folder",
                field="--output",
                remediation="Use --output FILE with one --session-id, or --output-dir DIR.",
            )
        if output_file is not None:
            names = list(sessions or [])
            if len(names) != 1:
                raise InvalidRequestError(
                    "an output file holds exactly one session",
                    field="--session-id",
                    remediation="Name one --session-id with --output, or use --output-dir for several sessions.",
                )
            return [export_session(self.log, names[0], output_file, overwrite=overwrite)]
        assert output_dir is not None  # checked above
        return export_sessions(self.log, output_dir, sessions, overwrite=overwrite)

    def import_jsonl(self, paths: Iterable[str | os.PathLike[str]]) -> list[TransferResult]:
        """Import JSONL log files or folders of them; events already present are skipped."""
        return import_paths(self.log, paths)
