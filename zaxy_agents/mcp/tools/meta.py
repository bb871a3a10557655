"""Memory about memory: memory_capabilities and memory_feeling_of_knowing (core)."""

from __future__ import annotations

import os
import re
import tempfile
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import MAX_SCOPE, SessionName, ToolArgs, optional

TASK_HELP = "What you are about to work on: the recommended next call is a checkout for it."
DEFAULT_FIRST_QUERY = "current task, project direction, and recent decisions"


def recommended_checkout(current_task: str | None) -> dict[str, Any]:
    """The call a model should make next (seed 003): a checkout for the task at hand."""
    return {
        "tool": "memory_checkout",
        "arguments": {"query": current_task or DEFAULT_FIRST_QUERY},
        "reason": "memory_checkout is the front door: call it before substantial work, after compaction or "
        "resume, and before roadmap or architecture decisions.",
    }


class CapabilitiesArgs(ToolArgs):
    current_task: optional(str, TASK_HELP, max_length=4000) = None


@tool(
    "memory_capabilities",
    profile="core",
    order=70,
    read_only=True,
    summarize=lambda r: f"profile={r.get('server', {}).get('profile')} degraded={bool(r.get('degraded'))}",
    description="""What this memory server can do right now, and what to call next (usually memory_checkout, the
    front door): backends, degraded modes (never hidden), how this process reaches the graph, the active tool
    profile and the tools callable by name but not listed, retrieval profiles, purposes and extractors.""",
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
        "recommended_next_call": recommended_checkout(call.args.current_task),
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
