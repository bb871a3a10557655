"""Metacognition tools for LangGraph agents (opt-in: name them in ``memory_tools(include=...)`` or use
:func:`metacognition_tools`).

The same operations as the MCP full profile (seed 003 beta.2): ``memory_record_known_unknown``,
``memory_known_unknowns``, ``memory_confidence_trajectory``, ``memory_reverification_needs``,
``memory_claim_confidence`` and the umbrella ``memory_confidence(operation=...)``. Like every memory tool they
take no session argument: records go to the run's session, reads cover its recall scope (where contradicting
claims of different sessions are found). Everything they return is a non-authoritative uncertainty signal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict

from zaxy_agents.checkpoints import DEFAULT_SESSION_PREFIX
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.tool_arguments import (
    ClaimConfidenceFields,
    ConfidenceFields,
    KnownUnknownsFields,
    RecordKnownUnknownFields,
    ReverificationFields,
    TrajectoryFields,
    source_value,
)

from .tools import ToolContext, ZaxyTool, memory_tools

METACOGNITION_TOOLS = (
    "memory_record_known_unknown",
    "memory_known_unknowns",
    "memory_confidence_trajectory",
    "memory_reverification_needs",
    "memory_claim_confidence",
    "memory_confidence",
)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RecordArgs(RecordKnownUnknownFields, _Args):
    pass


class KnownUnknownsArgs(KnownUnknownsFields, _Args):
    pass


class TrajectoryArgs(TrajectoryFields, _Args):
    pass


class ReverificationArgs(ReverificationFields, _Args):
    pass


class ClaimArgs(ClaimConfidenceFields, _Args):
    pass


def _others(context: ToolContext) -> list[str]:
    return [name for name in context.scope.recall if name != context.session]


def _record(context: ToolContext, args: RecordArgs) -> dict[str, Any]:
    return context.fabric.record_known_unknown(
        context.session,
        question=args.question,
        reason=args.reason,
        source_events=[source_value(source) for source in args.source_events],
        claim_key=args.claim_key,
        priority=args.priority,
        actor=args.actor,
    )


def _known_unknowns(context: ToolContext, args: KnownUnknownsArgs) -> dict[str, Any]:
    return context.fabric.known_unknowns(
        context.session, scope=_others(context), status=args.status, as_of=args.as_of, limit=args.limit
    )


def _trajectory(context: ToolContext, args: TrajectoryArgs) -> dict[str, Any]:
    return context.fabric.confidence_trajectory(
        context.session, args.claim_key, scope=_others(context), as_of=args.as_of
    )


def _reverification(context: ToolContext, args: ReverificationArgs) -> dict[str, Any]:
    return context.fabric.reverification_needs(
        context.session,
        scope=_others(context),
        as_of=args.as_of,
        max_age_days=args.max_age_days if args.max_age_days is not None else 90,
        include_resolved=args.include_resolved,
        limit=args.limit,
    )


def _claim(context: ToolContext, args: ClaimArgs) -> dict[str, Any]:
    return context.fabric.claim_confidence(
        context.session,
        args.claim_key,
        scope=_others(context),
        as_of=args.as_of,
        confidence=args.confidence,
        rationale=args.rationale,
        source_events=[source_value(source) for source in args.source_events or []],
        method=args.method,
        actor=args.actor,
    )


class MemoryRecordKnownUnknownTool(ZaxyTool):
    name: str = "memory_record_known_unknown"
    description: str = (
        "Record a question memory cannot answer yet (question, reason, the source_events showing the gap, optional "
        "claim_key, priority). While open, memory checkout will not answer that question from memory."
    )
    args_schema: type[BaseModel] = RecordArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: RecordArgs) -> dict[str, Any]:
        return _record(context, args)


class MemoryKnownUnknownsTool(ZaxyTool):
    name: str = "memory_known_unknowns"
    description: str = (
        "List what memory knows it does not know (open known unknowns by default), with questions, reasons, "
        "priorities and citations. Uncertainty signals, not facts."
    )
    args_schema: type[BaseModel] = KnownUnknownsArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: KnownUnknownsArgs) -> dict[str, Any]:
        return _known_unknowns(context, args)


class MemoryConfidenceTrajectoryTool(ZaxyTool):
    name: str = "memory_confidence_trajectory"
    description: str = (
        "A claim's confidence over time: every recorded assessment (append-only, cited), the latest value and "
        "whether it is rising, falling or flat. Assessments never change the claim."
    )
    args_schema: type[BaseModel] = TrajectoryArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: TrajectoryArgs) -> dict[str, Any]:
        return _trajectory(context, args)


class MemoryReverificationNeedsTool(ZaxyTool):
    name: str = "memory_reverification_needs"
    description: str = (
        "What to re-check before relying on it: open re-verification requests and current claims whose evidence "
        "no longer resolves, is assessed weak, is contradicted by another session or is old."
    )
    args_schema: type[BaseModel] = ReverificationArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: ReverificationArgs) -> dict[str, Any]:
        return _reverification(context, args)


class MemoryClaimConfidenceTool(ZaxyTool):
    name: str = "memory_claim_confidence"
    description: str = (
        "How far memory backs a claim (claim_key, e.g. fact:launch date): current facts and whether their "
        "evidence resolves, assessed confidence, open unknowns, re-verification requests and contradictions. "
        "With confidence, rationale and source_events it records an assessment point first."
    )
    args_schema: type[BaseModel] = ClaimArgs
    default: ClassVar[bool] = False
    recalls_memory: ClassVar[bool] = True

    def execute(self, context: ToolContext, args: ClaimArgs) -> dict[str, Any]:
        return _claim(context, args)


OPERATIONS: dict[str, tuple[type[_Args], Any]] = {
    "claim": (ClaimArgs, _claim),
    "trajectory": (TrajectoryArgs, _trajectory),
    "reverification": (ReverificationArgs, _reverification),
    "known_unknowns": (KnownUnknownsArgs, _known_unknowns),
    "record_known_unknown": (RecordArgs, _record),
}


class ConfidenceArgs(ConfidenceFields, _Args):
    """One tool for the confidence and metacognition operations; each takes the fields of its own tool."""


class MemoryConfidenceTool(ZaxyTool):
    name: str = "memory_confidence"
    description: str = (
        "All confidence and metacognition in one tool: operation=claim, trajectory, reverification, "
        "known_unknowns or record_known_unknown, with the arguments of the matching memory_* tool."
    )
    args_schema: type[BaseModel] = ConfidenceArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: ConfidenceArgs) -> dict[str, Any]:
        model, handler = OPERATIONS[args.operation]
        return {"operation": args.operation, **handler(context, args.for_operation(model))}


def metacognition_tools(
    fabric: MemoryFabric,
    *,
    scope: Sequence[str] = (),
    session: str | None = None,
    session_prefix: str = DEFAULT_SESSION_PREFIX,
    include: Sequence[str] = METACOGNITION_TOOLS,
) -> list[BaseTool]:
    """The metacognition tools (all six by default), scoped like :func:`memory_tools`."""
    return memory_tools(fabric, scope=scope, session=session, session_prefix=session_prefix, include=include)
