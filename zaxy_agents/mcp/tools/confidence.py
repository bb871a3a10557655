"""Metacognition (full profile, seed 003 beta.2): what memory does not know and how sure it is.

memory_record_known_unknown, memory_known_unknowns, memory_confidence_trajectory, memory_reverification_needs,
memory_claim_confidence, and the umbrella memory_confidence(operation=...). Every record is cited and
non-authoritative: uncertainty signals for the agent, never facts, and never a change of what memory holds.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import MAX_SCOPE, SessionName, ToolArgs, optional
from zaxy_agents.tool_arguments import (
    ClaimConfidenceFields,
    ConfidenceFields,
    KnownUnknownsFields,
    RecordKnownUnknownFields,
    ReverificationFields,
    TrajectoryFields,
    source_value,
)

SCOPE_HELP = (
    "Other sessions to read as well (your own is always included); contradicting claims are found across them. "
    "Default: as memory_checkout."
)


class _Scoped(ToolArgs):
    scope: optional(list[SessionName], SCOPE_HELP, max_length=MAX_SCOPE) = None


class RecordArgs(RecordKnownUnknownFields, ToolArgs):
    pass


class KnownUnknownsArgs(KnownUnknownsFields, _Scoped):
    pass


class TrajectoryArgs(TrajectoryFields, _Scoped):
    pass


class ReverificationArgs(ReverificationFields, _Scoped):
    pass


class ClaimArgs(ClaimConfidenceFields, _Scoped):
    pass


def _record(call: ToolCall[Any], args: RecordArgs) -> dict[str, Any]:
    return call.fabric.record_known_unknown(
        call.session,
        question=args.question,
        reason=args.reason,
        source_events=[source_value(source) for source in args.source_events],
        claim_key=args.claim_key,
        priority=args.priority,
        actor=args.actor,
    )


def _known_unknowns(call: ToolCall[Any], args: KnownUnknownsArgs) -> dict[str, Any]:
    return call.fabric.known_unknowns(
        call.session, scope=call.caller.allow_scope(args.scope), status=args.status, as_of=args.as_of, limit=args.limit
    )


def _trajectory(call: ToolCall[Any], args: TrajectoryArgs) -> dict[str, Any]:
    return call.fabric.confidence_trajectory(
        call.session, args.claim_key, scope=call.caller.allow_scope(args.scope), as_of=args.as_of
    )


def _reverification(call: ToolCall[Any], args: ReverificationArgs) -> dict[str, Any]:
    return call.fabric.reverification_needs(
        call.session,
        scope=call.caller.allow_scope(args.scope),
        as_of=args.as_of,
        max_age_days=args.max_age_days if args.max_age_days is not None else 90,
        include_resolved=args.include_resolved,
        limit=args.limit,
    )


def _claim(call: ToolCall[Any], args: ClaimArgs) -> dict[str, Any]:
    return call.fabric.claim_confidence(
        call.session,
        args.claim_key,
        scope=call.caller.allow_scope(args.scope),
        as_of=args.as_of,
        confidence=args.confidence,
        rationale=args.rationale,
        source_events=[source_value(source) for source in args.source_events or []],
        method=args.method,
        actor=args.actor,
    )


@tool(
    "memory_record_known_unknown",
    profile="full",
    order=270,
    summarize=lambda r: f"unknown={r.get('unknown_id')} created={r.get('created')}",
    description="""Record a question memory cannot answer yet (question, reason, the source_events that show the
    gap, optional claim_key and priority): an open, cited, non-authoritative uncertainty item. While it is open,
    memory_checkout will not answer that question from memory (it reports it under diagnostics.metacognition and
    recommends a refresh). Recording the same question twice records it once.""",
)
def memory_record_known_unknown(call: ToolCall[RecordArgs]) -> dict[str, Any]:
    return _record(call, call.args)


@tool(
    "memory_known_unknowns",
    profile="full",
    order=280,
    read_only=True,
    summarize=lambda r: f"open={r.get('open_count')} resolved={r.get('resolved_count')}",
    description="""List the known unknowns of this session (and scope), newest first: open ones by default, with
    their question, reason, claim key, priority, citation and, once resolved, the resolution. Diagnostic
    uncertainty signals, not facts.""",
)
def memory_known_unknowns(call: ToolCall[KnownUnknownsArgs]) -> dict[str, Any]:
    return _known_unknowns(call, call.args)


@tool(
    "memory_confidence_trajectory",
    profile="full",
    order=290,
    read_only=True,
    summarize=lambda r: f"points={r.get('point_count')} trend={r.get('trend')}",
    description="""The confidence trajectory of a claim: every recorded assessment (append-only points, oldest
    first, each cited), the latest value and whether it is rising, falling or flat. Assessments never overwrite
    the claim itself.""",
)
def memory_confidence_trajectory(call: ToolCall[TrajectoryArgs]) -> dict[str, Any]:
    return _trajectory(call, call.args)


@tool(
    "memory_reverification_needs",
    profile="full",
    order=300,
    read_only=True,
    summarize=lambda r: f"requests={r.get('open_request_count')} derived={r.get('derived_count')}",
    description="""What should be re-checked before it is relied on: explicit re-verification requests (open until
    a resolution event closes them), current claims whose evidence no longer resolves, is assessed weak, is
    contradicted by another session's current claim (conflict clusters) or is older than max_age_days.""",
)
def memory_reverification_needs(call: ToolCall[ReverificationArgs]) -> dict[str, Any]:
    return _reverification(call, call.args)


@tool(
    "memory_claim_confidence",
    profile="full",
    order=310,
    summarize=lambda r: f"supported={r.get('supported')} confidence={r.get('assessed_confidence')}",
    description="""How far memory backs a claim (claim_key): its current facts and whether their evidence resolves,
    the latest assessed confidence and trend, open known unknowns and re-verification requests about it, and any
    contradicting current claims; supported is true only when none of these doubts applies. With confidence,
    rationale and source_events it first records an assessment point (never a change of the claim).""",
)
def memory_claim_confidence(call: ToolCall[ClaimArgs]) -> dict[str, Any]:
    return _claim(call, call.args)


OPERATIONS: dict[str, tuple[type[ToolArgs], Any]] = {
    "claim": (ClaimArgs, _claim),
    "trajectory": (TrajectoryArgs, _trajectory),
    "reverification": (ReverificationArgs, _reverification),
    "known_unknowns": (KnownUnknownsArgs, _known_unknowns),
    "record_known_unknown": (RecordArgs, _record),
}


class ConfidenceArgs(ConfidenceFields, _Scoped):
    """One tool for the confidence and metacognition operations; each takes the fields of its own tool."""


@tool(
    "memory_confidence",
    profile="full",
    order=320,
    summarize=lambda r: f"operation={r.get('operation')}",
    description="""All confidence and metacognition in one tool: operation=claim (memory_claim_confidence),
    trajectory (memory_confidence_trajectory), reverification (memory_reverification_needs), known_unknowns
    (memory_known_unknowns) or record_known_unknown (memory_record_known_unknown). The other arguments are those
    of the matching tool; every answer is a non-authoritative uncertainty signal.""",
)
def memory_confidence(call: ToolCall[ConfidenceArgs]) -> dict[str, Any]:
    model, handler = OPERATIONS[call.args.operation]
    if call.args.scope is not None and "scope" not in model.model_fields:
        raise InvalidRequestError(
            f"scope does not apply to operation {call.args.operation!r}",
            field="scope",
            remediation="A known unknown is recorded in this session: drop scope.",
        )
    args = call.args.for_operation(model)
    return {"operation": call.args.operation, **handler(call, args)}
