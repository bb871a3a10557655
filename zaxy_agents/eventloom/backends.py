"""Pick the Eventloom backend from the settings: embedded JSONL files (default) or a PostgreSQL server.

The PostgreSQL class (and psycopg) is imported only when a ``postgresql://`` backend is configured, so the
embedded default never pays for it.
"""

from __future__ import annotations

from zaxy_agents.config import BACKEND_POSTGRESQL, ZaxySettings

from .protocol import EventLog


def open_event_log(settings: ZaxySettings, *, schema_mode: str = "auto") -> EventLog:
    """The configured :class:`EventLog`. ``schema_mode`` applies to PostgreSQL (see ``PostgresEventLog``)."""
    if settings.backend_kind == BACKEND_POSTGRESQL:
        from zaxy_agents.storage.postgres.log import PostgresEventLog

        return PostgresEventLog(
            settings.backend,
            durability=settings.durability,
            max_payload_bytes=settings.max_payload_bytes,
            schema_mode=schema_mode,
        )
    from zaxy_agents.storage.files.jsonl_log import JsonlEventLog

    return JsonlEventLog(
        settings.eventloom_path, durability=settings.durability, max_payload_bytes=settings.max_payload_bytes
    )
