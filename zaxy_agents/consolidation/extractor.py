"""Projection of consolidation events.

- ``consolidation.candidate.created`` -> a ``consolidation_candidate`` entity named by its candidate id,
  ``review_status: pending``. It is never indexed for recall (no searchable text; the keyword lane skips the
  type): a generated summary is not memory until reviewed.
- ``consolidation.candidate.reviewed`` -> a ``consolidation_review`` entity (``consolidation_review:<candidate
  id>:<seq>``) linked to the candidate by ``reviewed_consolidation_candidate`` (seed 002), and, for reviews
  citing their candidate (written here), a new version of that candidate carrying the disposition; an
  acceptance also asserts the reviewed memory itself (an ``episode``, ``claim`` or ``procedure`` named by the
  title) labelled ``review_status: accepted, authority_status: non_authoritative``; a later non-acceptance of an
  accepted candidate closes that memory's validity window. The seed's minimal review (no candidate citation) is a
  disposition only: it never asserts anything.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.projection.extractors.common import bounded
from zaxy_agents.projection.model import EntityDraft, EntityRef, Extraction, Invalidation, RelationDraft
from zaxy_agents.projection.registry import register

from .contracts import (
    CANDIDATE_ENTITY,
    CANDIDATE_EVENT,
    REVIEW_ENTITY,
    REVIEW_EVENT,
    REVIEWED_RELATION,
    CandidatePayload,
    ReviewPayload,
)

ACCEPTED_IMPORTANCE = 0.85  # ranks with standing decisions (0.9) and above ordinary facts (0.8) in tier 1


def _citations(sources: list[Any], session: str) -> list[dict[str, Any]]:
    return [{"session": s.session or session, "seq": s.seq, "hash": s.hash} for s in sources]


@register(CANDIDATE_EVENT)
def candidate_created(envelope: dict[str, Any]) -> Extraction:
    candidate = CandidatePayload.model_validate(envelope["payload"])
    session = envelope["session"]
    entity = EntityDraft(
        name=candidate.candidate_id,
        entity_type=CANDIDATE_ENTITY,
        summary=bounded(
            f"[{candidate.candidate_type} candidate, pending review] {candidate.title}: {candidate.summary}"
        ),
        properties={
            "candidate_type": candidate.candidate_type,
            "title": candidate.title,
            "summary": bounded(candidate.summary, 2000),
            "review_status": "pending",
            "authority_status": candidate.authority_status,
            "confidence": candidate.confidence,
            "method": candidate.method,
            "purpose": candidate.purpose,
            "segment_id": candidate.segment_id,
            "source_events": _citations(candidate.source_events, session),
            "candidate_event": {"session": session, "seq": envelope["seq"], "hash": envelope["hash"]},
        },
        importance=0.2,
    )
    return Extraction(entities=[entity])


@register(REVIEW_EVENT)
def candidate_reviewed(envelope: dict[str, Any]) -> Extraction:
    review = ReviewPayload.model_validate(envelope["payload"])
    decision = review.disposition
    record = EntityDraft(
        name=f"{REVIEW_ENTITY}:{review.candidate_id}:{envelope['seq']}",
        entity_type=REVIEW_ENTITY,
        summary=bounded(f"review of {review.candidate_id}: {decision}: {review.rationale}"),
        properties={
            "candidate_id": review.candidate_id,
            "status": decision,
            "authority_status": review.authority_status,
            "rationale": bounded(review.rationale, 2000),
            "reviewer": review.reviewer,
        },
        importance=0.2,
    )
    link = RelationDraft(
        EntityRef(record.name, REVIEW_ENTITY), EntityRef(review.candidate_id, CANDIDATE_ENTITY), REVIEWED_RELATION
    )
    extraction = _reviewed_candidate(envelope, review, decision) if review.cites_candidate else Extraction()
    extraction.entities.append(record)
    extraction.relations.append(link)
    return extraction


def _reviewed_candidate(envelope: dict[str, Any], review: ReviewPayload, decision: str) -> Extraction:
    assert review.candidate is not None and review.source_events is not None
    session = envelope["session"]
    candidate_event = {
        "session": review.candidate.session or session,
        "seq": review.candidate.seq,
        "hash": review.candidate.hash,
    }
    sources = _citations(review.source_events, session)
    state = EntityDraft(
        name=review.candidate_id,
        entity_type=CANDIDATE_ENTITY,
        summary=bounded(f"[{review.candidate_type} candidate, {decision}] {review.title}: {review.rationale}"),
        properties={
            "candidate_type": review.candidate_type,
            "title": review.title,
            "review_status": decision,
            "authority_status": review.authority_status,
            "rationale": review.rationale,
            "reviewer": review.reviewer,
            "source_events": sources,
            "candidate_event": candidate_event,
            "conflicts_with": _citations(review.conflicts_with, session),
        },
        importance=0.2,
    )
    extraction = Extraction(entities=[state])
    if decision == "accepted":
        extraction.entities.append(
            EntityDraft(
                name=str(review.title),
                entity_type=str(review.candidate_type),
                summary=bounded(str(review.summary)),
                properties={
                    "review_status": "accepted",
                    "authority_status": review.authority_status,
                    "candidate_id": review.candidate_id,
                    "candidate_event": candidate_event,
                    "source_events": sources,
                    "rationale": review.rationale,
                },
                importance=ACCEPTED_IMPORTANCE,
            )
        )
    elif review.revokes_acceptance:
        reason = f"consolidation review {decision}: {review.rationale}"
        target = EntityRef(str(review.title), str(review.candidate_type))
        extraction.invalidations.append(Invalidation(target, bounded(reason)))
    return extraction
