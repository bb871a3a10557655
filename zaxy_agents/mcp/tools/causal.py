"""Causal memory (full profile): memory_causal_successors and memory_causal_predecessors.

Edges are proposed, non-authoritative explanations, each citing the event that supports it; to record one,
append an ``outcome.explained`` event with memory_append (see docs/cognitive.md).
"""

from __future__ import annotations

from typing import Any, ClassVar

from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import ToolArgs
from zaxy_agents.tool_arguments import CausalFields


class CausalArgs(CausalFields, ToolArgs):
    ARGUMENT_ALIASES: ClassVar[dict[str, str]] = {"entity": "entity_name", "relation_types": "relation_type"}


def _walk(call: ToolCall[CausalArgs], direction: str) -> dict[str, Any]:
    args = call.args
    read = call.fabric.causal_successors if direction == "successors" else call.fabric.causal_predecessors
    return read(
        call.session,
        args.entity_name,
        entity_type=args.entity_type,
        relation_type=args.relation_types,
        depth=args.depth,
        as_of=args.as_of,
        include_stale=args.include_stale,
    )


def _summary(result: dict[str, Any]) -> str:
    return f"{result.get('direction')} results={result.get('count')} stale_excluded={result.get('stale_excluded')}"


@tool(
    "memory_causal_successors",
    profile="full",
    order=200,
    read_only=True,
    summarize=_summary,
    description="""What did this cause, enable, block, prevent, regress, fix or explain? Follows outgoing causal
    edges breadth-first. Each hit has the relation, confidence, method, its citation and the evidence it cites
    (and whether that still resolves), path length, and review_status proposed / authority_status
    non_authoritative: explanatory memory, not authoritative state.""",
)
def memory_causal_successors(call: ToolCall[CausalArgs]) -> dict[str, Any]:
    return _walk(call, "successors")


@tool(
    "memory_causal_predecessors",
    profile="full",
    order=210,
    read_only=True,
    summarize=_summary,
    description="""Why did this happen? Follows incoming causal edges backwards: what caused, enabled, blocked,
    regressed or fixed the entity, with confidence, cited evidence and path length. Stale edges (an endpoint since
    invalidated) are excluded and counted. Explanations are proposed and non-authoritative.""",
)
def memory_causal_predecessors(call: ToolCall[CausalArgs]) -> dict[str, Any]:
    return _walk(call, "predecessors")
