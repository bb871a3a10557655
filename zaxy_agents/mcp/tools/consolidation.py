"""Review-gated consolidation (full profile): propose cited summaries, review them, report their state.

memory_consolidation_candidate, memory_consolidation_propose_from_log, memory_consolidation_review,
memory_consolidation_status, and the umbrella memory_consolidation(operation=...). A candidate is pending until
reviewed; an accepted one appears in the checkout's stable memory labelled non-authoritative. Over HTTP, reviews
need the admin token (an agent must not accept its own proposals on a shared server).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from zaxy_agents.consolidation.contracts import CandidateType
from zaxy_agents.consolidation.contracts import ReviewDecision as Decision
from zaxy_agents.errors import UnauthorizedError
from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import ToolArgs, optional

Citation = Annotated[str, Field(min_length=20, max_length=300)]
CandidateId = Annotated[str, Field(min_length=29, max_length=29, pattern=r"^cand_[0-9a-f]{24}$")]

SOURCES_HELP = "eventloom:// citations of the events the summary is based on (at least one)."


class CandidateArgs(ToolArgs):
    candidate_type: CandidateType = Field(description="episode, claim or procedure.")
    title: str = Field(min_length=1, max_length=200, description="Short title (with the type, its identity).")
    summary: str = Field(min_length=1, max_length=4000, description="The proposed summary.")
    source_events: list[Citation] = Field(min_length=1, max_length=200, description=SOURCES_HELP)
    confidence: float = Field(ge=0.0, le=1.0, description="How sure you are, 0..1.")
    method: str = Field(default="agent", min_length=1, max_length=120, description="How it was derived.")
    purpose: str = Field(default="general", min_length=1, max_length=120, description="Why it is proposed.")


class ProposeArgs(ToolArgs):
    window_size: int = Field(default=8, ge=2, le=100, description="Actionable events per segment window.")
    purpose: str = Field(default="general", min_length=1, max_length=120, description="Recorded with each candidate.")
    max_events: int = Field(default=500, ge=1, le=100_000, description="Scan at most this many recent events.")
    dry_run: bool = Field(default=False, description="Show the proposals without appending them.")


class ReviewArgs(ToolArgs):
    candidate_id: CandidateId = Field(description="The cand_... id to review.")
    decision: Decision = Field(description="accepted, rejected, deferred or conflicted.")
    rationale: str = Field(min_length=1, max_length=2000, description="Why.")
    reviewer: optional(str, "Who reviewed it.", max_length=256) = None
    conflicts_with: optional(list[Citation], "For conflicted: citations of the conflicting events.", max_length=50) = (
        None
    )


class StatusArgs(ToolArgs):
    as_of: optional(str, "Report the state at an ISO-8601 instant.", max_length=40) = None
    include_candidates: bool = Field(default=True, description="List the candidates too (newest first).")
    limit: int = Field(default=50, ge=0, le=200, description="At most this many candidates.")


def _candidate(call: ToolCall[Any], args: CandidateArgs) -> dict[str, Any]:
    return call.fabric.consolidation_candidate(
        call.session,
        candidate_type=args.candidate_type,
        title=args.title,
        summary=args.summary,
        source_events=list(args.source_events),
        confidence=args.confidence,
        method=args.method,
        purpose=args.purpose,
    )


def _propose(call: ToolCall[Any], args: ProposeArgs) -> dict[str, Any]:
    return call.fabric.consolidation_propose_from_log(
        call.session,
        window_size=args.window_size,
        purpose=args.purpose,
        max_events=args.max_events,
        dry_run=args.dry_run,
    )


def _review(call: ToolCall[Any], args: ReviewArgs) -> dict[str, Any]:
    if call.caller.restricted and not call.caller.admin:
        raise UnauthorizedError(
            "reviewing a consolidation candidate needs the admin token over HTTP",
            field="authorization",
            remediation="Send the admin bearer token (ZAXY_ADMIN_TOKEN on the server), or review from the CLI.",
        )
    return call.fabric.consolidation_review(
        call.session,
        args.candidate_id,
        decision=args.decision,
        rationale=args.rationale,
        reviewer=args.reviewer,
        conflicts_with=list(args.conflicts_with or []),
    )


def _status(call: ToolCall[Any], args: StatusArgs) -> dict[str, Any]:
    return call.fabric.consolidation_status(
        call.session, as_of=args.as_of, include_candidates=args.include_candidates, limit=args.limit
    )


@tool(
    "memory_consolidation_candidate",
    profile="full",
    order=220,
    summarize=lambda r: f"candidate={r.get('candidate_id')} created={r.get('created')}",
    description="""Propose one cited summary (an episode, a claim or a procedure) for review. It stays pending and
    never appears as memory until a review accepts it; even then it is labelled non-authoritative. The same type,
    title and sources give the same candidate id (proposing twice creates one).""",
)
def memory_consolidation_candidate(call: ToolCall[CandidateArgs]) -> dict[str, Any]:
    return _candidate(call, call.args)


@tool(
    "memory_consolidation_propose_from_log",
    profile="full",
    order=230,
    summarize=lambda r: f"segments={len(r.get('segments', []))} created={r.get('created')}",
    description="""Propose episode, claim and procedure candidates from this session's recent actionable events
    (tool calls, commands, file edits, task completions, coordination findings), segment by segment. Deterministic:
    the same log always yields the same proposals, and proposing again creates nothing new.""",
)
def memory_consolidation_propose_from_log(call: ToolCall[ProposeArgs]) -> dict[str, Any]:
    return _propose(call, call.args)


@tool(
    "memory_consolidation_review",
    profile="full",
    order=240,
    admin=True,
    summarize=lambda r: f"decision={r.get('decision')} revoked={r.get('revoked_acceptance')}",
    description="""Record a review disposition of a candidate: accepted, rejected, deferred or conflicted, with a
    rationale. An acceptance is not an authority promotion: the memory appears in stable memory labelled accepted /
    non-authoritative; a later non-acceptance revokes it. Stale or superseded candidates cannot be accepted.
    Over HTTP this needs the admin token.""",
)
def memory_consolidation_review(call: ToolCall[ReviewArgs]) -> dict[str, Any]:
    return _review(call, call.args)


@tool(
    "memory_consolidation_status",
    profile="full",
    order=250,
    read_only=True,
    summarize=lambda r: f"total={r.get('total')} pending={r.get('pending')} accepted={r.get('accepted')}",
    description="""Consolidation state of this session: pending, deferred, accepted, rejected, conflicted, stale,
    superseded and valid_to-closed counts, and the candidates with their citations and review status.""",
)
def memory_consolidation_status(call: ToolCall[StatusArgs]) -> dict[str, Any]:
    return _status(call, call.args)


Operation = Literal["candidate", "propose_from_log", "review", "status"]
REQUIRED = {
    "candidate": ("candidate_type", "title", "summary", "source_events", "confidence"),
    "review": ("candidate_id", "decision", "rationale"),
}
OPERATION_FIELDS: dict[str, type[ToolArgs]] = {
    "candidate": CandidateArgs,
    "propose_from_log": ProposeArgs,
    "review": ReviewArgs,
    "status": StatusArgs,
}


class ConsolidationArgs(ToolArgs):
    """One tool for every consolidation operation; each operation takes the fields of its own tool."""

    operation: Operation = Field(description="candidate, propose_from_log, review or status.")
    candidate_type: optional(CandidateType, "candidate: episode, claim or procedure.") = None
    title: optional(str, "candidate: short title.", min_length=1, max_length=200) = None
    summary: optional(str, "candidate: the proposed summary.", min_length=1, max_length=4000) = None
    source_events: optional(list[Citation], "candidate: " + SOURCES_HELP, min_length=1, max_length=200) = None
    confidence: optional(float, "candidate: how sure, 0..1.", ge=0.0, le=1.0) = None
    method: optional(str, "candidate: how it was derived.", min_length=1, max_length=120) = None
    purpose: optional(str, "candidate / propose_from_log: why.", min_length=1, max_length=120) = None
    window_size: optional(int, "propose_from_log: actionable events per window.", ge=2, le=100) = None
    max_events: optional(int, "propose_from_log: recent events to scan.", ge=1, le=100_000) = None
    dry_run: optional(bool, "propose_from_log: do not append.") = None
    candidate_id: optional(CandidateId, "review: the cand_... id.") = None
    decision: optional(Decision, "review: accepted, rejected, deferred or conflicted.") = None
    rationale: optional(str, "review: why.", min_length=1, max_length=2000) = None
    reviewer: optional(str, "review: who.", max_length=256) = None
    conflicts_with: optional(list[Citation], "review (conflicted): conflicting events.", max_length=50) = None
    as_of: optional(str, "status: ISO-8601 instant.", max_length=40) = None
    include_candidates: optional(bool, "status: list the candidates.") = None
    limit: optional(int, "status: at most this many candidates.", ge=0, le=200) = None

    @model_validator(mode="after")
    def _fields_fit_the_operation(self) -> ConsolidationArgs:
        allowed = set(OPERATION_FIELDS[self.operation].model_fields)
        given = {name for name in type(self).model_fields if getattr(self, name) is not None}
        foreign = sorted(given - allowed - {"operation", "session_id"})
        if foreign:
            raise ValueError(f"{', '.join(foreign)} do not apply to operation {self.operation!r}")
        missing = [name for name in REQUIRED.get(self.operation, ()) if getattr(self, name) is None]
        if missing:
            raise ValueError(f"operation {self.operation!r} needs {', '.join(missing)}")
        return self

    def for_operation(self) -> ToolArgs:
        model = OPERATION_FIELDS[self.operation]
        values = {name: getattr(self, name) for name in model.model_fields if getattr(self, name, None) is not None}
        return model.model_validate(values)


@tool(
    "memory_consolidation",
    profile="full",
    order=260,
    summarize=lambda r: f"operation={r.get('operation')}",
    description="""All consolidation in one tool: operation=candidate (propose a cited summary), propose_from_log
    (deterministic proposals from this session's actionable events), review (accepted / rejected / deferred /
    conflicted with a rationale; admin token over HTTP) or status (counts and candidates). Each operation takes the
    fields of the matching memory_consolidation_* tool. Candidates stay pending and non-authoritative.""",
)
def memory_consolidation(call: ToolCall[ConsolidationArgs]) -> dict[str, Any]:
    args = call.args.for_operation()
    handlers = {"candidate": _candidate, "propose_from_log": _propose, "review": _review, "status": _status}
    return {"operation": call.args.operation, **handlers[call.args.operation](call, args)}
