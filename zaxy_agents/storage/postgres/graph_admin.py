"""Schema state of the projection component on a PostgreSQL server, for ``zaxy backend status | migrate``."""

from __future__ import annotations

import psycopg

from zaxy_agents.storage.postgres.connect import probe_connection, unavailable
from zaxy_agents.storage.postgres.dsn import PostgresOptions
from zaxy_agents.storage.postgres.migrations import ensure_schema
from zaxy_agents.storage.records import MigrationState

from .graph_features import detect_features
from .graph_schema import MIGRATIONS


def projection_schema(dsn: str, *, apply: bool, schema: str | None = None) -> tuple[MigrationState, dict[str, str]]:
    """The projection migrations (applied now when ``apply``) and a note per optional extension."""
    options = PostgresOptions.from_env(schema=schema)
    conn = probe_connection(dsn, options)
    try:
        state = ensure_schema(conn, options.schema, MIGRATIONS, "apply" if apply else "skip")
        features = detect_features(conn, options.schema, create=apply)
    except psycopg.Error as exc:
        raise unavailable(dsn, exc) from exc
    finally:
        conn.close()
    return state, features.notes
