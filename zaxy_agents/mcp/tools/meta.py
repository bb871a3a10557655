"""Memory about memory: memory_capabilities and memory_feeling_of_knowing (core)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import MAX_SCOPE, SessionName, ToolArgs, optional


class CapabilitiesArgs(ToolArgs):
    pass


@tool(
    "memory_capabilities",
    profile="core",
    order=70,
    read_only=True,
    summarize=lambda r: f"profile={r.get('server', {}).get('profile')} degraded={bool(r.get('degraded'))}",
    description="""What this memory server can do right now: backends, degraded modes (never hidden), how this
    process reaches the graph, the active tool profile and the tools callable by name but not listed, retrieval
    profiles, purposes and extractors.""",
)
def memory_capabilities(call: ToolCall[CapabilitiesArgs]) -> dict[str, Any]:
    capabilities = call.fabric.capabilities()
    server = dict(call.caller.server)
    process = server.get("process", {})
    reasons = [reason for reason in (capabilities.get("degraded"), process.get("degraded")) if reason]
    if call.caller.restricted:
        capabilities.pop("eventloom_path", None)
    return {
        **capabilities,
        "degraded": "; ".join(reasons) if reasons else None,
        "session": call.session,
        "server": server,
    }


class FokArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=1000, description="The question you are about to answer.")
    scope: optional(list[SessionName], "Other sessions that count as memory too.", max_length=MAX_SCOPE) = None


@tool(
    "memory_feeling_of_knowing",
    profile="core",
    order=80,
    summarize=lambda r: f"prediction={r.get('prediction')} score={r.get('score')}",
    description="""Experimental, sub-millisecond: does memory probably know the answer? Returns likely, possible
    or unlikely from in-memory signals only (entity names in the question, how many of its words memory has seen)
    with no retrieval. Use it to decide whether a checkout is worth it or to ask the user directly.""",
)
def memory_feeling_of_knowing(call: ToolCall[FokArgs]) -> dict[str, Any]:
    args = call.args
    return call.fabric.feeling_of_knowing(args.query, session=call.session, scope=call.caller.allow_scope(args.scope))
