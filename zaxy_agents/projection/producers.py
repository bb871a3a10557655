"""Built-in inference producers: events that deterministically justify an inferred edge.

Producers run in the fabric right after an append (never during replay or rebuild, so a rebuild can never
append anything). Each produced edge is itself an ``inference.edge.generated`` event: cited, replayable, and
marked inferred with its method and confidence.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.errors import ZaxyError
from zaxy_agents.eventloom.models import Event
from zaxy_agents.eventloom.protocol import EventLog

from .registry import extract

LIKELY_IMPLEMENTED_DECISION = "likely_implemented_decision"
TASK_DECISION_METHOD = "task_completed_decision_citation_v1"
TASK_DECISION_CONFIDENCE = 0.86


def produce_inferences(event: Event, log: EventLog) -> list[dict[str, Any]]:
    """Drafts of inference events justified by ``event`` (empty when it justifies nothing)."""
    if event.type == "task.completed":
        draft = _task_completed_decision(event, log)
        return [draft] if draft else []
    return []


def _task_completed_decision(event: Event, log: EventLog) -> dict[str, Any] | None:
    """A completed task citing a decision (seq + full hash) likely implemented it; no citation, no edge."""
    payload = event.payload
    seq, digest = payload.get("decision_event_seq"), payload.get("decision_event_hash")
    if not isinstance(seq, int) or not isinstance(digest, str) or len(digest) != 64:
        return None
    session = payload.get("decision_session") if isinstance(payload.get("decision_session"), str) else event.session
    try:
        decision = log.get(session, seq)
    except ZaxyError:
        return None
    if decision.hash != digest or decision.type != "decision.recorded":
        return None
    task_entities = [e for e in extract(event.envelope()).entities if e.entity_type == "task" and e.mode == "assert"]
    decision_entities = [e for e in extract(decision.envelope()).entities if e.entity_type == "decision"]
    if not task_entities or not decision_entities:
        return None
    return {
        "type": "inference.edge.generated",
        "actor": "zaxy.inference",
        "payload": {
            "source": {"name": task_entities[0].name, "entity_type": "task"},
            "target": {"name": decision_entities[0].name, "entity_type": "decision"},
            "relation_type": LIKELY_IMPLEMENTED_DECISION,
            "confidence": TASK_DECISION_CONFIDENCE,
            "inference_method": TASK_DECISION_METHOD,
            "evidence": {"seq": event.seq, "hash": event.hash, "session": event.session},
            "source_event_seq": event.seq,
        },
    }
