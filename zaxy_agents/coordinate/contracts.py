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
PARENT_EVENTS = (
    MISSION_STARTED,
    WORKER_CREATED,
    ASSIGNMENT_CREATED,
    FINDING_REVIEWED,
    FINDING_PROMOTED,
    HANDOFF_CREATED,
)

ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,47}$"
SESSION_PREFIX = "coordinate."

ReviewStatus = Literal["accepted", "rejected", "duplicate", "needs_evidence", "deferred"]
REVIEW_STATUSES: tuple[str, ...] = get_args(ReviewStatus)
Permission = Literal["assign", "review", "promote", "approve", "handoff"]
PERMISSIONS: tuple[str, ...] = get_args(Permission)
# Roles a mission grants; a worker only reports (its findings are never authoritative by themselves).
ROLE_PERMISSIONS: dict[str, tuple[str, ...]] = {
    "coordinator": PERMISSIONS,
    "reviewer": ("review", "promote", "approve", "handoff"),
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


CONTRACTS: dict[str, type[_Contract]] = {
    MISSION_STARTED: MissionStarted,
    WORKER_CREATED: WorkerCreated,
    ASSIGNMENT_CREATED: AssignmentCreated,
    FINDING_REPORTED: FindingReported,
    FINDING_REVIEWED: FindingReviewed,
    FINDING_PROMOTED: FindingPromoted,
    HANDOFF_CREATED: HandoffCreated,
}
