"""Fabric operations on the storage backend itself: status, migrations, moving logs in and out as JSONL."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from zaxy_agents.config import ZaxySettings
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.storage.registry import DEFAULT_REGISTRY
from zaxy_agents.storage.status import BackendStatus
from zaxy_agents.storage.transfer import TransferResult, export_session, export_sessions, import_paths

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    pass


class BackendService(FabricService):
    """Service: the backend-management part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def __init__(self, core: FabricCore, applied_migrations: tuple[str, ...] = ()) -> None:
        super().__init__(core)
        self._applied_migrations = applied_migrations  # by MemoryFabric.for_maintenance

    @staticmethod
    def graph_schema_plan(settings: ZaxySettings | None = None) -> dict[str, Any]:
        """The graph store's migrations as data (``zaxy schema-plan``), without opening any database."""
        if settings is not None and not isinstance(settings, ZaxySettings):  # a static method: the guard skips it
            raise InvalidRequestError(
                f"graph_schema_plan(): settings must be ZaxySettings or None, not {type(settings).__name__}",
                field="settings",
                remediation="Pass ZaxySettings.resolve(...) or nothing (the settings of the environment).",
            )
        settings = settings or ZaxySettings.resolve()
        location = DEFAULT_REGISTRY.location_of(settings)
        return DEFAULT_REGISTRY.entry_for(location).backend_class().graph_schema_plan()

    def backend_status(self) -> BackendStatus:
        """Which backend, where, which server version and schema state, and how much memory it holds."""
        return self.backend.status(self.log)

    def applied_migrations(self) -> list[str]:
        """Migrations applied when this fabric opened its backend (``for_maintenance(apply_migrations=True)``)."""
        return list(self._applied_migrations)

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
