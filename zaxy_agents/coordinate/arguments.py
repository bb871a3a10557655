"""The coordination tools' arguments, declared once for every surface (MCP, LangGraph tools).

Names follow seed 003 where it gives them (``include_diagnostics``, ``handoff_id``, ``proof_seq``); the rest
say what they hold. Every string, list and number is bounded.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from zaxy_agents.tool_arguments import CANDIDATE_HELP, CandidateRef, Citation, optional

from .contracts import ID_PATTERN, DecisionScope

MissionId = Annotated[str, Field(min_length=1, max_length=48, pattern=ID_PATTERN)]
WorkerId = Annotated[str, Field(min_length=1, max_length=48, pattern=ID_PATTERN)]
FindingId = Annotated[str, Field(max_length=20, pattern=r"^fnd_[0-9a-f]{16}$")]
Actor = Annotated[str, Field(min_length=1, max_length=128)]
Status = Literal["accepted", "rejected", "duplicate", "needs_evidence", "deferred"]
MISSION_HELP = "The mission (coordination_start returned it)."


class MissionFields(BaseModel):
    mission_id: MissionId = Field(description=MISSION_HELP)


class StartFields(BaseModel):
    title: str = Field(min_length=1, max_length=300, description="Short name of the mission.")
    objective: str = Field(min_length=1, max_length=4000, description="What the mission must find out or do.")
    mission_id: optional(str, "Id to use (default: from the title).", max_length=48, pattern=ID_PATTERN) = None
    coordinator: Actor = Field(default="coordinator", description="Who coordinates: holds every right.")
    reviewers: list[Actor] = Field(
        default_factory=list, max_length=50, description="Who may review, promote, apply approvals and hand off."
    )
    dispatchers: list[Actor] = Field(
        default_factory=list,
        max_length=50,
        description="Who may only create and assign workers (e.g. claude-code-hooks for IDE subagents).",
    )


class WorkerCreateFields(MissionFields):
    worker_id: WorkerId = Field(description="Id of the worker (its findings go to its own session).")
    purpose: str = Field(default="", max_length=2000, description="What this worker is for.")
    actor: optional(Actor, "Who creates it (default: the coordinator); needs the assign right.") = None


class AssignFields(MissionFields):
    worker_id: WorkerId = Field(description="The worker to assign.")
    task: str = Field(min_length=1, max_length=4000, description="What the worker must do.")
    assignment_id: optional(str, "Id to use (default: derived).", max_length=48, pattern=ID_PATTERN) = None
    actor: optional(Actor, "Who assigns (default: the coordinator); needs the assign right.") = None


class ReportFindingFields(MissionFields):
    worker_id: WorkerId = Field(description="The reporting worker (the finding is written to its session).")
    subject: str = Field(min_length=1, max_length=300, description="What the finding is about (conflicts group by it).")
    claim: str = Field(min_length=1, max_length=4000, description="What the worker found.")
    evidence: list[Citation] = Field(
        default_factory=list, max_length=50, description="eventloom:// citations of the events that support it."
    )
    confidence: float = Field(default=0.5, ge=0.0, le=1.0, description="The worker's confidence.")
    test_backed: bool = Field(default=False, description="A test run backs it (cite it in evidence).")
    assignment_id: optional(str, "The assignment it answers.", max_length=48, pattern=ID_PATTERN) = None


class ReviewFindingFields(MissionFields):
    finding_id: FindingId = Field(description="The finding to review.")
    status: Status = Field(description="accepted, rejected, duplicate, needs_evidence or deferred.")
    rationale: str = Field(min_length=1, max_length=4000, description="Why.")
    reviewer: Actor = Field(description="Who reviews: the coordinator or a reviewer of the mission, never its worker.")


class PromoteFields(MissionFields):
    finding_id: FindingId = Field(description="An accepted finding.")
    promoted_by: Actor = Field(description="The coordinator or a reviewer of the mission.")


class CheckoutFields(MissionFields):
    worker_id: optional(str, "Check out as this worker (adds its assignment).", max_length=48, pattern=ID_PATTERN) = (
        None
    )
    include_diagnostics: bool = Field(
        default=False, description="Also list pending findings and conflicts, labelled non-authoritative."
    )
    actor: optional(Actor, "Who reads (default: worker_id); diagnostics are for mission members only.") = None


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    finding_id: FindingId
    status: Status
    rationale: str = Field(min_length=1, max_length=4000)
    promote: bool = False


class ApplyApprovalFields(MissionFields):
    packet_id: str = Field(max_length=20, pattern=r"^apr_[0-9a-f]{16}$", description="The packet the decisions answer.")
    decisions: list[Decision] = Field(min_length=1, max_length=200, description="One decision per finding.")
    actor: Actor = Field(description="Who decides: the coordinator or a reviewer of the mission.")


class HandoffFields(MissionFields):
    summary: str = Field(min_length=1, max_length=8000, description="What the next shift must know.")
    next_steps: list[Annotated[str, Field(max_length=1000)]] = Field(default_factory=list, max_length=50)
    risks: list[Annotated[str, Field(max_length=1000)]] = Field(default_factory=list, max_length=50)
    to: optional(str, "Who receives it.", max_length=128) = None
    promoted_refs: optional(list[Citation], "Promotion citations handed over (default: all).", max_length=200) = None
    actor: optional(Actor, "Who hands off (default: the coordinator); needs the handoff right.") = None


class ProofTraceFields(MissionFields):
    handoff_id: optional(str, "Trace this handoff.", max_length=20, pattern=r"^hnd_[0-9a-f]{16}$") = None
    finding_id: optional(str, "Trace this finding.", max_length=20, pattern=r"^fnd_[0-9a-f]{16}$") = None
    artifact_id: optional(
        str, "Trace the proof packet that binds this synthesis artifact.", max_length=28, pattern=r"^syn_[0-9a-f]{24}$"
    ) = None
    proof_seq: optional(
        int, "Trace the promotion, handoff or proof packet at this seq of the mission session.", ge=1, le=2**53
    ) = None


class RecordSynthesisArtifactFields(MissionFields):
    decision_scope: DecisionScope = Field(
        description="The decision the answer is part of: merge_brief, approval_packet, accepted_checkout or handoff."
    )
    handoff_id: optional(
        str,
        "The handoff (decision_scope handoff only): the packet cites its event.",
        max_length=20,
        pattern=r"^hnd_[0-9a-f]{16}$",
    ) = None
    candidate: optional(CandidateRef, CANDIDATE_HELP + " Needs outcome.") = None
    outcome: optional(
        Literal["used", "helpful", "accepted", "rejected", "irrelevant", "wrong", "corrected", "excluded"],
        "What happened to the candidate (as memory_synthesis_artifact). Needs candidate.",
    ) = None
    corrected_value: optional(str, "The answer given instead (outcome corrected).", min_length=1, max_length=200) = None
    reason: optional(str, "Why.", min_length=1, max_length=2000) = None
    actor: optional(Actor, "Who binds it (default: the coordinator); needs the right the decision scope needs.") = None
