"""The stdlib-only face of the fabric for latency-critical surfaces (IDE hook sinks).

Same validation, redaction, hashing and locking as :class:`MemoryFabric.append`, returned as plain dicts
with citations, without importing pydantic, numpy or the graph; plus a bounded tail read and the working-set
packets the SessionStart hook injects. Use the full fabric everywhere else.

The backend's light log (:class:`~zaxy_agents.storage.protocols.LightLog`) comes from the storage registry: the
files backend appends to the session file directly; PostgreSQL goes through its log (psycopg's start-up makes
that path ~0.2 s slower; the files path never imports it).
"""

from __future__ import annotations

from zaxy_agents.config import ZaxySettings
from zaxy_agents.eventloom.citations import format_citation
from zaxy_agents.eventloom.drafts import prepare_draft
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.storage.registry import DEFAULT_REGISTRY

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
    log = DEFAULT_REGISTRY.open_light(settings)
    try:
        envelopes = log.append_prepared(session, prepared)
    finally:
        log.close()
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
    log = DEFAULT_REGISTRY.open_light(settings)
    try:
        head, start, lines = log.recent_lines(session, count)
        return head, start, list(lines)
    finally:
        log.close()
