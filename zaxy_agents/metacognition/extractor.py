"""Projection of the metacognition events: typed, diagnostic graph state (seed 002 beta.2), never memory.

- ``metacognition.known_unknown.recorded`` -> a ``known_unknown`` entity named by its id, ``status: open``; a
  ``.resolved`` event adds a version with ``status: resolved`` and the resolution (recording the question again
  reopens it);
- ``metacognition.confidence.assessed`` -> a new version of the claim's ``confidence_assessment`` entity (named
  by the claim key): the versions are the append-only trajectory points (the current one is the latest
  assessment), so reading the latest confidence of every claim costs one version per claim, not per point;
- ``metacognition.reverification.requested`` / ``.resolved`` -> a ``reverification_request`` entity, open until
  a resolution version closes it.

None of them has searchable text and their types are kept out of the keyword lane: a question memory cannot
answer must never be recalled as if it were the answer. Every entity carries ``authority_status:
non_authoritative`` and its cited sources.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.projection.extractors.common import bounded
from zaxy_agents.projection.model import EntityDraft, Extraction
from zaxy_agents.projection.registry import register

from .contracts import (
    ASSESSMENT_ENTITY,
    CONFIDENCE_EVENT,
    REQUEST_ENTITY,
    REVERIFY_REQUESTED_EVENT,
    REVERIFY_RESOLVED_EVENT,
    UNKNOWN_ENTITY,
    UNKNOWN_RECORDED_EVENT,
    UNKNOWN_RESOLVED_EVENT,
    ConfidenceAssessmentPayload,
    KnownUnknownPayload,
    KnownUnknownResolvedPayload,
    ReverificationRequestPayload,
    ReverificationResolvedPayload,
    citations,
)

IMPORTANCE = 0.2


def _event(envelope: dict[str, Any]) -> dict[str, Any]:
    return {"session": envelope["session"], "seq": envelope["seq"], "hash": envelope["hash"]}


@register(UNKNOWN_RECORDED_EVENT)
def known_unknown_recorded(envelope: dict[str, Any]) -> Extraction:
    item = KnownUnknownPayload.model_validate(envelope["payload"])
    entity = EntityDraft(
        name=item.unknown_id,
        entity_type=UNKNOWN_ENTITY,
        summary=bounded(f"[known unknown, open, {item.priority}] {item.question}"),
        properties={
            "question": item.question,
            "reason": bounded(item.reason, 2000),
            "claim_key": item.claim_key,
            "priority": item.priority,
            "status": "open",
            "authority_status": item.authority_status,
            "source_events": citations(item.source_events, envelope["session"]),
            "recorded_event": _event(envelope),
        },
        importance=IMPORTANCE,
    )
    return Extraction(entities=[entity])


def _resolution(
    envelope: dict[str, Any],
    name: str,
    entity_type: str,
    label: str,
    item: KnownUnknownResolvedPayload | ReverificationResolvedPayload,
) -> Extraction:
    """A resolution: a new version of the record it closes, carrying the resolution and its citations."""
    entity = EntityDraft(
        name=name,
        entity_type=entity_type,
        summary=bounded(f"[{label}, resolved: {item.resolution}] {item.rationale}"),
        properties={
            "status": "resolved",
            "resolution": item.resolution,
            "rationale": bounded(item.rationale, 2000),
            "authority_status": item.authority_status,
            "resolution_sources": citations(item.source_events, envelope["session"]),
            "resolution_event": _event(envelope),
        },
        importance=IMPORTANCE,
    )
    return Extraction(entities=[entity])


@register(UNKNOWN_RESOLVED_EVENT)
def known_unknown_resolved(envelope: dict[str, Any]) -> Extraction:
    item = KnownUnknownResolvedPayload.model_validate(envelope["payload"])
    return _resolution(envelope, item.unknown_id, UNKNOWN_ENTITY, "known unknown", item)


@register(CONFIDENCE_EVENT)
def confidence_assessed(envelope: dict[str, Any]) -> Extraction:
    item = ConfidenceAssessmentPayload.model_validate(envelope["payload"])
    entity = EntityDraft(
        name=item.claim_key,
        entity_type=ASSESSMENT_ENTITY,
        summary=bounded(f"[confidence {item.confidence:.2f}] {item.claim_key}: {item.rationale}"),
        properties={
            "claim_key": item.claim_key,
            "confidence": item.confidence,
            "rationale": bounded(item.rationale, 2000),
            "method": item.method,
            "authority_status": item.authority_status,
            "source_events": citations(item.source_events, envelope["session"]),
            "assessment_event": _event(envelope),
        },
        importance=IMPORTANCE,
    )
    return Extraction(entities=[entity])


@register(REVERIFY_REQUESTED_EVENT)
def reverification_requested(envelope: dict[str, Any]) -> Extraction:
    item = ReverificationRequestPayload.model_validate(envelope["payload"])
    entity = EntityDraft(
        name=item.request_id,
        entity_type=REQUEST_ENTITY,
        summary=bounded(f"[re-verification, open, {item.priority}] {item.claim_key}: {item.reason}"),
        properties={
            "claim_key": item.claim_key,
            "reason": bounded(item.reason, 2000),
            "priority": item.priority,
            "status": "open",
            "authority_status": item.authority_status,
            "source_events": citations(item.source_events, envelope["session"]),
            "requested_event": _event(envelope),
        },
        importance=IMPORTANCE,
    )
    return Extraction(entities=[entity])


@register(REVERIFY_RESOLVED_EVENT)
def reverification_resolved(envelope: dict[str, Any]) -> Extraction:
    item = ReverificationResolvedPayload.model_validate(envelope["payload"])
    return _resolution(envelope, item.request_id, REQUEST_ENTITY, "re-verification", item)
