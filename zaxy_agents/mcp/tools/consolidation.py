"""Review-gated consolidation (full profile): propose cited summaries, review them, report their state.

memory_consolidation_candidate, memory_consolidation_propose_from_log, memory_consolidation_review,
memory_consolidation_status, and the umbrella memory_consolidation(operation=...). A candidate is pending until
reviewed; an accepted one appears in the checkout's stable memory labelled non-authoritative. Over HTTP, reviews
need the admin token (an agent must not accept its own proposals on a shared server).
"""

from __future__ import annotations

from typing import Any, ClassVar

from zaxy_agents.errors import UnauthorizedError
from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import ToolArgs
from zaxy_agents.tool_arguments import (
    CandidateFields,
    ConsolidationFields,
    ProposeFields,
    ReviewFields,
    StatusFields,
    source_value,
)


class CandidateArgs(CandidateFields, ToolArgs):
    pass


class ProposeArgs(ProposeFields, ToolArgs):
    pass


class ReviewArgs(ReviewFields, ToolArgs):
    ARGUMENT_ALIASES: ClassVar[dict[str, str]] = {"decision": "status"}


class StatusArgs(StatusFields, ToolArgs):
    pass


OPERATION_ARGS: dict[str, type[ToolArgs]] = {
    "candidate": CandidateArgs,
    "propose_from_log": ProposeArgs,
    "review": ReviewArgs,
    "status": StatusArgs,
}


def _candidate(call: ToolCall[Any], args: CandidateArgs) -> dict[str, Any]:
    return call.fabric.consolidation_candidate(
        call.session,
        candidate_type=args.candidate_type,
        title=args.title,
        summary=args.summary,
        source_events=[source_value(source) for source in args.source_events],
        confidence=args.confidence,
        method=args.method,
        purpose=args.purpose,
        actor=args.actor,
    )


def _propose(call: ToolCall[Any], args: ProposeArgs) -> dict[str, Any]:
    return call.fabric.consolidation_propose_from_log(
        call.session,
        window_size=args.window_size,
        purpose=args.purpose,
        max_events=args.max_events,
        dry_run=args.dry_run,
        limit=args.limit,
        actor=args.actor,
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
        decision=args.status,
        rationale=args.rationale,
        reviewer=args.reviewer,
        conflicts_with=list(args.conflicts_with or []),
        actor=args.actor,
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
    summarize=lambda r: f"segments={r.get('segment_count')} created={r.get('candidate_count')}",
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
    summarize=lambda r: f"status={r.get('status')} revoked={r.get('revoked_acceptance')}",
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


class ConsolidationArgs(ConsolidationFields, ToolArgs):
    """One tool for every consolidation operation; each operation takes the fields of its own tool."""

    ARGUMENT_ALIASES: ClassVar[dict[str, str]] = {"decision": "status"}


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
    args = call.args.for_operation(OPERATION_ARGS[call.args.operation])
    handlers = {"candidate": _candidate, "propose_from_log": _propose, "review": _review, "status": _status}
    return {"operation": call.args.operation, **handlers[call.args.operation](call, args)}
