"""Payload contracts of the ``coordination.*`` events (seed 003, Coordinate), checked before every append.

A mission lives in a parent session ``coordinate.<mission_id>``; each worker writes its findings to its own
session ``coordinate.<mission_id>.<worker_id>`` so worker-local state stays isolated until a coordinator
reviews and promotes it into the parent mission history. Every cross-event reference is a full
``{session, seq, hash}`` citation, so a proof trace can re-verify each step against the log.
"""

from __future__ import annotations

from typing import ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from zaxy_agents.projection.contracts import HASH_PATTERN

MISSION_STARTED = "coordination.mission.started"
WORKER_CREATED = "coordination.worker.created"
ASSIGNMENT_CREATED = "coordination.assignment.created"
FINDING_REPORTED = "coordination.finding.reported"
FINDING_REVIEWED = "coordination.finding.reviewed"
FINDING_PROMOTED = "coordination.finding.promoted"
HANDOFF_CREATED = "coordination.handoff.created"
PROOF_PACKET_CREATED = "coordination.proof_packet.created"
PARENT_EVENTS = (
    MISSION_STARTED,
    WORKER_CREATED,
    ASSIGNMENT_CREATED,
    FINDING_REVIEWED,
    FINDING_PROMOTED,
    HANDOFF_CREATED,
    PROOF_PACKET_CREATED,
)

ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,47}$"
SESSION_PREFIX = "coordinate."

ReviewStatus = Literal["accepted", "rejected", "duplicate", "needs_evidence", "deferred"]
REVIEW_STATUSES: tuple[str, ...] = get_args(ReviewStatus)
Permission = Literal["assign", "review", "promote", "approve", "handoff"]
DecisionScope = Literal["merge_brief", "approval_packet", "accepted_checkout", "handoff"]
DECISION_SCOPES: tuple[str, ...] = get_args(DecisionScope)
# The right a proof packet of each decision scope needs: it binds a synthesis answer to that decision.
SCOPE_PERMISSION: dict[str, str] = {
    "merge_brief": "review",
    "approval_packet": "approve",
    "accepted_checkout": "review",
    "handoff": "handoff",
}
PERMISSIONS: tuple[str, ...] = get_args(Permission)
# Roles a mission grants; a worker only reports (its findings are never authoritative by themselves).
ROLE_PERMISSIONS: dict[str, tuple[str, ...]] = {
    "coordinator": PERMISSIONS,
    "reviewer": ("review", "promote", "approve", "handoff"),
    # Creates and assigns workers, nothing else: what IDE subagent hooks act as (docs/hooks.md, Coordinate).
    "dispatcher": ("assign",),
    "worker": (),
}


def parent_session(mission_id: str) -> str:
    return f"{SESSION_PREFIX}{mission_id}"


def worker_session(mission_id: str, worker_id: str) -> str:
    return f"{SESSION_PREFIX}{mission_id}.{worker_id}"


class Ref(BaseModel):
    """A full citation of one event: what a review, promotion or handoff points at."""

    model_config = ConfigDict(extra="forbid")

    session: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,128}$")
    seq: int = Field(ge=1)
    hash: str = Field(pattern=HASH_PATTERN)


class _Contract(BaseModel):
    model_config = ConfigDict(extra="forbid")
    contract_remediation: ClassVar[str] = "Use the coordination_* tools (docs/coordinate.md); they write these events."

    mission_id: str = Field(pattern=ID_PATTERN)


class MissionStarted(_Contract):
    title: str = Field(min_length=1, max_length=300)
    objective: str = Field(min_length=1, max_length=4000)
    coordinator: str = Field(min_length=1, max_length=128)
    reviewers: list[str] = Field(default_factory=list, max_length=50)
    dispatchers: list[str] = Field(default_factory=list, max_length=50)


class WorkerCreated(_Contract):
    worker_id: str = Field(pattern=ID_PATTERN)
    worker_session: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,128}$")
    purpose: str = Field(default="", max_length=2000)


class AssignmentCreated(_Contract):
    assignment_id: str = Field(pattern=ID_PATTERN)
    worker_id: str = Field(pattern=ID_PATTERN)
    task: str = Field(min_length=1, max_length=4000)


