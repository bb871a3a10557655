"""Memory about memory: memory_capabilities and memory_feeling_of_knowing (core)."""

from __future__ import annotations

import os
import re
import tempfile
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import MAX_SCOPE, SessionName, ToolArgs, optional


class CapabilitiesArgs(ToolArgs):
    current_task: optional(
        str, "What you are about to work on (shapes the recommended next call).", max_length=4000
    ) = None


@tool(
    "memory_capabilities",
    profile="core",
    order=70,
    read_only=True,
    summarize=lambda r: f"profile={r.get('server', {}).get('profile')} degraded={bool(r.get('degraded'))}",
    description="""What this memory can do right now and what to do next: the active tool profile (and tools
    callable by name but not listed), when to refresh memory, whether capture into this session is healthy (hooks,
    MCP lifecycle, spool; one fix per problem), the recommended next call, backends and degraded modes (never
    hidden). Call it when unsure which tools exist, then memory_checkout, the front door.""",
)
def memory_capabilities(call: ToolCall[CapabilitiesArgs]) -> dict[str, Any]:
    return capabilities_manifest(call, call.args.current_task)


def capabilities_manifest(call: ToolCall[Any], current_task: str | None) -> dict[str, Any]:
    """memory_capabilities' response (memory_bootstrap embeds it as ``manifest``)."""
    from zaxy_agents.mcp.awareness import awareness

    capabilities = call.fabric.capabilities()
    server = dict(call.caller.server)
    process = server.get("process", {})
    reasons = [reason for reason in (capabilities.get("degraded"), process.get("degraded")) if reason]
    result = {
        **capabilities,
        "degraded": "; ".join(reasons) if reasons else None,
        "session": call.session,
        "server": server,
        **awareness(call, current_task),
    }
    if call.caller.restricted:  # HTTP clients learn nothing about the server's filesystem
        result.pop("eventloom_path", None)
        process = result["server"].get("process")
        if isinstance(process, dict):
            result["server"]["process"] = {key: value for key, value in process.items() if key != "socket"}
        result = _without_paths(result, _local_paths(call.fabric))
    return result


class Cues(BaseModel):
    """Context cues (seed 004 encoding specificity): probed alongside the question's terms."""

    model_config = ConfigDict(extra="forbid", strict=True)

    mission: optional(str, "The mission or task.", max_length=500) = None
    workspace: optional(str, "The repository or workspace.", max_length=500) = None
    tool: optional(str, "The tool in use.", max_length=500) = None
    phase: optional(str, "The session phase (planning, execution, review, reflection).", max_length=500) = None


class FokArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=1000, description="The question you are about to answer.")
    cues: optional(Cues, "Context cues: mission, workspace, tool, phase.") = None
    scope: optional(list[SessionName], "Other sessions that count as memory too.", max_length=MAX_SCOPE) = None


@tool(
    "memory_feeling_of_knowing",
    profile="core",
    order=80,
    summarize=lambda r: f"verdict={r.get('verdict')} score={r.get('score')}",
    description="""Experimental, sub-millisecond: would memory_checkout (the front door) likely find an answer?
    Returns the verdict likely, possible or unlikely from in-memory signals only (entity names in the question,
    how many of its words and cues memory has seen) with no retrieval. A hint, never evidence: use it to decide
    whether a checkout is worth it or to ask the user directly.""",
)
def memory_feeling_of_knowing(call: ToolCall[FokArgs]) -> dict[str, Any]:
    args = call.args
    cues = args.cues.model_dump(exclude_none=True) if args.cues is not None else None
    return call.fabric.feeling_of_knowing(
        args.query, session=call.session, scope=call.caller.allow_scope(args.scope), cues=cues
    )


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
