"""memory_query (core): fused retrieval with explained, cited hits."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import MAX_SCOPE, SessionName, ToolArgs, optional
from zaxy_agents.mcp.tools.meta import Cues
from zaxy_agents.tool_arguments import RetrievalProfileArgument, as_of_field

RetrievalProfile = Literal["balanced", "precision", "recall", "temporal", "cognitive"]


class QueryArgs(ToolArgs):
    ARGUMENT_ALIASES: ClassVar[dict[str, str]] = {"k": "limit", "as_of": "temporal_filter"}

    query: str = Field(min_length=1, max_length=4000, description="What to look for.")
    temporal_filter: as_of_field("Search memory (only what was valid then)") = None
    limit: int = Field(default=10, ge=1, le=50, description="How many hits to return.")
    scope: optional(list[SessionName], "Other sessions to search as well.", max_length=MAX_SCOPE) = None
    profile: RetrievalProfile = Field(default="balanced", description="Lane weighting of the fused retrieval.")
    include_superseded: bool = Field(default=False, description="Also return superseded or invalidated results.")
    retrieval_profile: RetrievalProfileArgument = None
    cues: optional(Cues, "Your context (mission, workspace, tool, phase): memories recorded in it rank higher.") = None


@tool(
    "memory_query",
    profile="core",
    order=30,
    read_only=True,
    summarize=lambda r: f"hits={len(r.get('hits', []))} superseded_excluded={r.get('superseded_excluded')}",
    description="""Search memory when a checkout was not enough (memory_checkout is the front door; its next step
    may say so): fused exact, keyword, vector, graph and verbatim retrieval. Each hit is cited, has a status
    (current, superseded, invalidated, event) and explains its score.""",
)
def memory_query(call: ToolCall[QueryArgs]) -> dict[str, Any]:
    args = call.args
    sessions = sorted({call.session, *(call.caller.allow_scope(args.scope) or [])})
    response = call.fabric.query(
        args.query,
        sessions=sessions,
        k=args.limit,
        profile=args.profile,
        as_of=args.temporal_filter,
        include_superseded=args.include_superseded,
        retrieval_profile=args.retrieval_profile,
        cues=args.cues.model_dump(exclude_none=True) if args.cues is not None else None,
    )
    return response.model_dump(mode="json", exclude_none=True)
