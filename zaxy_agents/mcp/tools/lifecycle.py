"""The agent lifecycle: context_after_turn, subagent_cleanup and memory_skill (full profile)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import SessionName, ToolArgs, optional


class ToolUse(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(min_length=1, max_length=128, description="Tool name (Bash, Edit, a MCP tool...).")
    status: Literal["ok", "error"] = Field(default="ok", description="How the call ended.")
    summary: optional(str, "One line about what it did or returned.", max_length=500) = None


class AfterTurnArgs(ToolArgs):
    user_text: optional(str, "What the user said this turn.", max_length=20_000) = None
    assistant_text: optional(str, "What you answered (final text, not tool output).", max_length=20_000) = None
    tools_used: list[ToolUse] = Field(default_factory=list, max_length=32, description="Tools you called.")
    turn_id: optional(str, "Your id for the turn (groups its events).", max_length=128) = None
    since_seq: optional(int, "Report changes after this seq (default: your last checkout).", ge=0) = None


@tool(
    "context_after_turn",
    profile="full",
    order=140,
    summarize=lambda r: f"recorded={len(r.get('recorded', []))} changes={r.get('counts')}",
    description="""Call when a turn is finished: records the user and assistant text and the tools used as
    events, and returns what changed in memory since your last checkout (new or updated facts, decisions and tasks,
    superseded and invalidated ones, each cited).""",
)
def context_after_turn(call: ToolCall[AfterTurnArgs]) -> dict[str, Any]:
    args = call.args
    return call.fabric.after_turn(
        call.session,
        user_text=args.user_text,
        assistant_text=args.assistant_text,
        tools_used=[tool.model_dump(exclude_none=True) for tool in args.tools_used],
        turn_id=args.turn_id,
        since_seq=args.since_seq,
    )


class SubagentArgs(ToolArgs):
    subagent_id: str = Field(min_length=1, max_length=128, description="The subagent's id or name.")
    status: Literal["completed", "failed", "cancelled"] = Field(description="How the subagent ended.")
    summary: str = Field(min_length=1, max_length=8000, description="What it did and found.")
    subagent_session: optional(
        SessionName, "The subagent's own session, if it had one (its open tasks are settled)."
    ) = None
    task_ids: optional(
        list[Annotated[str, Field(min_length=1, max_length=200)]],
        "The subagent's open tasks (when it shared your session).",
        max_length=100,
    ) = None
    open_items: Literal["handover", "close"] = Field(
        default="handover", description="handover: re-open its tasks in your session; close: close them."
    )


@tool(
    "subagent_cleanup",
    profile="full",
    order=150,
    summarize=lambda r: f"closed={len(r.get('closed', []))} handed_over={len(r.get('handed_over', []))}",
    description="""Call when a subagent finishes: records its outcome and summary in your session and closes or
    hands over the tasks it left open, so nothing it started is silently dropped.""",
)
def subagent_cleanup(call: ToolCall[SubagentArgs]) -> dict[str, Any]:
    args = call.args
    subagent_session = call.caller.allow_session(args.subagent_session, field="subagent_session")
    return call.fabric.subagent_cleanup(
        call.session,
        subagent_id=args.subagent_id,
        status=args.status,
        summary=args.summary,
        subagent_session=subagent_session,
        task_ids=args.task_ids,
        open_items=args.open_items,
    )


class SkillArgs(ToolArgs):
    action: Literal["registered", "invoked", "updated", "retired"] = Field(description="The lifecycle step.")
    skill: str = Field(min_length=1, max_length=128, description="The skill's name.")
    description: optional(str, "What it does and when to use it (required to register).", max_length=4000) = None
    version: optional(str, "Its version.", max_length=64) = None
    outcome: optional(Literal["success", "failure"], "For invoked: how the run went.") = None
    note: optional(str, "Anything worth remembering about this step.", max_length=2000) = None


@tool(
    "memory_skill",
    profile="full",
    order=160,
    summarize=lambda r: f"{r.get('type')}",
    description="""Record a skill's lifecycle: registered (with a description), invoked (with outcome; successful
    runs reinforce it), updated, retired (kept in history, no longer current).""",
)
def memory_skill(call: ToolCall[SkillArgs]) -> dict[str, Any]:
    args = call.args
    event = call.fabric.record_skill(
        call.session,
        args.action,
        args.skill,
        description=args.description,
        version=args.version,
        outcome=args.outcome,
        note=args.note,
    )
    return {"event": event.citation, "type": event.type, "skill": args.skill}
