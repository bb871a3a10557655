"""Causal and consolidation memory tools for LangGraph agents (opt-in: name them in ``memory_tools(include=...)``
or use :func:`cognitive_tools`).

The same operations as the MCP full profile: ``memory_causal_successors``, ``memory_causal_predecessors``,
``memory_consolidation_candidate``, ``memory_consolidation_propose_from_log``, ``memory_consolidation_review``,
``memory_consolidation_status`` and the umbrella ``memory_consolidation(operation=...)``. Like every memory tool
they take no session argument: they work in the run's session (a causal read may follow an entity's citation
into another session of the recall scope). Causal edges are proposed and non-authoritative; candidates stay
pending until reviewed and are labelled non-authoritative even then (docs/cognitive.md). To record an
explanation, append an ``outcome.explained`` event with ``memory_append`` (evidence = a citation).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict, Field

from zaxy_agents.checkpoints import DEFAULT_SESSION_PREFIX
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.tool_arguments import (
    CandidateFields,
    CausalFields,
    ConsolidationFields,
    ProposeFields,
    ReviewFields,
    StatusFields,
    source_value,
)

from .tools import ToolContext, ZaxyTool, memory_tools

COGNITIVE_TOOLS = (
    "memory_causal_successors",
    "memory_causal_predecessors",
    "memory_consolidation_candidate",
    "memory_consolidation_propose_from_log",
    "memory_consolidation_review",
    "memory_consolidation_status",
    "memory_consolidation",
)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------- causal memory
class CausalArgs(CausalFields, _Args):
    citation: str | None = Field(
        default=None, max_length=300, description="The entity's eventloom:// citation (reads its session)."
    )


class _CausalTool(ZaxyTool):
    default: ClassVar[bool] = False
    recalls_memory: ClassVar[bool] = True
    direction: ClassVar[str] = "successors"

    def execute(self, context: ToolContext, args: CausalArgs) -> dict[str, Any]:
        fabric = context.fabric
        read = fabric.causal_successors if self.direction == "successors" else fabric.causal_predecessors
        return read(
            context.session_of(args.citation),
            args.entity_name,
            entity_type=args.entity_type,
            relation_type=args.relation_types,
            depth=args.depth,
            as_of=args.as_of,
            include_stale=args.include_stale,
        )


class MemoryCausalSuccessorsTool(_CausalTool):
    name: str = "memory_causal_successors"
    description: str = (
        "What did this cause, enable, block, prevent, regress, fix or explain? Outgoing causal edges with "
        "confidence, cited evidence and path length. Explanatory memory (proposed, non-authoritative), not state."
    )
    args_schema: type[BaseModel] = CausalArgs
    direction: ClassVar[str] = "successors"


class MemoryCausalPredecessorsTool(_CausalTool):
    name: str = "memory_causal_predecessors"
    description: str = (
        "Why did this happen? Incoming causal edges walked backwards (causes, enablers, blockers, fixes) with "
        "confidence, cited evidence and path length. Explanatory memory (proposed, non-authoritative), not state."
    )
    args_schema: type[BaseModel] = CausalArgs
    direction: ClassVar[str] = "predecessors"


# ---------------------------------------------------------------------- consolidation
class CandidateArgs(CandidateFields, _Args):
    pass


class ProposeArgs(ProposeFields, _Args):
    pass


class ReviewArgs(ReviewFields, _Args):
    pass


class StatusArgs(StatusFields, _Args):
    pass


def _candidate(context: ToolContext, args: CandidateArgs) -> dict[str, Any]:
    return context.fabric.consolidation_candidate(
        context.session,
        candidate_type=args.candidate_type,
        title=args.title,
        summary=args.summary,
        source_events=[source_value(source) for source in args.source_events],
        confidence=args.confidence,
        method=args.method,
        purpose=args.purpose,
        actor=args.actor,
    )


def _propose(context: ToolContext, args: ProposeArgs) -> dict[str, Any]:
    return context.fabric.consolidation_propose_from_log(
        context.session,
        window_size=args.window_size,
        purpose=args.purpose,
        max_events=args.max_events,
        dry_run=args.dry_run,
        limit=args.limit,
        actor=args.actor,
    )


def _review(context: ToolContext, args: ReviewArgs) -> dict[str, Any]:
    return context.fabric.consolidation_review(
        context.session,
        args.candidate_id,
        decision=args.status,
        rationale=args.rationale,
        reviewer=args.reviewer,
        conflicts_with=list(args.conflicts_with or []),
        actor=args.actor,
    )


def _status(context: ToolContext, args: StatusArgs) -> dict[str, Any]:
    return context.fabric.consolidation_status(
        context.session, as_of=args.as_of, include_candidates=args.include_candidates, limit=args.limit
    )


class MemoryConsolidationCandidateTool(ZaxyTool):
    name: str = "memory_consolidation_candidate"
    description: str = (
        "Propose a cited summary (episode, claim or procedure) for review. It stays pending and is not memory "
        "until a review accepts it; even then it is labelled non-authoritative."
    )
    args_schema: type[BaseModel] = CandidateArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: CandidateArgs) -> dict[str, Any]:
        return _candidate(context, args)


class MemoryConsolidationProposeFromLogTool(ZaxyTool):
    name: str = "memory_consolidation_propose_from_log"
    description: str = (
        "Propose episode, claim and procedure candidates from this conversation's recent actionable events "
        "(tool calls, commands, file edits, completed tasks, findings). Deterministic; proposing again adds nothing."
    )
    args_schema: type[BaseModel] = ProposeArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: ProposeArgs) -> dict[str, Any]:
        return _propose(context, args)


class MemoryConsolidationReviewTool(ZaxyTool):
    name: str = "memory_consolidation_review"
    description: str = (
        "Record a review of a candidate: accepted, rejected, deferred or conflicted, with a rationale. Accepting "
        "is not an authority promotion (the memory stays labelled non-authoritative); stale or superseded "
        "candidates cannot be accepted."
    )
    args_schema: type[BaseModel] = ReviewArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: ReviewArgs) -> dict[str, Any]:
        return _review(context, args)


class MemoryConsolidationStatusTool(ZaxyTool):
    name: str = "memory_consolidation_status"
    description: str = (
        "Consolidation state of this conversation: pending, deferred, accepted, rejected, conflicted, stale, "
        "superseded and valid_to-closed counts, and the candidates with their citations."
    )
    args_schema: type[BaseModel] = StatusArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: StatusArgs) -> dict[str, Any]:
        return _status(context, args)


OPERATIONS: dict[str, tuple[type[_Args], Any]] = {
    "candidate": (CandidateArgs, _candidate),
    "propose_from_log": (ProposeArgs, _propose),
    "review": (ReviewArgs, _review),
    "status": (StatusArgs, _status),
}


class ConsolidationArgs(ConsolidationFields, _Args):
    """One tool for every consolidation operation; each operation takes the fields of its own tool."""


class MemoryConsolidationTool(ZaxyTool):
    name: str = "memory_consolidation"
    description: str = (
        "All consolidation in one tool: operation=candidate (propose a cited summary), propose_from_log "
        "(proposals from this conversation's actionable events), review (accepted/rejected/deferred/conflicted "
        "with a rationale) or status. Candidates stay pending and non-authoritative."
    )
    args_schema: type[BaseModel] = ConsolidationArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: ConsolidationArgs) -> dict[str, Any]:
        model, handler = OPERATIONS[args.operation]
        return {"operation": args.operation, **handler(context, args.for_operation(model))}


def cognitive_tools(
    fabric: MemoryFabric,
    *,
    scope: Sequence[str] = (),
    session: str | None = None,
    session_prefix: str = DEFAULT_SESSION_PREFIX,
    include: Sequence[str] = COGNITIVE_TOOLS,
) -> list[BaseTool]:
    """The causal and consolidation tools (all seven by default), scoped like :func:`memory_tools`."""
    return memory_tools(fabric, scope=scope, session=session, session_prefix=session_prefix, include=include)