class FindingReported(_Contract):
    finding_id: str = Field(pattern=r"^fnd_[0-9a-f]{16}$")
    worker_id: str = Field(pattern=ID_PATTERN)
    assignment_id: str | None = Field(default=None, pattern=ID_PATTERN)
    subject: str = Field(min_length=1, max_length=300)
    claim: str = Field(min_length=1, max_length=4000)
    evidence: list[Ref] = Field(default_factory=list, max_length=50)
    confidence: float = Field(ge=0.0, le=1.0)
    test_backed: bool = False
    review_status: Literal["pending"] = "pending"
    authority_status: Literal["non_authoritative"] = "non_authoritative"


class FindingReviewed(_Contract):
    finding_id: str = Field(pattern=r"^fnd_[0-9a-f]{16}$")
    finding_ref: Ref
    status: ReviewStatus
    rationale: str = Field(min_length=1, max_length=4000)
    reviewer: str = Field(min_length=1, max_length=128)
    approval_packet_id: str | None = Field(default=None, pattern=r"^apr_[0-9a-f]{16}$")


class FindingPromoted(_Contract):
    finding_id: str = Field(pattern=r"^fnd_[0-9a-f]{16}$")
    finding_ref: Ref
    review_ref: Ref
    subject: str = Field(min_length=1, max_length=300)
    claim: str = Field(min_length=1, max_length=4000)
    promoted_by: str = Field(min_length=1, max_length=128)
    authority_status: Literal["accepted_mission_state"] = "accepted_mission_state"


class HandoffCreated(_Contract):
    handoff_id: str = Field(pattern=r"^hnd_[0-9a-f]{16}$")
    summary: str = Field(min_length=1, max_length=8000)
    next_steps: list[str] = Field(default_factory=list, max_length=50)
    risks: list[str] = Field(default_factory=list, max_length=50)
    to: str | None = Field(default=None, max_length=128)
    promoted_refs: list[Ref] = Field(default_factory=list, max_length=200)
    created_by: str = Field(min_length=1, max_length=128)


class ExcludedRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    row_id: str = Field(min_length=1, max_length=64)
    reason: str = Field(max_length=500)


class DiagnosticRow(BaseModel):
    """A ledger row that rests on worker-local state no review promoted: kept, labelled, never accepted."""

    model_config = ConfigDict(extra="forbid")

    row_id: str = Field(min_length=1, max_length=64)
    citation: str = Field(max_length=300)
    finding_id: str | None = Field(default=None, pattern=r"^fnd_[0-9a-f]{16}$")
    reason: str = Field(max_length=500)
    authority_status: Literal["non_authoritative"] = "non_authoritative"


class ProofPacketCreated(_Contract):
    """Binds a synthesis artifact (memory.synthesis.artifact.created) to a Coordinate decision: the accepted
    findings, reviews and promotions it rests on, and what was only diagnostic."""

    proof_id: str = Field(pattern=r"^prf_[0-9a-f]{16}$")
    decision_scope: DecisionScope
    artifact_id: str = Field(pattern=r"^syn_[0-9a-f]{24}$")
    artifact_ref: Ref
    outcome_ref: Ref | None = None
    candidate_id: str | None = Field(default=None, pattern=r"^ans_[0-9a-f]{16}$")
    accepted_finding_ids: list[str] = Field(default_factory=list, max_length=500)
    review_refs: list[Ref] = Field(default_factory=list, max_length=500)
    promotion_refs: list[Ref] = Field(default_factory=list, max_length=500)
    worker_source_refs: list[Ref] = Field(default_factory=list, max_length=500)
    handoff_id: str | None = Field(default=None, pattern=r"^hnd_[0-9a-f]{16}$")
    handoff_event_ref: Ref | None = None
    diagnostic_pending_ids: list[str] = Field(default_factory=list, max_length=500)
    conflict_ids: list[str] = Field(default_factory=list, max_length=500)
    excluded_row_reasons: list[ExcludedRow] = Field(default_factory=list, max_length=500)
    non_authoritative_rows: list[DiagnosticRow] = Field(default_factory=list, max_length=500)
    created_by: str = Field(min_length=1, max_length=128)


CONTRACTS: dict[str, type[_Contract]] = {
    MISSION_STARTED: MissionStarted,
    WORKER_CREATED: WorkerCreated,
    ASSIGNMENT_CREATED: AssignmentCreated,
    FINDING_REPORTED: FindingReported,
    FINDING_REVIEWED: FindingReviewed,
    FINDING_PROMOTED: FindingPromoted,
    HANDOFF_CREATED: HandoffCreated,
    PROOF_PACKET_CREATED: ProofPacketCreated,
}
