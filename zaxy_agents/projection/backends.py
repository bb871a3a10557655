"""Pick the projection store from the settings: embedded Kuzu (default) or the shared PostgreSQL graph.

The same setting that selects the Eventloom backend (``ZAXY_BACKEND``) selects the graph store, so a worker
pointed at a PostgreSQL server projects into that server's graph of record, shared with every other worker.
The per-process state (catalog snapshot, index snapshots) stays on the local disk, in a folder per
deployment, so switching backends or servers never mixes snapshots.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from zaxy_agents.config import BACKEND_POSTGRESQL, ZaxySettings

from .protocol import ProjectionStore


def projection_backend(settings: ZaxySettings) -> tuple[Callable[[Path], ProjectionStore] | None, Path]:
    """``(store factory, folder for this process's derived state)``; a ``None`` factory means embedded Kuzu."""
    if settings.backend_kind != BACKEND_POSTGRESQL:
        return None, settings.derived_path
    from zaxy_agents.storage.postgres.dsn import PostgresOptions, redact_dsn

    schema = PostgresOptions.from_env().schema
    identity = hashlib.sha256(f"{redact_dsn(settings.backend)}\x1f{schema}".encode()).hexdigest()[:16]

    def open_postgres_store(_graph_path: Path) -> ProjectionStore:
        from zaxy_agents.storage.postgres.graph_store import PostgresProjectionStore

        return PostgresProjectionStore(settings.backend, schema=schema)

    return open_postgres_store, settings.derived_path / "postgresql" / identity
