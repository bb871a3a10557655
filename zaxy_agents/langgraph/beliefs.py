"""Belief-update proposal tools for LangGraph agents (opt-in: ``memory_tools(include=...)`` or
:func:`belief_tools`): ``memory_propose_belief_update``, ``memory_review_belief_update`` and
``memory_belief_update_proposals``, the same operations as the MCP full profile. Proposals go to the run's
session; nothing they do changes a current fact (a review is a disposition, never a promotion)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict

from zaxy_agents.checkpoints import DEFAULT_SESSION_PREFIX
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.tool_arguments import BeliefListFields, ProposeBeliefFields, ReviewBeliefFields, source_value

from .tools import ToolContext, ZaxyTool, memory_tools

BELIEF_TOOLS = ("memory_propose_belief_update", "memory_review_belief_update", "memory_belief_update_proposals")


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProposeArgs(ProposeBeliefFields, _Args):
    pass


class ReviewArgs(ReviewBeliefFields, _Args):
    pass


class ListArgs(BeliefListFields, _Args):
    pass


class MemoryProposeBeliefUpdateTool(ZaxyTool):
    name: str = "memory_propose_belief_update"
    description: str = (
        "Propose a belief update (claim, rationale, confidence, citations, phase). It stays a pending, "
        "non-authoritative proposal: no current fact changes until a review and a separate promotion."
    )
    args_schema: type[BaseModel] = ProposeArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: ProposeArgs) -> dict[str, Any]:
        return context.fabric.propose_belief_update(
            context.session,
            claim=args.claim,
            rationale=args.rationale,
            confidence=args.confidence,
            citations=[source_value(citation) for citation in args.citations],
            phase=args.phase,
            claim_key=args.claim_key,
            actor=args.actor,
        )


class MemoryReviewBeliefUpdateTool(ZaxyTool):
    name: str = "memory_review_belief_update"
    description: str = (
        "Record a review of a belief update proposal: accepted, rejected, deferred or conflicted, with a "
        "rationale. Never a promotion: the proposal stays non-authoritative and current facts do not change."
    )
    args_schema: type[BaseModel] = ReviewArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: ReviewArgs) -> dict[str, Any]:
        return context.fabric.review_belief_update(
            context.session,
            args.proposal_id,
            status=args.status,
            rationale=args.rationale,
            reviewer=args.reviewer,
            actor=args.actor,
        )


class MemoryBeliefUpdateProposalsTool(ZaxyTool):
    name: str = "memory_belief_update_proposals"
    description: str = (
        "List belief update proposals of this conversation with their review state and citations (review "
        "material, not memory)."
    )
    args_schema: type[BaseModel] = ListArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: ListArgs) -> dict[str, Any]:
        others = [name for name in context.scope.recall if name != context.session]
        return context.fabric.belief_proposals(
            context.session, scope=others, status=args.status, as_of=args.as_of, limit=args.limit
        )


def belief_tools(
    fabric: MemoryFabric,
    *,
    scope: Sequence[str] = (),
    session: str | None = None,
    session_prefix: str = DEFAULT_SESSION_PREFIX,
    include: Sequence[str] = BELIEF_TOOLS,
) -> list[BaseTool]:
    """The belief-update proposal tools (all three by default), scoped like :func:`memory_tools`."""
    return memory_tools(fabric, scope=scope, session=session, session_prefix=session_prefix, include=include)
