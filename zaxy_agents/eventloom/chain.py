"""Backend-independent rules of the chain: checking one stored line, reading drafts, checking seq ranges.

Every backend (JSONL files, PostgreSQL rows) and the export/import paths use these same functions, so a log
verifies the same way wherever it is stored.
"""

from __future__ import annotations

import json
from typing import Any

from zaxy_agents.errors import InvalidRequestError

from .canonical import encode_line, event_hash
from .models import EventDraft


def check_line(line: bytes, expected_seq: int, prev: str, session: str) -> str | None:
    """Why ``line`` breaks the chain at ``expected_seq``, or ``None`` when it is sound."""
    return inspect_line(line, expected_seq, prev, session)[0]


def inspect_line(line: bytes, expected_seq: int, prev: str, session: str) -> tuple[str | None, dict[str, Any] | None]:
    """``(problem, envelope)``: why ``line`` breaks the chain (``None`` when sound) and its decoded envelope."""
    try:
        envelope = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"line is not valid JSON: {exc}", None
    if not isinstance(envelope, dict):
        return "line is not a JSON object", None
    required = ("actor", "hash", "id", "payload", "prev_hash", "seq", "session", "timestamp", "type")
    missing = [key for key in required if key not in envelope]
    if missing:
        return f"missing envelope fields: {', '.join(missing)}", envelope
    if envelope["seq"] != expected_seq:
        return f"seq is {envelope['seq']!r}, expected {expected_seq} (missing, duplicated or reordered event)", envelope
    if envelope["session"] != session:
        return f"session field is {envelope['session']!r}, expected {session!r}", envelope
    if envelope["prev_hash"] != prev:
        return "prev_hash does not match the previous event's hash (chain broken)", envelope
    try:
        if event_hash(envelope) != envelope["hash"]:
            return "hash does not match the event content (content was modified)", envelope
        if encode_line(envelope) != line:
            return "line bytes are not the canonical encoding (the stored text was modified)", envelope
    except ValueError as exc:
        return f"line cannot be canonically encoded: {exc}", envelope
    return None, envelope


def draft_fields(draft: EventDraft | dict[str, Any], index: int) -> tuple[Any, Any, Any]:
    """(type, payload, actor) of a draft given as a model or a plain mapping."""
    if isinstance(draft, EventDraft):
        return draft.type, draft.payload, draft.actor
    if not isinstance(draft, dict) or "type" not in draft:
        raise InvalidRequestError(
            "each event needs at least a 'type'",
            field=f"events[{index}]",
            remediation='Pass objects like {"type": "task.created", "payload": {...}, "actor": "agent"}.',
        )
    unknown = set(draft) - {"type", "payload", "actor"}
    if unknown:
        raise InvalidRequestError(
            f"unknown event fields: {', '.join(sorted(unknown))}",
            field=f"events[{index}]",
            remediation="Only 'type', 'payload' and 'actor' can be set; the log assigns the rest.",
        )
    return draft["type"], draft.get("payload", {}), draft.get("actor", "agent")


def check_range(from_seq: int, to_seq: int | None) -> None:
    if not isinstance(from_seq, int) or from_seq < 1:
        raise InvalidRequestError(
            f"from_seq must be an integer >= 1, got {from_seq!r}", field="from_seq", remediation="Use 1 or more."
        )
    if to_seq is not None and (not isinstance(to_seq, int) or to_seq < from_seq):
        raise InvalidRequestError(
            f"to_seq must be an integer >= from_seq ({from_seq}), got {to_seq!r}",
            field="to_seq",
            remediation="Omit to_seq to read to the end, or pass a seq at or after from_seq.",
        )
