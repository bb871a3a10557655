"""Coordinate (full profile): the seed's coordination_* tools over one shared memory.

A mission has a coordinator, reviewers and workers. Workers report cited findings into their own sessions;
they stay pending and non-authoritative until a reviewer the mission granted accepts one and promotes it into
the mission's accepted state. Over HTTP the tools that create, review, promote, export or apply approvals need
the admin token, so an agent holding the ordinary token can report and read but never accept its own work.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.coordinate.arguments import (
    ApplyApprovalFields,
    AssignFields,
    CheckoutFields,
    HandoffFields,
    MissionFields,
    PromoteFields,
    ProofTraceFields,
    RecordSynthesisArtifactFields,
    ReportFindingFields,
    ReviewFindingFields,
    StartFields,
    WorkerCreateFields,
)
from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import ToolArgs, payload_validator
from zaxy_agents.tool_arguments import CheckoutArgument


class StartArgs(StartFields, ToolArgs):
    pass


class WorkerCreateArgs(WorkerCreateFields, ToolArgs):
    pass


class AssignArgs(AssignFields, ToolArgs):
    pass


class ReportFindingArgs(ReportFindingFields, ToolArgs):
    pass


class ReviewFindingArgs(ReviewFindingFields, ToolArgs):
    pass


class PromoteArgs(PromoteFields, ToolArgs):
    pass


class MissionArgs(MissionFields, ToolArgs):
    pass


class CheckoutArgs(CheckoutFields, ToolArgs):
    pass


class ApplyApprovalArgs(ApplyApprovalFields, ToolArgs):
    pass


class HandoffArgs(HandoffFields, ToolArgs):
    pass


class ProofTraceArgs(ProofTraceFields, ToolArgs):
    pass


class RecordSynthesisArtifactArgs(CheckoutArgument, RecordSynthesisArtifactFields, ToolArgs):
    _bounded = payload_validator("checkout")


def _written(result: dict[str, Any]) -> str:
    return f"{result.get('event_type')} {result.get('citation')}"


@tool(
    "coordination_start",
    order=300,
    admin=True,
    summarize=_written,
    description="""Start a Coordinate mission: several agents share one memory without trusting each other
    blindly. The coordinator holds every right; reviewers may review, promote, apply approvals and hand off;
    workers (coordination_worker_create) only report findings. Returns the mission_id the other coordination_*
    tools take.""",
)
def coordination_start(call: ToolCall[StartArgs]) -> dict[str, Any]:
    a = call.args
    return call.fabric.coordination.start(
        a.title,
        a.objective,
        mission_id=a.mission_id,
        coordinator=a.coordinator,
        reviewers=list(a.reviewers),
        dispatchers=list(a.dispatchers),
    )


@tool(
    "coordination_worker_create",
    order=301,
    admin=True,
    summarize=_written,
    description="""Add a worker to a mission. Its findings are written to its own session and stay worker-local
    (pending, non-authoritative) until reviewed and promoted.""",
)
def coordination_worker_create(call: ToolCall[WorkerCreateArgs]) -> dict[str, Any]:
    a = call.args
    return call.fabric.coordination.worker_create(a.mission_id, a.worker_id, purpose=a.purpose, actor=a.actor)


@tool(
    "coordination_assign",
    order=302,
    admin=True,
    summarize=_written,
    description="""Assign a task to a worker of the mission (the worker sees it in its coordination_checkout).""",
)
def coordination_assign(call: ToolCall[AssignArgs]) -> dict[str, Any]:
    a = call.args
    return call.fabric.coordination.assign(
        a.mission_id, a.worker_id, a.task, assignment_id=a.assignment_id, actor=a.actor
    )


@tool(
    "coordination_report_finding",
    order=303,
    summarize=lambda r: f"{r.get('finding_id')} {r.get('review_status')} created={r.get('created')}",
    description="""Report a worker's finding with the eventloom:// citations that support it. It is pending and
    non-authoritative: it never appears as accepted mission state until a reviewer accepts and promotes it.
    Reporting the same finding twice creates one.""",
)
def coordination_report_finding(call: ToolCall[ReportFindingArgs]) -> dict[str, Any]:
    a = call.args
    return call.fabric.coordination.report_finding(
        a.mission_id,
        a.worker_id,
        a.subject,
        a.claim,
        evidence=list(a.evidence),
        confidence=a.confidence,
        test_backed=a.test_backed,
        assignment_id=a.assignment_id,
    )


@tool(
    "coordination_review_finding",
    order=304,
    admin=True,
    summarize=lambda r: f"{r.get('finding_id')} {r.get('status')}",
    description="""Review a finding: accepted, rejected, duplicate, needs_evidence or deferred, with a rationale.
    Only the coordinator or a reviewer the mission granted may review, never the worker who reported it. A review
    is a disposition; coordination_promote makes an accepted finding mission state.""",
)
def coordination_review_finding(call: ToolCall[ReviewFindingArgs]) -> dict[str, Any]:
    a = call.args
    return call.fabric.coordination.review_finding(
        a.mission_id, a.finding_id, a.status, a.rationale, reviewer=a.reviewer
    )


@tool(
    "coordination_promote",
    order=305,
    admin=True,
    summarize=_written,
    description="""Promote an accepted finding into the mission's accepted state (cites the finding and the
    accepting review). Refused for a finding that is not accepted by its latest review, or by an actor without the
    promote right.""",
)
def coordination_promote(call: ToolCall[PromoteArgs]) -> dict[str, Any]:
    a = call.args
    return call.fabric.coordination.promote(a.mission_id, a.finding_id, promoted_by=a.promoted_by)


@tool(
    "coordination_merge_brief",
    order=306,
    admin=True,
    read_only=True,
    summarize=lambda r: f"counts={r.get('counts')}",
    description="""The coordinator's merge brief: workers and assignments, every finding grouped by review status
    (promoted, accepted, pending, deferred, needs_evidence, duplicate, rejected) with citations, conflicting claims
    about the same subject, and any event the authority rules ignored.""",
)
def coordination_merge_brief(call: ToolCall[MissionArgs]) -> dict[str, Any]:
    return call.fabric.coordination.merge_brief(call.args.mission_id)


@tool(
    "coordination_checkout",
    order=307,
    read_only=True,
    summarize=lambda r: f"accepted={r.get('diagnostics', {}).get('accepted_count')}",
    description="""Mission-scoped checkout: the mission brief, promoted (accepted) state, the worker's own
    assignment and the latest handoff, every line cited, with the coordinate purpose profile. Pending findings are
    never accepted state; include_diagnostics lists them (and conflicts) labelled non-authoritative, for members
    of the mission only.""",
)
def coordination_checkout(call: ToolCall[CheckoutArgs]) -> dict[str, Any]:
    a = call.args
    return call.fabric.coordination.checkout(
        a.mission_id, worker_id=a.worker_id, include_diagnostics=a.include_diagnostics, actor=a.actor
    )


@tool(
    "coordination_performance_ledger",
    order=308,
    read_only=True,
    summarize=lambda r: f"workers={len(r.get('workers', []))}",
    description="""Per-worker outcomes of the mission: reported, accepted, promoted, rejected, duplicate,
    missing-evidence, test-backed and pending counts, with rates.""",
)
def coordination_performance_ledger(call: ToolCall[MissionArgs]) -> dict[str, Any]:
    return call.fabric.coordination.performance_ledger(call.args.mission_id)


@tool(
    "coordination_approval_packet",
    order=309,
    admin=True,
    read_only=True,
    summarize=lambda r: f"{r.get('packet_id')} items={len(r.get('items', []))}",
    description="""Export the mission's pending and conflicted findings for a remote reviewer, with a packet_id
    and the decision shape coordination_apply_approval takes. The packet goes stale when the mission changes.""",
)
def coordination_approval_packet(call: ToolCall[MissionArgs]) -> dict[str, Any]:
    return call.fabric.coordination.approval_packet(call.args.mission_id)


@tool(
    "coordination_apply_approval",
    order=310,
    admin=True,
    summarize=lambda r: f"reviews={len(r.get('reviews', []))} promotions={len(r.get('promotions', []))}",
    description="""Apply the decisions returned for an approval packet as ordinary review events, promoting only
    where a decision sets promote. Every decision is checked before any is written; a stale packet is refused.""",
)
def coordination_apply_approval(call: ToolCall[ApplyApprovalArgs]) -> dict[str, Any]:
    a = call.args
    decisions = [d.model_dump() for d in a.decisions]
    return call.fabric.coordination.apply_approval(a.mission_id, a.packet_id, decisions, actor=a.actor)


@tool(
    "coordination_handoff",
    order=311,
    admin=True,
    summarize=_written,
    description="""Hand the mission over (summary, next steps, risks): a replayable event citing exactly the
    promotion events it hands over (default all); citing anything that is not a promotion of this mission is
    refused. Returns handoff_id and handoff_event_ref.""",
)
def coordination_handoff(call: ToolCall[HandoffArgs]) -> dict[str, Any]:
    a = call.args
    return call.fabric.coordination.handoff(
        a.mission_id,
        a.summary,
        next_steps=list(a.next_steps),
        risks=list(a.risks),
        to=a.to,
        promoted_refs=list(a.promoted_refs) if a.promoted_refs is not None else None,
        actor=a.actor,
    )


@tool(
    "coordination_proof_trace",
    order=312,
    read_only=True,
    summarize=lambda r: f"verified={r.get('verified')} steps={len(r.get('steps', []))}",
    description="""Replay how promoted claims came to be, by handoff_id, finding_id, artifact_id or proof_seq:
    the report, each evidence citation, the reviews, the promotion, the handoff and, for a proof packet, the
    synthesis artifact with its answer candidates, ledger rows and non-authoritative diagnostics; every step cited
    and re-verified against the log (verified is false if any no longer resolves).""",
)
def coordination_proof_trace(call: ToolCall[ProofTraceArgs]) -> dict[str, Any]:
    a = call.args
    return call.fabric.coordination.proof_trace(
        a.mission_id, handoff_id=a.handoff_id, finding_id=a.finding_id, artifact_id=a.artifact_id, proof_seq=a.proof_seq
    )


@tool(
    "coordination_record_synthesis_artifact",
    order=313,
    admin=True,
    summarize=lambda r: f"proof={r.get('proof_id')} artifact={r.get('artifact_id')} {r.get('citation')}",
    description="""In a Coordinate mission, use this instead of memory_synthesis_artifact when a synthesis answer
    candidate of a memory_checkout is part of a merge brief, approval packet, accepted checkout or handoff
    (decision_scope; a handoff needs handoff_id). Writes the synthesis artifact (and the candidate's outcome), then
    a coordination.proof_packet.created in the mission with the accepted finding ids, review, promotion and worker
    source refs, the handoff event ref, pending and conflicting finding ids, excluded row reasons, and the ledger
    rows that rest only on worker-local state (non-authoritative). Trace it with coordination_proof_trace
    artifact_id.""",
)
def coordination_record_synthesis_artifact(call: ToolCall[RecordSynthesisArtifactArgs]) -> dict[str, Any]:
    a = call.args
    return call.fabric.coordination.record_synthesis_artifact(
        a.mission_id,
        a.checkout,
        decision_scope=a.decision_scope,
        candidate=a.candidate,
        outcome=a.outcome,
        handoff_id=a.handoff_id,
        reason=a.reason,
        corrected_value=a.corrected_value,
        actor=a.actor,
    )
