"""Inference producers: events that deterministically justify an inferred edge.

Producers run in the fabric right after an append (never during replay or rebuild, so a rebuild can never
append anything). Each produced edge is itself an ``inference.edge.generated`` event: cited, replayable, and
marked inferred with its method and confidence. ``@register_producer`` only labels a function; a
:class:`ProducerTable` is built from explicit modules (see ``zaxy_agents.fabric.features``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from zaxy_agents.errors import ZaxyError
from zaxy_agents.eventloom.models import Event
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.labels import label_of, labelled, put_label

from .registry import ExtractorTable

LIKELY_IMPLEMENTED_DECISION = "likely_implemented_decision"
TASK_DECISION_METHOD = "task_completed_decision_citation_v1"
TASK_DECISION_CONFIDENCE = 0.86

# A producer returns the event drafts one appended event justifies (usually none).
Producer = Callable[[Event, EventLog], list[dict[str, Any]]]
PRODUCES = "zaxy_produces"  # the label @register_producer puts on a function


def register_producer(*event_types: str) -> Callable[[Producer], Producer]:
    """Label a producer with the exact event types it reacts to (feature modules add theirs, e.g. causal)."""

    def label(function: Producer) -> Producer:
        put_label(function, PRODUCES, event_types)
        return function

    return label


class ProducerTable:
    """Event type -> producers, built once from explicit modules, plus the built-in task -> decision edge."""

    def __init__(self, producers: Iterable[Producer], extractors: ExtractorTable) -> None:
        self._extractors = extractors
        self._by_type: dict[str, list[Producer]] = {}
        for function in producers:
            for event_type in label_of(function, PRODUCES):
                self._by_type.setdefault(event_type, []).append(function)

    @classmethod
    def from_modules(cls, modules: Iterable[ModuleType], extractors: ExtractorTable) -> ProducerTable:
        return cls(labelled(modules, PRODUCES), extractors)

    def produce(self, event: Event, log: EventLog) -> list[dict[str, Any]]:
        """Drafts of inference events justified by ``event`` (empty when it justifies nothing)."""
        drafts: list[dict[str, Any]] = []
        if event.type == "task.completed":
            draft = _task_completed_decision(event, log, self._extractors)
            drafts += [draft] if draft else []
        for producer in self._by_type.get(event.type, ()):
            drafts += producer(event, log)
        return drafts


def _task_completed_decision(event: Event, log: EventLog, extractors: ExtractorTable) -> dict[str, Any] | None:
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
    task_entities = [
        e for e in extractors.extract(event.envelope()).entities if e.entity_type == "task" and e.mode == "assert"
    ]
    decision_entities = [e for e in extractors.extract(decision.envelope()).entities if e.entity_type == "decision"]
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
