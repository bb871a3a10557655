"""The replay lane: a session's latest events, as logged, for ``replay_from_seq`` / ``max_recent_events``.

Retrieval ranks what matches the question; replay adds what just happened regardless of the question (the
seeds' "bounded recent replay"), so an agent resuming a session sees its last steps. Bookkeeping events and the
MCP server's own lifecycle captures are skipped: they are audit, not memory.
"""

from __future__ import annotations

from zaxy_agents.eventloom.citations import format_citation
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
    # replay_envelopes skips an event whose bytes do not match its hash (read-side verification); erased events
    # have nothing to show.
    for event in log.replay_envelopes(session, start, head.seq):
        kind, payload = event["type"], event["payload"]
        if until is not None and event["timestamp"] > until:
            break
        if "erased" in event or kind.startswith(SKIPPED_PREFIXES) or kind in skipped:
            continue
        if kind == "tool.call.completed" and payload.get("capture") == "lifecycle":
            continue
        text = flatten_text(payload, TEXT_LIMIT * 2)
        items.append(
            EvidenceItem(
                citation=format_citation(session, event["seq"], event["hash"]),
                session=session,
                seq=event["seq"],
                event_type=kind,
                text=one_line(text or kind, TEXT_LIMIT),
                status="event",
                score=0.0,
                lanes=["replay"],
            )
        )
    return items[-limit:]
