"""The stdlib-only face of the fabric for latency-critical surfaces (IDE hook sinks).

Same validation, redaction, hashing and locking as :class:`MemoryFabric.append`, returned as plain dicts
with citations, without importing pydantic, numpy or the graph; plus a bounded tail read and the working-set
packets the SessionStart hook injects. Use the full fabric everywhere else.

With a PostgreSQL backend (``ZAXY_BACKEND=postgresql://...``) the same functions read and write the server
through :class:`~zaxy_agents.storage.postgres.log.PostgresEventLog` (psycopg's start-up makes that path
~0.2 s slower; the embedded path never imports it).
"""

from __future__ import annotations

from zaxy_agents.config import BACKEND_POSTGRESQL, ZaxySettings
from zaxy_agents.eventloom.citations import format_citation
from zaxy_agents.eventloom.drafts import prepare_draft
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.storage.files.jsonl_file import SessionFile

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from zaxy_agents.workingset import Packet, WorkingSet


def light_append(
    session: str,
    event_type: str,
    payload: dict[str, Any],
    *,
    actor: str = "agent",
    eventloom_path: str | Path | None = None,
) -> dict[str, Any]:
    """Append one event durably; returns the stored envelope plus ``citation``."""
    return light_append_many(
        session, [{"type": event_type, "payload": payload, "actor": actor}], eventloom_path=eventloom_path
    )[-1]


def light_append_many(
    session: str, drafts: list[dict[str, Any]], *, eventloom_path: str | Path | None = None
) -> list[dict[str, Any]]:
    """Append several ``{"type", "payload", "actor"}`` drafts with one lock, one write and one fsync.

    Every draft is validated and redacted before anything is written: one bad draft writes nothing.
    """
    settings = ZaxySettings.resolve(eventloom_path)
    validate_session_id(session)
    prepared = [
        prepare_draft(
            draft.get("type"),
            draft.get("payload", {}),
            draft.get("actor", "agent"),
            settings.max_payload_bytes,
            field_prefix=f"events[{index}]." if len(drafts) > 1 else "",
        )
        for index, draft in enumerate(drafts)
    ]
    if not prepared:
        return []
    if settings.backend_kind == BACKEND_POSTGRESQL:
        log = _postgres_log(settings)
        try:
            envelopes = log.append_prepared(session, prepared)
        finally:
            log.close()
    else:
        handle = SessionFile(settings.eventloom_dir, session, durability="fsync")
        try:
            envelopes = handle.append(prepared)
        finally:
            handle.close()
    return [
        {**envelope, "citation": format_citation(session, envelope["seq"], envelope["hash"])} for envelope in envelopes
    ]


def light_tail(session: str, limit: int, *, eventloom_path: str | Path | None = None) -> list[dict[str, Any]]:
    """The last ``limit`` events of ``session`` as plain envelopes, oldest first (``[]`` for no session).

    Seeks by binary search over the file, so the cost depends on ``limit``, not on the log's length.
    """
    from json import loads

    _tail, _start, lines = _recent_lines(ZaxySettings.resolve(eventloom_path), session, limit)
    return [loads(line) for line in lines]


def light_working_set(
    session: str, *, window: int | None = None, eventloom_path: str | Path | None = None
) -> WorkingSet:
    """The working set of the last ``window`` events (default :data:`~zaxy_agents.workingset.DEFAULT_WINDOW`).

    Only events the digest reads are decoded: a stored line is canonical JSON whose last key is ``type``
    (docs/eventloom.md), so the type is read off the line's end and other events are skipped undecoded.
    """
    from json import loads

    from zaxy_agents.workingset.digest import DEFAULT_WINDOW, RELEVANT_TYPES, build_working_set

    tail, start, lines = _recent_lines(ZaxySettings.resolve(eventloom_path), session, window or DEFAULT_WINDOW)
    if tail is None:
        return build_working_set(session, [])
    head_seq, head_hash = tail
    envelopes = []
    for line in lines:
        marker = line.rfind(b',"type":"')
        kind = line[marker + 9 : -3] if marker != -1 and line.endswith(b'"}\n') else None
        if kind is not None and b'"' not in kind and kind.decode() not in RELEVANT_TYPES:
            continue
        envelopes.append(loads(line.decode()))
    return build_working_set(
        session,
        envelopes,
        head_seq=head_seq,
        head_citation=format_citation(session, head_seq, head_hash),
        window_from_seq=start,
    )


def light_packet(
    session: str,
    kind: str,
    max_chars: int,
    *,
    window: int | None = None,
    eventloom_path: str | Path | None = None,
) -> Packet:
    """A ``recovery`` or ``bootstrap`` packet for ``session`` under ``max_chars`` characters."""
    from zaxy_agents.workingset.packet import render_packet

    return render_packet(light_working_set(session, window=window, eventloom_path=eventloom_path), kind, max_chars)


def _recent_lines(settings: ZaxySettings, session: str, count: int) -> tuple[tuple[int, str] | None, int, Any]:
    """``(head (seq, hash) or None, first seq, newline-terminated lines of the last count events)``."""
    validate_session_id(session)
    if settings.backend_kind == BACKEND_POSTGRESQL:
        log = _postgres_log(settings)
        try:
            head = log.head(session)
            if head is None:
                return None, 0, []
            start = max(1, head.seq - max(1, count) + 1)
            return (head.seq, head.hash), start, list(log.replay_lines(session, start, head.seq))
        finally:
            log.close()
    handle = SessionFile(settings.eventloom_dir, session)
    tail = handle.read_tail()
    if tail is None:
        return None, 0, []
    start = max(1, tail[0] - max(1, count) + 1)
    return tail, start, (line for _offset, line in handle.iter_lines(start, tail[0]))


def _postgres_log(settings: ZaxySettings) -> Any:
    from zaxy_agents.storage.postgres.log import PostgresEventLog

    return PostgresEventLog(settings.backend, max_payload_bytes=settings.max_payload_bytes)
