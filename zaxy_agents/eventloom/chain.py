"""Backend-independent rules shared by every backend: reading drafts, checking seq ranges.

(Checking stored lines lives in :mod:`.verifier` (whole chains) and :mod:`.integrity` (reads).)
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.errors import InvalidRequestError

from .models import EventDraft


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
