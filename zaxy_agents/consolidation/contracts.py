"""Payload contracts of ``consolidation.candidate.created`` and ``consolidation.candidate.reviewed``.

A candidate cites at least one source event (seq + 64-hex hash), carries a deterministic id derived from its
type, title and sources, and is always created ``pending`` and ``non_authoritative``. Two id derivations are
valid: ours (``cand_`` + 24 hex of type, normalised title and cited events) and the seed's
(``consolidation:<type>:`` + 16 hex of the JSON of type, title and sources), so logs written by either read.

A review is a disposition (accepted, rejected, deferred, conflicted) with a rationale, in ``status`` (the
seed's name; this project's earlier logs say ``decision``); it can never change the authority status. Reviews
written here also cite the candidate event and repeat its type, title, summary and sources (what the read-side
gate checks); the seed's minimal review ``{candidate_id, status, authority_status, rationale}`` is read as a
disposition only.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from zaxy_agents.projection.contracts import EvidenceCitation
from zaxy_agents.projection.model import normalise_name, stable_id

CANDIDATE_EVENT = "consolidation.candidate.created"
REVIEW_EVENT = "consolidation.candidate.reviewed"
CANDIDATE_ENTITY = "consolidation_candidate"

CandidateType = Literal["episode", "claim", "procedure"]
ReviewDecision = Literal["accepted", "rejected", "deferred", "conflicted"]
CANDIDATE_TYPES: tuple[str, ...] = get_args(CandidateType)
REVIEW_DECISIONS: tuple[str, ...] = get_args(ReviewDecision)
AUTHORITY_STATUS = "non_authoritative"
MAX_SOURCES = 200
CANDIDATE_ID_PATTERN = r"^(cand_[0-9a-f]{24}|consolidation:(episode|claim|procedure):[0-9a-f]{16})$"
REVIEW_ENTITY = "consolidation_review"
REVIEWED_RELATION = "reviewed_consolidation_candidate"


def candidate_id(candidate_type: str, title: str, sources: list[EvidenceCitation] | list[dict[str, Any]]) -> str:
    """Deterministic id: same type, same (normalised) title, same cited events -> same id."""
    parts = []
    for source in sources:
        data = source.model_dump() if isinstance(source, BaseModel) else source
        parts.append(f"{data.get('session') or ''}:{data['seq']}:{data['hash']}")
    return "cand_" + stable_id("consolidation", candidate_type, normalise_name(title), *sorted(set(parts)), length=24)


def seed_candidate_id(candidate_type: str, title: str, sources: list[EvidenceCitation] | list[dict[str, Any]]) -> str:
    """The seed implementation's id: ``consolidation:<type>:`` + 16 hex of its canonical JSON."""
    events = [
        {"seq": data["seq"], "hash": data["hash"]}
        for data in (s.model_dump() if isinstance(s, BaseModel) else s for s in sources)
    ]
    raw = json.dumps(
        {"candidate_type": candidate_type, "title": title, "source_events": events},
        sort_keys=True,
        separators=(",", ":"),
    )
    return f"consolidation:{candidate_type}:{hashlib.sha256(raw.encode('utf-8')).hexdigest()[:16]}"


def valid_candidate_id(identifier: str, candidate_type: str, title: str, sources: list[Any]) -> bool:
    derived = (candidate_id(candidate_type, title, sources), seed_candidate_id(candidate_type, title, sources))
    return identifier in derived


