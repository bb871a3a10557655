"""Projection of belief-update proposals and their reviews: review material, never memory.

- ``belief.update.proposed`` -> a ``belief_update_proposal`` entity named by its id, ``review_status: pending``;
- ``belief.update.reviewed`` -> a new version of it carrying the disposition and the review's rationale.

Neither has searchable text and the type is kept out of the keyword lane: proposal text is not canonical memory,
and no version of it ever asserts or invalidates a fact (promotion is a separate authority path).
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.projection.extractors.common import bounded
from zaxy_agents.projection.model import EntityDraft, Extraction
from zaxy_agents.projection.registry import register

from .contracts import PROPOSAL_ENTITY, PROPOSED_EVENT, REVIEWED_EVENT, ProposalPayload, ReviewPayload

IMPORTANCE = 0.2


@register(PROPOSED_EVENT)
def belief_update_proposed(envelope: dict[str, Any]) -> Extraction:
    proposal = ProposalPayload.model_validate(envelope["payload"])
    session = envelope["session"]
    entity = EntityDraft(
        name=proposal.proposal_id,
        entity_type=PROPOSAL_ENTITY,
        summary=bounded(f"[belief update, pending review, {proposal.phase}] {proposal.claim}"),
        properties={
            "claim": bounded(proposal.claim, 2000),
            "rationale": bounded(proposal.rationale, 2000),
            "confidence": proposal.confidence,
            "phase": proposal.phase,
            "claim_key": proposal.claim_key,
            "citations": [{"session": c.session or session, "seq": c.seq, "hash": c.hash} for c in proposal.citations],
            "review_status": "pending",
            "authority_status": proposal.authority_status,
            "proposal_event": {"session": session, "seq": envelope["seq"], "hash": envelope["hash"]},
        },
        importance=IMPORTANCE,
    )
    return Extraction(entities=[entity])


@register(REVIEWED_EVENT)
def belief_update_reviewed(envelope: dict[str, Any]) -> Extraction:
    review = ReviewPayload.model_validate(envelope["payload"])
    session = envelope["session"]
    entity = EntityDraft(
        name=review.proposal_id,
        entity_type=PROPOSAL_ENTITY,
        summary=bounded(f"[belief update, {review.status}] {review.rationale}"),
        properties={
            "review_status": review.status,
            "rationale": bounded(review.rationale, 2000),
            "reviewer": review.reviewer,
            "authority_status": review.authority_status,
            "proposal_event": {
                "session": review.proposal.session or session,
                "seq": review.proposal.seq,
                "hash": review.proposal.hash,
            },
            "review_event": {"session": session, "seq": envelope["seq"], "hash": envelope["hash"]},
        },
        importance=IMPORTANCE,
    )
    return Extraction(entities=[entity])
