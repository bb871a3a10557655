"""The replay lane: a session's latest events, as logged, for ``replay_from_seq`` / ``max_recent_events``.

Retrieval ranks what matches the question; replay adds what just happened regardless of the question (the
seeds' "bounded recent replay"), so an agent resuming a session sees its last steps. Bookkeeping events and the
MCP server's own lifecycle captures are skipped: they are audit, not memory.
"""

from __future__ import annotations

from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.projection.extractors.common import flatten_text

from .models import EvidenceItem
from .render import one_line

SKIPPED_PREFIXES = ("checkpoint.", "eventloom.", "memory.ref.", "metacognition.", "extraction.", "store.")
MAX_RECENT_EVENTS = 50
SCAN_FACTOR = 4  # events read per wanted event (skipped bookkeeping events are common)
TEXT_LIMIT = 300


def recent_events(
    log: EventLog,
    session: str,
    *,
    limit: int,
    from_seq: int | None = None,
    until: str | None = None,
    skip_types: list[str] | None = None,
) -> list[EvidenceItem]:
    """Up to ``limit`` of the session's latest events from ``from_seq`` on (logged by ``until``), oldest first."""
    head = log.head(session)
    if head is None or limit <= 0:
        return []
    limit = min(limit, MAX_RECENT_EVENTS)
    start = max(from_seq or 1, head.seq - limit * SCAN_FACTOR + 1, 1)
    skipped = set(skip_types or ())
    items: list[EvidenceItem] = []
    for event in log.replay(session, start, head.seq):
        if until is not None and event.timestamp > until:
            break
        if event.type.startswith(SKIPPED_PREFIXES) or event.type in skipped:
            continue
        if event.type == "tool.call.completed" and event.payload.get("capture") == "lifecycle":
            continue
        text = flatten_text(event.payload, TEXT_LIMIT * 2)
        items.append(
            EvidenceItem(
                citation=event.citation,
                session=event.session,
                seq=event.seq,
                event_type=event.type,
                text=one_line(text or event.type, TEXT_LIMIT),
                status="event",
                score=0.0,
                lanes=["replay"],
            )
        )
    return items[-limit:]
