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
from typing import Annotated, Any, ClassVar, Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict, Field, model_validator

from zaxy_agents.causal.taxonomy import CausalRelation
from zaxy_agents.checkpoints import DEFAULT_SESSION_PREFIX
from zaxy_agents.consolidation.contracts import CandidateType
from zaxy_agents.consolidation.contracts import ReviewDecision as Decision
from zaxy_agents.fabric import MemoryFabric

from .tools import ToolContext, ZaxyTool, memory_tools

Citation = Annotated[str, Field(min_length=20, max_length=300)]
CandidateId = Annotated[str, Field(min_length=29, max_length=29, pattern=r"^cand_[0-9a-f]{24}$")]
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
class CausalArgs(_Args):
    entity: str = Field(min_length=1, max_length=500, description="Entity name, as memory showed it.")
    entity_type: str | None = Field(default=None, max_length=64, description="Its type (default: any).")
    relation_types: list[CausalRelation] | None = Field(
        default=None, min_length=1, max_length=7, description="Only these relations (default: all seven)."
    )
    depth: int = Field(default=2, ge=1, le=6, description="Hops to follow.")
    include_stale: bool = Field(default=False, description="Also return edges whose endpoints were invalidated.")
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
            args.entity,
            entity_type=args.entity_type,
            relation_type=args.relation_types,
            depth=args.depth,
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
class CandidateArgs(_Args):
    candidate_type: CandidateType = Field(description="episode, claim or procedure.")
    title: str = Field(min_length=1, max_length=200, description="Short title.")
    summary: str = Field(min_length=1, max_length=4000, description="The proposed summary.")
    source_events: list[Citation] = Field(
        min_length=1, max_length=200, description="eventloom:// citations of the events it is based on."
    )
    confidence: float = Field(ge=0.0, le=1.0, description="How sure, 0..1.")
    method: str = Field(default="agent", min_length=1, max_length=120, description="How it was derived.")
    purpose: str = Field(default="general", min_length=1, max_length=120, description="Why it is proposed.")


class ProposeArgs(_Args):
    window_size: int = Field(default=8, ge=2, le=100, description="Actionable events per segment window.")
    purpose: str = Field(default="general", min_length=1, max_length=120, description="Recorded with each one.")
    max_events: int = Field(default=500, ge=1, le=100_000, description="Scan at most this many recent events.")
    dry_run: bool = Field(default=False, description="Show the proposals without recording them.")


class ReviewArgs(_Args):
    candidate_id: CandidateId = Field(description="The cand_... id.")
    decision: Decision = Field(description="accepted, rejected, deferred or conflicted.")
    rationale: str = Field(min_length=1, max_length=2000, description="Why.")
    reviewer: str | None = Field(default=None, max_length=256, description="Who reviewed it.")
    conflicts_with: list[Citation] | None = Field(default=None, max_length=50, description="Conflicting events.")


class StatusArgs(_Args):
    include_candidates: bool = Field(default=True, description="List the candidates too.")
    limit: int = Field(default=50, ge=0, le=200, description="At most this many candidates.")


def _candidate(context: ToolContext, args: CandidateArgs) -> dict[str, Any]:
    return context.fabric.consolidation_candidate(
        context.session,
        candidate_type=args.candidate_type,
        title=args.title,
        summary=args.summary,
        source_events=list(args.source_events),
        confidence=args.confidence,
        method=args.method,
        purpose=args.purpose,
        actor="agent",
    )


def _propose(context: ToolContext, args: ProposeArgs) -> dict[str, Any]:
    return context.fabric.consolidation_propose_from_log(
        context.session,
        window_size=args.window_size,
        purpose=args.purpose,
        max_events=args.max_events,
        dry_run=args.dry_run,
    )


def _review(context: ToolContext, args: ReviewArgs) -> dict[str, Any]:
    return context.fabric.consolidation_review(
        context.session,
        args.candidate_id,
        decision=args.decision,
        rationale=args.rationale,
        reviewer=args.reviewer,
        conflicts_with=list(args.conflicts_with or []),
        actor="agent",
    )


def _status(context: ToolContext, args: StatusArgs) -> dict[str, Any]:
    return context.fabric.consolidation_status(
        context.session, include_candidates=args.include_candidates, limit=args.limit
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


class ConsolidationArgs(_Args):
    """Every field of the four operations, optional; each operation takes the fields of its own tool."""

    operation: Literal["candidate", "propose_from_log", "review", "status"] = Field(description="What to do.")
    candidate_type: CandidateType | None = Field(default=None, description="candidate: episode, claim, procedure.")
    title: str | None = Field(default=None, min_length=1, max_length=200, description="candidate: title.")
    summary: str | None = Field(default=None, min_length=1, max_length=4000, description="candidate: summary.")
    source_events: list[Citation] | None = Field(
        default=None, min_length=1, max_length=200, description="candidate: citations of its sources."
    )
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, description="candidate: how sure.")
    method: str | None = Field(default=None, min_length=1, max_length=120, description="candidate: how derived.")
    purpose: str | None = Field(default=None, min_length=1, max_length=120, description="candidate/propose: why.")
    window_size: int | None = Field(default=None, ge=2, le=100, description="propose_from_log: window size.")
    max_events: int | None = Field(default=None, ge=1, le=100_000, description="propose_from_log: scan bound.")
    dry_run: bool | None = Field(default=None, description="propose_from_log: do not record.")
    candidate_id: CandidateId | None = Field(default=None, description="review: the cand_... id.")
    decision: Decision | None = Field(default=None, description="review: the disposition.")
    rationale: str | None = Field(default=None, min_length=1, max_length=2000, description="review: why.")
    reviewer: str | None = Field(default=None, max_length=256, description="review: who.")
    conflicts_with: list[Citation] | None = Field(default=None, max_length=50, description="review: conflicts.")
    include_candidates: bool | None = Field(default=None, description="status: list the candidates.")
    limit: int | None = Field(default=None, ge=0, le=200, description="status: at most this many.")

    @model_validator(mode="after")
    def _fields_fit_the_operation(self) -> ConsolidationArgs:
        model = OPERATIONS[self.operation][0]
        given = {name for name in type(self).model_fields if getattr(self, name) is not None} - {"operation"}
        foreign = sorted(given - set(model.model_fields))
        if foreign:
            raise ValueError(f"{', '.join(foreign)} do not apply to operation {self.operation!r}")
        missing = [name for name, info in model.model_fields.items() if info.is_required() and name not in given]
        if missing:
            raise ValueError(f"operation {self.operation!r} needs {', '.join(missing)}")
        return self


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
        values = {name: getattr(args, name) for name in model.model_fields if getattr(args, name) is not None}
        return {"operation": args.operation, **handler(context, model.model_validate(values))}


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
