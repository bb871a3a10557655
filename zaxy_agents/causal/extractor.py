"""Projection of causal events: ``causal.edge.generated`` -> an inferred ``causal_<relation>`` edge with its
audit trail; ``outcome.explained`` -> an ``explanation`` entity (searchable) referencing cause and effect."""

from __future__ import annotations

from typing import Any

from zaxy_agents.projection.extractors.common import bounded, event_time, flatten_text
from zaxy_agents.projection.extractors.memory import inferred_edge_extraction
from zaxy_agents.projection.model import EntityDraft, Extraction
from zaxy_agents.projection.registry import register

from .contracts import CAUSAL_EDGE_EVENT, OUTCOME_EXPLAINED_EVENT, CausalEdgePayload
from .explanations import endpoint, parse_explanation


@register(CAUSAL_EDGE_EVENT)
def causal_edge(envelope: dict[str, Any]) -> Extraction:
    """The edge is ``inferred`` with the causal method, confidence and evidence citation as audit fields."""
    edge = CausalEdgePayload.model_validate(envelope["payload"])
    return inferred_edge_extraction(envelope, edge, edge.graph_relation_type, edge.confidence, edge.causal_method)


@register(OUTCOME_EXPLAINED_EVENT)
def outcome_explained(envelope: dict[str, Any]) -> Extraction:
    """An explanation is memory in its own right (searchable); the causal edge comes from the producer."""
    payload = envelope["payload"]
    structured = parse_explanation(payload)
    text = flatten_text(payload)
    references = [
        EntityDraft(point.name, point.entity_type, mode="reference")
        for point in (endpoint(payload.get("cause")), endpoint(payload.get("effect")))
        if point is not None
    ]
    if structured is not None:
        headline = f"{structured.cause.name} {structured.relation} {structured.effect.name}"
        summary = headline + (f": {structured.text}" if structured.text else "")
    else:
        summary = text or "outcome explained"
    explanation = EntityDraft(
        name=f"explanation #{envelope['seq']}",
        entity_type="explanation",
        summary=bounded(summary),
        properties={"structured": structured is not None, **({"relation": structured.relation} if structured else {})},
        valid_from=event_time(envelope),
        importance=0.5,
    )
    searchable = summary if structured is not None else text  # citations and hashes are not searchable text
    return Extraction(entities=[*references, explanation], searchable_text=bounded(searchable, 4000))
