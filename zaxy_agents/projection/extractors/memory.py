"""Memory-maintenance events: reinforcement, feedback, invalidation, inferred edges, LangGraph store items."""

from __future__ import annotations

from typing import Any

from ..contracts import InferenceEdgePayload
from ..model import EntityDraft, EntityRef, Extraction, FeedbackSignal, Invalidation, RelationDraft
from ..registry import ExtractionFailed, register
from .common import bounded, event_time, flatten_text, normalise_time, pick, pick_text

POSITIVE_SIGNALS = {"used", "helpful", "confirmed", "reinforced"}


def _target(payload: dict[str, Any]) -> EntityRef:
    """The entity a feedback or invalidation names: ``entity_name`` (seed shape) or ``entity`` (earlier shape)."""
    name = pick_text(payload, "entity_name", "entity", "name", required="the target entity name")
    return EntityRef(name, pick_text(payload, "entity_type", "type") or "fact")


@register("memory.reinforced", "memory.feedback")
def feedback(envelope: dict[str, Any]) -> Extraction:
    """``{entity_name, entity_type, feedback, weight?, ...}`` (seed shape) or ``{entity, entity_type, signal}``."""
    payload = envelope["payload"]
    signal = pick_text(payload, "feedback", "signal") or ("used" if envelope["type"] == "memory.reinforced" else "")
    weight = payload.get("weight", 1.0)
    positive = envelope["type"] == "memory.reinforced" and signal in POSITIVE_SIGNALS
    return Extraction(feedback=[FeedbackSignal(_target(payload), signal or "unspecified", float(weight), positive)])


@register("memory.invalidated")
def invalidated(envelope: dict[str, Any]) -> Extraction:
    """``{entity_name, entity_type, invalid_at?, reason?}``: closes the window at ``invalid_at`` (else now)."""
    payload = envelope["payload"]
    at = normalise_time(payload.get("invalid_at"))
    if at is not None and at > envelope["timestamp"]:
        at = envelope["timestamp"]  # memory cannot be invalidated ahead of its own log
    return Extraction(invalidations=[Invalidation(_target(payload), pick_text(payload, "reason"), at)])


@register("inference.edge.generated")
def inferred_edge(envelope: dict[str, Any]) -> Extraction:
    edge = InferenceEdgePayload.model_validate(envelope["payload"])
    return inferred_edge_extraction(envelope, edge, edge.relation_type, edge.confidence, edge.inference_method)


def inferred_edge_extraction(
    envelope: dict[str, Any], edge: Any, relation_type: str, confidence: float, method: str
) -> Extraction:
    """An inferred edge between two referenced entities, carrying its method, confidence and evidence citation.

    ``edge`` is any validated edge payload with ``source``/``target`` pointers and an ``evidence`` block
    (inference edges here, causal edges in ``zaxy_agents.causal``). Missing evidence, or evidence without a hash,
    is recorded as such (seq 0 / empty hash): the edge is then reported uncited, never given evidence it lacks.
    """
    evidence = edge.evidence
    relation = RelationDraft(
        EntityRef(edge.source.name, edge.source.entity_type),
        EntityRef(edge.target.name, edge.target.entity_type),
        relation_type,
        inferred=True,
        confidence=confidence,
        inference_method=method,
        evidence_session=(evidence.session if evidence is not None else None) or envelope["session"],
        evidence_seq=evidence.seq if evidence is not None else 0,
        evidence_hash=(evidence.hash or "") if evidence is not None else "",
    )
    references = [
        EntityDraft(edge.source.name, edge.source.entity_type, mode="reference"),
        EntityDraft(edge.target.name, edge.target.entity_type, mode="reference"),
    ]
    return Extraction(entities=references, relations=[relation])


@register("store.item.put")
def store_item(envelope: dict[str, Any]) -> Extraction:
    """LangGraph store items become memory: ``{namespace: [...], key, value, text?}``."""
    payload = envelope["payload"]
    namespace = payload.get("namespace")
    key = pick_text(payload, "key", required="the item key")
    if not isinstance(namespace, list):
        raise ExtractionFailed("store.item.put needs a namespace list")
    indexed = payload.get("texts")
    joined = " ".join(t.get("text", "") for t in indexed if isinstance(t, dict)) if isinstance(indexed, list) else ""
    text = joined or pick_text(payload, "text", "indexed_text") or flatten_text(pick(payload, "value") or {})
    name = "/".join([*map(str, namespace), key])
    entity = EntityDraft(
        name=name,
        entity_type="memory_item",
        summary=bounded(text),
        properties={"namespace": namespace, "key": key},
        valid_from=event_time(envelope),
        importance=0.7,
    )
    return Extraction(entities=[entity], searchable_text=text)


@register("store.item.deleted")
def store_item_deleted(envelope: dict[str, Any]) -> Extraction:
    payload = envelope["payload"]
    namespace = payload.get("namespace")
    key = pick_text(payload, "key", required="the item key")
    if not isinstance(namespace, list):
        raise ExtractionFailed("store.item.deleted needs a namespace list")
    name = "/".join([*map(str, namespace), key])
    return Extraction(invalidations=[Invalidation(EntityRef(name, "memory_item"), "deleted from the store")])


@register("store.*")
def store_internal(envelope: dict[str, Any]) -> Extraction:
    """Other store bookkeeping (TTL sweeps, refreshes) stays in the log only."""
    return Extraction()
