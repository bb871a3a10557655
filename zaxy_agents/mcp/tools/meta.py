"""Memory about memory: memory_capabilities and memory_feeling_of_knowing (core)."""

from __future__ import annotations

import os
import re
import tempfile
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
    result = {
        **capabilities,
        "degraded": "; ".join(reasons) if reasons else None,
        "session": call.session,
        "server": server,
    }
    if call.caller.restricted:  # HTTP clients learn nothing about the server's filesystem
        result.pop("eventloom_path", None)
        process = result["server"].get("process")
        if isinstance(process, dict):
            result["server"]["process"] = {key: value for key, value in process.items() if key != "socket"}
        result = _without_paths(result, _local_paths(call.fabric))
    return result


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


def _local_paths(fabric: Any) -> re.Pattern[str]:
    """Filesystem locations a restricted caller must not see (as whole path tokens, longest first)."""
    folder = fabric.settings.eventloom_dir
    found = {folder, os.path.abspath(folder), os.path.realpath(folder), tempfile.gettempdir()}
    found |= {os.path.dirname(os.path.abspath(folder)), os.path.expanduser("~")}
    paths = sorted((path for path in found if path and path not in (".", "/")), key=len, reverse=True)
    return re.compile(r"(?<![\w.~/-])(?:" + "|".join(map(re.escape, paths)) + r")(?=[/\s'\"),:;]|$)")


def _without_paths(value: Any, paths: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return paths.sub("<path>", value)
    if isinstance(value, dict):
        return {key: _without_paths(item, paths) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_paths(item, paths) for item in value]
    return value
