"""The stdlib-only append path for latency-critical surfaces (IDE hook sinks).

Same validation, redaction, hashing and locking as :class:`MemoryFabric.append`, returned as a plain dict
with its citation, without importing pydantic, numpy or the graph. Use the full fabric everywhere else.
"""

from __future__ import annotations

from pathlib import Path

from zaxy_agents.config import BACKEND_POSTGRESQL, ZaxySettings
from zaxy_agents.eventloom.citations import format_citation
from zaxy_agents.eventloom.drafts import prepare_draft
from zaxy_agents.eventloom.jsonl_file import SessionFile
from zaxy_agents.eventloom.validation import validate_session_id

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any


def light_append(
    session: str,
    event_type: str,
    payload: dict[str, Any],
    *,
    actor: str = "agent",
    eventloom_path: str | Path | None = None,
) -> dict[str, Any]:
    """Append one event durably; returns the stored envelope plus ``citation``."""
    settings = ZaxySettings.resolve(eventloom_path)
    validate_session_id(session)
    draft = prepare_draft(event_type, payload, actor, settings.max_payload_bytes)
    if settings.backend_kind == BACKEND_POSTGRESQL:
        return _postgres_append(settings, session, draft)
    handle = SessionFile(settings.eventloom_path, session, durability="fsync")
    try:
        envelope = handle.append([draft])[-1]
    finally:
        handle.close()
    return {**envelope, "citation": format_citation(session, envelope["seq"], envelope["hash"])}


def _postgres_append(settings: ZaxySettings, session: str, draft: Any) -> dict[str, Any]:
    """The same append on a shared PostgreSQL backend (psycopg start-up makes this path ~0.2 s slower)."""
    from zaxy_agents.eventloom.postgres_log import PostgresEventLog

    log = PostgresEventLog(settings.backend, max_payload_bytes=settings.max_payload_bytes)
    try:
        envelope = log.append_prepared(session, [draft])[-1]
    finally:
        log.close()
    return {**envelope, "citation": format_citation(session, envelope["seq"], envelope["hash"])}