class CandidatePayload(BaseModel):
    """``consolidation.candidate.created``: a cited summary awaiting review."""

    model_config = ConfigDict(extra="forbid")
    contract_remediation: ClassVar[str] = (
        "A consolidation candidate needs candidate_id (see consolidation.contracts.candidate_id), candidate_type "
        "(episode, claim, procedure), title, summary, source_events [{seq, hash (64 hex), session?}, ...] (at "
        "least one), confidence in [0,1], method, purpose, review_status 'pending' and authority_status "
        "'non_authoritative'; see docs/cognitive.md."
    )

    candidate_id: str = Field(pattern=CANDIDATE_ID_PATTERN)
    candidate_type: CandidateType
    title: str = Field(min_length=1, max_length=200)
    summary: str = Field(min_length=1, max_length=4000)
    source_events: list[EvidenceCitation] = Field(min_length=1, max_length=MAX_SOURCES)
    confidence: float = Field(ge=0.0, le=1.0)
    method: str = Field(min_length=1, max_length=120)
    purpose: str = Field(default="general", min_length=1, max_length=120)
    review_status: Literal["pending"]
    authority_status: Literal["non_authoritative"]
    segment_id: str | None = Field(default=None, max_length=200)  # seed 001: segment:<session>:<seq>-<seq>
    details: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _deterministic_id(self) -> CandidatePayload:
        if not valid_candidate_id(self.candidate_id, self.candidate_type, self.title, self.source_events):
            expected = candidate_id(self.candidate_type, self.title, self.source_events)
            raise ValueError(f"candidate_id must be {expected} (derived from type, title and source events)")
        if not self.title.strip() or not self.summary.strip():
            raise ValueError("title and summary must not be blank")
        return self


class ReviewPayload(BaseModel):
    """``consolidation.candidate.reviewed``: a disposition of one candidate, never an authority promotion."""

    model_config = ConfigDict(extra="forbid")
    contract_remediation: ClassVar[str] = (
        "A review needs candidate_id, candidate {seq, hash, session?} citing the candidate event, the candidate's "
        "candidate_type, title, summary and source_events, status (accepted, rejected, deferred, conflicted), "
        "a rationale and authority_status 'non_authoritative'; use memory.consolidation_review, which fills "
        "these in from the candidate."
    )

    candidate_id: str = Field(pattern=CANDIDATE_ID_PATTERN)
    candidate: EvidenceCitation | None = None
    candidate_type: CandidateType | None = None
    title: str | None = Field(default=None, min_length=1, max_length=200)
    summary: str | None = Field(default=None, min_length=1, max_length=4000)
    source_events: list[EvidenceCitation] | None = Field(default=None, min_length=1, max_length=MAX_SOURCES)
    status: ReviewDecision | None = None
    decision: ReviewDecision | None = None  # this project's earlier name of ``status``
    rationale: str = Field(min_length=1, max_length=2000)
    reviewer: str | None = Field(default=None, max_length=256)
    authority_status: Literal["non_authoritative"]
    revokes_acceptance: bool = False
    conflicts_with: list[EvidenceCitation] = Field(default_factory=list, max_length=50)

    @model_validator(mode="after")
    def _consistent(self) -> ReviewPayload:
        if self.status is None and self.decision is None:
            raise ValueError("a review needs status (accepted, rejected, deferred or conflicted)")
        if self.status is not None and self.decision is not None and self.status != self.decision:
            raise ValueError("status and decision disagree")
        described = (self.candidate, self.candidate_type, self.title, self.summary, self.source_events)
        if any(part is not None for part in described) and any(part is None for part in described):
            raise ValueError("a review citing its candidate needs candidate, candidate_type, title, summary, sources")
        if self.cites_candidate and not valid_candidate_id(
            self.candidate_id, str(self.candidate_type), str(self.title), list(self.source_events or [])
        ):
            raise ValueError("candidate_id does not match the candidate's type, title and source events")
        if not self.rationale.strip():
            raise ValueError("rationale must not be blank")
        if self.revokes_acceptance and self.disposition == "accepted":
            raise ValueError("an acceptance cannot revoke an acceptance")
        return self

    @property
    def disposition(self) -> str:
        return str(self.status or self.decision)

    @property
    def cites_candidate(self) -> bool:
        """Written by this project's review tool (the read-side gate can check it), not the seed's minimal form."""
        return self.candidate is not None


class WrittenReviewPayload(ReviewPayload):
    """What this project writes (and accepts on append): a review citing its candidate, in ``status``."""

    candidate: EvidenceCitation
    candidate_type: CandidateType
    title: str = Field(min_length=1, max_length=200)
    summary: str = Field(min_length=1, max_length=4000)
    source_events: list[EvidenceCitation] = Field(min_length=1, max_length=MAX_SOURCES)


# Payloads checked before they are appended (collected into the one table in zaxy_agents.fabric.features).
CONTRACTS: dict[str, type[BaseModel]] = {CANDIDATE_EVENT: CandidatePayload, REVIEW_EVENT: WrittenReviewPayload}
