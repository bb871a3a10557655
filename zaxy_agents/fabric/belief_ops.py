"""Fabric operations for belief-update proposals (seed 002/003 beta.1) and their review.

A proposal is appended as ``belief.update.proposed`` (pending, non-authoritative, cited); a review records a
disposition (accepted, rejected, deferred, conflicted) as ``belief.update.reviewed``, mirroring consolidation
review. Neither ever changes a current fact: promotion is a separate authority path. See docs/cognitive.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zaxy_agents.beliefs import context as belief_context  # noqa: F401 - registers the checkout extension
from zaxy_agents.beliefs.contracts import (
    AUTHORITY_STATUS,
    DISPOSITIONS,
    PHASES,
    PROPOSED_EVENT,
    REVIEWED_EVENT,
    proposal_id,
)
from zaxy_agents.beliefs.state import STATUSES, counts, proposals
from zaxy_agents.errors import ConflictError, InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.instants import parse_instant

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from .cognitive_ops import CognitiveService
    from .confidence_ops import ConfidenceService
    from .log_ops import LogService
    from .projection_ops import ProjectionService

MAX_ITEMS = 200


class BeliefService(FabricService):
    """Service: propose belief updates and review them (a disposition, never a promotion)."""

    def __init__(
        self,
        core: FabricCore,
        events: LogService,
        projection: ProjectionService,
        cognitive: CognitiveService,
        confidence: ConfidenceService,
    ) -> None:
        """``confidence``: cites sources the way the metacognition records do; ``cognitive``: evidence checks."""
        super().__init__(core)
        self.events = events
        self.projection = projection
        self.cognitive = cognitive
        self.confidence = confidence

    def propose_belief_update(
        self,
        session: str,
        *,
        claim: str,
        rationale: str,
        confidence: float,
        citations: list[str | dict[str, Any]],
        phase: str = "reflection",
        claim_key: str | None = None,
        actor: str = "agent",
    ) -> dict[str, Any]:
        """Propose a cited belief update for review (idempotent: same claim and citations -> one proposal)."""
        validate_session_id(session)
        for field, value, limit in (("claim", claim, 2000), ("rationale", rationale, 2000)):
            if not isinstance(value, str) or not value.strip() or len(value) > limit:
                raise InvalidRequestError(
                    f"{field} must be a non-empty string of at most {limit} characters",
                    field=field,
                    remediation=f"Pass the {field}.",
                )
        if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
            raise InvalidRequestError(
                "confidence must be a number in [0, 1]", field="confidence", remediation="Use e.g. 0.6."
            )
        if phase not in PHASES:
            raise InvalidRequestError(
                f"unknown phase {phase!r}", field="phase", remediation=f"Use one of {', '.join(PHASES)}."
            )
        if claim_key is not None and (not isinstance(claim_key, str) or not claim_key.strip() or len(claim_key) > 300):
            raise InvalidRequestError(
                "claim_key must be a non-empty string of at most 300 characters",
                field="claim_key",
                remediation="Use <entity_type>:<name>, e.g. fact:launch date.",
            )
        cited = self.confidence.cited_sources(citations, session, required=True, field="citations")
        identifier = proposal_id(claim, cited)
        existing = self._proposal(session, identifier)
        if existing is not None:
            return {**_result(existing), "created": False}
        payload = {
            "proposal_id": identifier,
            "claim": claim,
            "rationale": rationale,
            "confidence": float(confidence),
            "citations": cited,
            "phase": phase,
            **({"claim_key": claim_key} if claim_key is not None else {}),
            "review_status": "pending",
            "authority_status": AUTHORITY_STATUS,
        }
        self.events.append(session, PROPOSED_EVENT, payload, actor=actor)
        created = self._proposal(session, identifier)
        assert created is not None
        return {**_result(created), "created": True}

    def review_belief_update(
        self,
        session: str,
        proposal_id: str,
        *,
        status: str,
        rationale: str,
        reviewer: str | None = None,
        actor: str = "reviewer",
    ) -> dict[str, Any]:
        """Record a disposition of a proposal. Never a promotion: current facts do not change, and an accepted
        proposal stays non-authoritative until a separate authority path promotes supported state."""
        validate_session_id(session)
        if status not in DISPOSITIONS:
            raise InvalidRequestError(
                f"unknown review status {status!r}",
                field="status",
                remediation=f"Use one of {', '.join(DISPOSITIONS)} (a review cannot promote).",
            )
        if not isinstance(rationale, str) or not rationale.strip() or len(rationale) > 2000:
            raise InvalidRequestError(
                "a review needs a rationale (at most 2000 characters)", field="rationale", remediation="Say why."
            )
        item = self._proposal(session, proposal_id)
        if item is None:
            raise NotFoundError(
                f"no belief update proposal {proposal_id!r} in session {session!r}",
                field="proposal_id",
                remediation="List them with memory_belief_update_proposals.",
            )
        if status == "accepted" and item["review_status"] == "accepted":
            raise ConflictError(
                f"proposal {proposal_id} is already accepted",
                field="proposal_id",
                remediation="Nothing to do; review it as rejected or conflicted to revoke the acceptance.",
            )
        if status == "accepted" and not item["citations_resolve"]:
            raise ConflictError(
                f"proposal {proposal_id} cites events that no longer resolve",
                field="proposal_id",
                remediation="Reject it and propose again from current memory.",
            )
        proposal_event = self.log.resolve(item["citation"])
        payload = {
            "proposal_id": proposal_id,
            "proposal": {
                "seq": proposal_event.seq,
                "hash": proposal_event.hash,
                **({"session": proposal_event.session} if proposal_event.session != session else {}),
            },
            "status": status,
            "rationale": rationale,
            **({"reviewer": reviewer} if reviewer else {}),
            "authority_status": AUTHORITY_STATUS,
        }
        event = self.events.append(session, REVIEWED_EVENT, payload, actor=actor)
        reviewed = self._proposal(session, proposal_id)
        assert reviewed is not None
        return {
            "proposal_id": proposal_id,
            "status": status,
            "citation": event.citation,
            "promoted": False,
            "authority_status": AUTHORITY_STATUS,
            "proposal": reviewed,
        }

    def belief_proposals(
        self,
        session: str,
        *,
        scope: list[str] | None = None,
        status: str | None = None,
        as_of: str | None = None,
        limit: int = 50,
    ) -> dict[str, Any]:
        """Belief-update proposals of the session (and scope), newest first, with their review state."""
        validate_session_id(session)
        for index, name in enumerate(scope or []):
            validate_session_id(name, field=f"scope[{index}]")
        if status is not None and status not in STATUSES:
            raise InvalidRequestError(
                f"unknown status {status!r}", field="status", remediation=f"Use one of {', '.join(STATUSES)}."
            )
        if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= MAX_ITEMS:
            raise InvalidRequestError(
                f"limit must be an integer between 0 and {MAX_ITEMS}", field="limit", remediation="Use e.g. 50."
            )
        sessions = sorted(set(scope or []) | {session})
        as_of = parse_instant(as_of)
        self.projection.project(sessions)
        items = proposals(self.projection.projector.catalog, sessions, as_of, self.cognitive.evidence_resolves)
        shown = [item for item in items if status is None or item["review_status"] == status]
        return {"session": session, "sessions": sessions, "as_of": as_of, **counts(items), "items": shown[:limit]}

    def _proposal(self, session: str, identifier: str) -> dict[str, Any] | None:
        if not isinstance(identifier, str) or not identifier.startswith("bel_"):
            raise InvalidRequestError(
                f"not a belief update proposal id: {identifier!r}",
                field="proposal_id",
                remediation="Use a proposal_id (bel_...) from memory_belief_update_proposals.",
            )
        self.projection.project([session])
        for item in proposals(self.projection.projector.catalog, [session], None, self.cognitive.evidence_resolves):
            if item["proposal_id"] == identifier:
                return item
        return None


def _result(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "proposal_id": item["proposal_id"],
        "citation": item["citation"],
        "review_status": item["review_status"],
        "authority_status": AUTHORITY_STATUS,
        "proposal": item,
    }
