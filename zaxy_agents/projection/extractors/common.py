"""Small helpers shared by extractors: picking text fields, timestamps, bounded summaries."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..registry import ExtractionFailed

SUMMARY_LIMIT = 600
SEARCH_TEXT_LIMIT = 4000


def pick(payload: dict[str, Any], *keys: str) -> Any:
    """The first present, non-empty value among ``keys``."""
    for key in keys:
        value = payload.get(key)
        if type(value) is str:  # (most fields: one test instead of four comparisons)
            if value:
                return value
        elif value not in (None, "", [], {}):
            return value
    return None


def pick_text(payload: dict[str, Any], *keys: str, required: str | None = None) -> str:
    """A string field (first of ``keys``); raises :class:`ExtractionFailed` naming ``required`` if absent."""
    value = pick(payload, *keys)
    if value is None:
        if required:
            raise ExtractionFailed(f"payload needs one of {', '.join(keys)} ({required})")
        return ""
    return value if isinstance(value, str) else str(value)


def bounded(text: str, limit: int = SUMMARY_LIMIT) -> str:
    """``text`` with its whitespace collapsed, cut to ``limit`` characters (the last one then an ellipsis).

    A long text is collapsed from a prefix first: collapsing is prefix-consistent (the collapsed form of a prefix is a
    prefix of the text's collapsed form), so once that holds more than ``limit`` characters its first ``limit - 1``
    are the answer's, and the rest of the text (a 1 KB turn's last 250 characters) is never split."""
    if len(text) > limit + (margin := limit // 4):  # (a margin for the whitespace collapsing removes)
        head = " ".join(text[: limit + margin].split())
        if len(head) > limit:
            return head[: limit - 1] + "…"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def normalise_time(value: Any) -> str | None:
    """An ISO-8601 instant in the Eventloom's canonical ``...Z`` form (``None`` when unparseable)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def event_time(envelope: dict[str, Any]) -> str:
    """When the event says it happened (``occurred_at`` / ``valid_from`` in the payload) or its append time."""
    payload = envelope["payload"]
    return (
        normalise_time(payload.get("valid_from")) or normalise_time(payload.get("occurred_at")) or envelope["timestamp"]
    )


def flatten_text(value: Any, limit: int = SEARCH_TEXT_LIMIT) -> str:
    """String leaves of a JSON value, depth-first, bounded: what makes an arbitrary payload searchable."""
    parts: list[str] = []
    size = 0
    stack = [value]
    while stack and size < limit:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            size += len(item) + 1
        elif isinstance(item, dict):
            stack.extend(reversed([v for k, v in item.items() if not k.endswith("_hash") and k != "id"]))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int | float):
            parts.append(str(item))
            size += 8
    return " ".join(parts)[:limit]
