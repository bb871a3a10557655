"""Payload contracts of the synthesis events (seed 003), checked before the append.

- ``memory.synthesis.artifact.created``: a checkout's synthesis bundle (question, answer candidates, ledger rows,
  source groups, quality, slot plan) persisted under a deterministic ``artifact_id``;
- ``memory.synthesis.used`` / ``.rejected`` / ``.corrected``: the outcome of one selected candidate, citing the
  artifact event; a correction carries the corrected answer;
- ``memory.evidence.reinforced`` / ``memory.evidence.excluded``: feedback on one ledger row (or, for
  ``excluded``, on one whole candidate), citing the artifact event.

All of it is ``authority_status: non_authoritative``: a composed answer and its feedback never change a fact.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from zaxy_agents.projection.contracts import EvidenceCitation
from zaxy_agents.projection.model import stable_id

ARTIFACT_CREATED = "memory.synthesis.artifact.created"
SYNTHESIS_USED = "memory.synthesis.used"
SYNTHESIS_REJECTED = "memory.synthesis.rejected"
SYNTHESIS_CORRECTED = "memory.synthesis.corrected"
EVIDENCE_REINFORCED = "memory.evidence.reinforced"
EVIDENCE_EXCLUDED = "memory.evidence.excluded"
# The normalised candidate outcome -> the event that records it (seed 003).
OUTCOME_EVENTS = {
    "used": SYNTHESIS_USED,
    "rejected": SYNTHESIS_REJECTED,
    "corrected": SYNTHESIS_CORRECTED,
    "excluded": EVIDENCE_EXCLUDED,
}
# What a caller may say -> the normalised outcome.
CANDIDATE_OUTCOMES = {
    "used": "used",
    "helpful": "used",
    "accepted": "used",
    "rejected": "rejected",
    "irrelevant": "rejected",
    "wrong": "rejected",
    "corrected": "corrected",
    "excluded": "excluded",
}
ROW_OUTCOMES = {"used": EVIDENCE_REINFORCED, "helpful": EVIDENCE_REINFORCED, "excluded": EVIDENCE_EXCLUDED}
ARTIFACT_ENTITY = "synthesis_artifact"
CANDIDATE_ENTITY = "answer_candidate"
ROW_ENTITY = "ledger_row"
GROUP_ENTITY = "source_group"
AUTHORITY_STATUS = "non_authoritative"
ARTIFACT_ID_PATTERN = r"^syn_[0-9a-f]{24}$"
CITATION_PATTERN = r"^eventloom://[A-Za-z0-9_.-]{1,128}/events/[1-9][0-9]*#[0-9a-f]{12}$"
Number = int | float


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EntityPointer(_Model):
    name: str = Field(min_length=1, max_length=500)
    entity_type: str = Field(min_length=1, max_length=100)


class LedgerRow(_Model):
    """One value a cited item states, and whether the composed answers include it (and why)."""

    row_id: str = Field(pattern=r"^row_[0-9a-f]{16}$")
    fact_id: str = Field(min_length=1, max_length=300)
    source_group: str = Field(min_length=1, max_length=600)
    citation: str = Field(pattern=CITATION_PATTERN)
    event_type: str = Field(min_length=1, max_length=200)
    value: Number
    raw: str = Field(min_length=1, max_length=64)
    unit: str = Field(max_length=32)
    label: str = Field(max_length=200)
    valid_from: str = Field(max_length=64)
    status: Literal["included", "excluded"]
    reason: str = Field(min_length=1, max_length=300)
    entity: EntityPointer | None = None


class AnswerCandidate(_Model):
    """A composed answer (sum, count, latest, average) over included ledger rows, ranked."""

    candidate_id: str = Field(pattern=r"^ans_[0-9a-f]{16}$")
    rank: int = Field(ge=1, le=10)
    candidate_type: Literal["sum", "count", "latest", "average"]
    answer_value: Number
    unit: str = Field(max_length=32)
    answer_text: str = Field(min_length=1, max_length=64)
    confidence: float = Field(ge=0.0, le=1.0)
    supporting_source_ids: list[str] = Field(min_length=1, max_length=100)
    excluded_source_ids: list[str] = Field(max_length=100)
    citations: list[str] = Field(min_length=1, max_length=100)
    authority_status: Literal["non_authoritative"]


class SourceGroup(_Model):
    source_group: str = Field(min_length=1, max_length=600)
    row_ids: list[str] = Field(min_length=1, max_length=100)
    citations: list[str] = Field(min_length=1, max_length=100)


def artifact_id(query: str, candidates: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
    """Same question, candidates and rows -> same artifact (recording a checkout twice records it once)."""
    parts = sorted(c["candidate_id"] for c in candidates) + sorted(f"{r['row_id']}:{r['status']}" for r in rows)
    return "syn_" + stable_id("synthesis_artifact", " ".join(query.split()), *parts)


class ArtifactPayload(_Model):
    """``memory.synthesis.artifact.created``."""

    contract_remediation: ClassVar[str] = (
        "A synthesis artifact needs artifact_id (syn_ + 24 hex, see synthesis.contracts.artifact_id), query, "
        "question_type, answer_candidates (at least one), ledger_rows, source_groups, quality, slot_plan and "
        "authority_status 'non_authoritative'; use memory_synthesis_artifact, which builds it from a checkout."
    )

    artifact_id: str = Field(pattern=ARTIFACT_ID_PATTERN)
    query: str = Field(min_length=1, max_length=2000)
    checkout_session: str | None = Field(default=None, max_length=128)
    scope: list[str] | None = Field(default=None, max_length=64)
    as_of: str | None = Field(default=None, max_length=64)
    purpose: str = Field(default="general", max_length=64)
    question_type: Literal["sum", "count", "latest", "average", "value"]
    unit_cue: str | None = Field(default=None, max_length=32)
    answer_candidates: list[AnswerCandidate] = Field(min_length=1, max_length=10)
    ledger_rows: list[LedgerRow] = Field(min_length=1, max_length=100)
    source_groups: list[SourceGroup] = Field(max_length=100)
    quality: dict[str, Any]
    slot_plan: list[dict[str, Any]] | None = None
    authority_status: Literal["non_authoritative"]

    @model_validator(mode="after")
    def _consistent(self) -> ArtifactPayload:
        rows = {row.row_id for row in self.ledger_rows}
        for candidate in self.answer_candidates:
            unknown = set(candidate.supporting_source_ids) - rows
            if unknown:
                raise ValueError(f"candidate {candidate.candidate_id} cites rows not in ledger_rows: {sorted(unknown)}")
        expected = artifact_id(
            self.query,
            [c.model_dump() for c in self.answer_candidates],
            [r.model_dump() for r in self.ledger_rows],
        )
        if self.artifact_id != expected:
            raise ValueError(f"artifact_id must be {expected} (derived from query, candidates and rows)")
        return self


class _Feedback(_Model):
    artifact_id: str = Field(pattern=ARTIFACT_ID_PATTERN)
    artifact: EvidenceCitation  # the memory.synthesis.artifact.created event
    reason: str | None = Field(default=None, max_length=2000)
    authority_status: Literal["non_authoritative"]


class OutcomePayload(_Feedback):
    """``memory.synthesis.used`` / ``.rejected`` / ``.corrected``: the outcome of one selected candidate."""

    contract_remediation: ClassVar[str] = (
        "A synthesis outcome needs artifact_id, artifact {seq, hash, session?} citing the artifact event, the "
        "candidate (as in the artifact), outcome (used, rejected, corrected; corrected needs corrected_value) and "
        "authority_status 'non_authoritative'; use memory_synthesis_artifact with candidate and outcome."
    )

    candidate: AnswerCandidate
    outcome: Literal["used", "rejected", "corrected"]
    corrected_value: str | None = Field(default=None, min_length=1, max_length=200)

    @model_validator(mode="after")
    def _correction(self) -> OutcomePayload:
        if (self.outcome == "corrected") != (self.corrected_value is not None):
            raise ValueError("corrected_value is required with outcome 'corrected' and only then")
        return self


class ReinforcedPayload(_Feedback):
    """``memory.evidence.reinforced``: a ledger row a composed answer used."""

    contract_remediation: ClassVar[str] = (
        "Row feedback needs artifact_id, artifact {seq, hash, session?}, the row (as in the artifact), outcome "
        "(used, helpful), support_source_ids, quality, slot_plan and authority_status 'non_authoritative'; use "
        "memory_synthesis_evidence."
    )

    row: LedgerRow
    outcome: Literal["used", "helpful"]
    candidate: AnswerCandidate | None = None
    support_source_ids: list[str] = Field(max_length=100)
    quality: dict[str, Any]
    slot_plan: list[dict[str, Any]] | None = None


class ExcludedPayload(_Feedback):
    """``memory.evidence.excluded``: a ledger row (or a whole candidate) a composed answer explicitly left out."""

    contract_remediation: ClassVar[str] = (
        "Exclusion feedback needs artifact_id, artifact {seq, hash, session?}, a row and/or a candidate (as in the "
        "artifact), outcome 'excluded', support_source_ids, quality and authority_status 'non_authoritative'; use "
        "memory_synthesis_evidence (a row) or memory_synthesis_artifact (a candidate)."
    )

    row: LedgerRow | None = None
    candidate: AnswerCandidate | None = None
    outcome: Literal["excluded"]
    support_source_ids: list[str] = Field(max_length=100)
    quality: dict[str, Any]
    slot_plan: list[dict[str, Any]] | None = None

    @model_validator(mode="after")
    def _target(self) -> ExcludedPayload:
        if self.row is None and self.candidate is None:
            raise ValueError("an exclusion names a row or a candidate")
        return self


CONTRACTS: dict[str, type[BaseModel]] = {
    ARTIFACT_CREATED: ArtifactPayload,
    SYNTHESIS_USED: OutcomePayload,
    SYNTHESIS_REJECTED: OutcomePayload,
    SYNTHESIS_CORRECTED: OutcomePayload,
    EVIDENCE_REINFORCED: ReinforcedPayload,
    EVIDENCE_EXCLUDED: ExcludedPayload,
}
