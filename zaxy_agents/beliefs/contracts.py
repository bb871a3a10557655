"""Payload contracts of ``belief.update.proposed`` (seed 002/003 beta.1) and ``belief.update.reviewed``.

A proposal carries the claim, its rationale, a confidence, the citations it rests on (at least one), the
reasoning phase it came from, ``review_status: pending`` and ``authority_status: non_authoritative``; its id is
derived from the (normalised) claim and the cited events. A review is a disposition (accepted, rejected,
deferred, conflicted) with a rationale, mirroring consolidation review: it never promotes anything, an accepted
proposal stays non-authoritative and current facts do not change.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from zaxy_agents.projection.contracts import EvidenceCitation
from zaxy_agents.projection.model import normalise_name, stable_id

PROPOSED_EVENT = "belief.update.proposed"
REVIEWED_EVENT = "belief.update.reviewed"
PROPOSAL_ENTITY = "belief_update_proposal"
AUTHORITY_STATUS = "non_authoritative"
Phase = Literal["planning", "execution", "review", "reflection"]
Disposition = Literal["accepted", "rejected", "deferred", "conflicted"]
PHASES: tuple[str, ...] = get_args(Phase)
DISPOSITIONS: tuple[str, ...] = get_args(Disposition)
PROPOSAL_ID_PATTERN = r"^bel_[0-9a-f]{24}$"
MAX_CITATIONS = 50


def _parts(citations: list[EvidenceCitation] | list[dict[str, Any]]) -> list[str]:
    parts = []
    for citation in citations:
        data = citation.model_dump() if isinstance(citation, BaseModel) else citation
        parts.append(f"{data.get('session') or ''}:{data['seq']}:{data['hash']}")
    return sorted(set(parts))


def proposal_id(claim: str, citations: list[EvidenceCitation] | list[dict[str, Any]]) -> str:
    """Same (normalised) claim on the same cited events -> same id (proposing twice proposes once)."""
    return "bel_" + stable_id("belief_update", normalise_name(claim), *_parts(citations))


class ProposalPayload(BaseModel):
    """``belief.update.proposed``: a cited proposal to change a belief, pending review."""

    model_config = ConfigDict(extra="forbid")
    contract_remediation: ClassVar[str] = (
        "A belief update proposal needs proposal_id (bel_ + 24 hex, see beliefs.contracts.proposal_id), claim, "
        "rationale, confidence in [0, 1], citations [{seq, hash (64 hex), session?}, ...] (at least one), phase "
        "(planning, execution, review, reflection), review_status 'pending' and authority_status "
        "'non_authoritative'; claim_key is optional. Use memory_propose_belief_update, which fills these in."
    )

    proposal_id: str = Field(pattern=PROPOSAL_ID_PATTERN)
    claim: str = Field(min_length=1, max_length=2000)
    rationale: str = Field(min_length=1, max_length=2000)
    confidence: float = Field(ge=0.0, le=1.0)
    citations: list[EvidenceCitation] = Field(min_length=1, max_length=MAX_CITATIONS)
    phase: Phase = "reflection"
    claim_key: str | None = Field(default=None, min_length=1, max_length=300)
    review_status: Literal["pending"]
    authority_status: Literal["non_authoritative"]

    @model_validator(mode="after")
    def _derived_id(self) -> ProposalPayload:
        for name in ("claim", "rationale"):
            if not getattr(self, name).strip():
                raise ValueError(f"{name} must not be blank")
        expected = proposal_id(self.claim, self.citations)
        if self.proposal_id != expected:
            raise ValueError(f"proposal_id must be {expected} (derived from claim and citations)")
        return self


class ReviewPayload(BaseModel):
    """``belief.update.reviewed``: a disposition of one proposal, never an authority promotion."""

    model_config = ConfigDict(extra="forbid")
    contract_remediation: ClassVar[str] = (
        "A belief update review needs proposal_id, proposal {seq, hash, session?} citing the proposal event, status "
        "(accepted, rejected, deferred, conflicted), a rationale and authority_status 'non_authoritative'; use "
        "memory_review_belief_update, which fills these in."
    )

    proposal_id: str = Field(pattern=PROPOSAL_ID_PATTERN)
    proposal: EvidenceCitation
    status: Disposition
    rationale: str = Field(min_length=1, max_length=2000)
    reviewer: str | None = Field(default=None, max_length=256)
    authority_status: Literal["non_authoritative"]

    @model_validator(mode="after")
    def _filled(self) -> ReviewPayload:
        if not self.rationale.strip():
            raise ValueError("rationale must not be blank")
        return self


CONTRACTS: dict[str, type[BaseModel]] = {PROPOSED_EVENT: ProposalPayload, REVIEWED_EVENT: ReviewPayload}
