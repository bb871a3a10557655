"""The agent lifecycle: context_after_turn, subagent_cleanup and memory_skill (full profile)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import SessionName, ToolArgs, optional


class ToolUse(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(min_length=1, max_length=128, description="Tool name (Bash, Edit, a MCP tool...).")
    status: Literal["ok", "error"] = Field(default="ok", description="How the call ended.")
    summary: optional(str, "One line about what it did or returned.", max_length=500) = None


class AfterTurnArgs(ToolArgs):
    role: optional(Literal["user", "assistant", "system", "tool"], "Who spoke (with content).") = None
    content: optional(str, "What was said this turn.", max_length=20_000) = None
    user_text: optional(str, "What the user said this turn.", max_length=20_000) = None
    assistant_text: optional(str, "What you answered (final text, not tool output).", max_length=20_000) = None
    tools_used: list[ToolUse] = Field(default_factory=list, max_length=32, description="Tools you called.")
    turn_id: optional(str, "Your id for the turn (groups its events).", max_length=128) = None
    since_seq: optional(int, "Report changes after this seq (default: your last checkout).", ge=0) = None
    assemble: bool = Field(default=True, description="Also assemble the context for your next model call.")
    max_tokens: int = Field(default=1200, ge=200, le=200_000, description="Token budget of that context.")


@tool(
    "context_after_turn",
    profile="full",
    order=140,
    summarize=lambda r: f"recorded={len(r.get('recorded', []))} changes={r.get('counts')}",
    description="""Call when a turn is finished: records the turn (role and content, or user and assistant text)
    and the tools used as events, returns what changed in memory since your last memory_checkout (new or updated
    facts, decisions and tasks, superseded and invalidated ones, each cited) and assembles the context for your
    next model call.""",
)
def context_after_turn(call: ToolCall[AfterTurnArgs]) -> dict[str, Any]:
    args = call.args
    return call.fabric.after_turn(
        call.session,
        role=args.role,
        content=args.content,
        assemble_tokens=args.max_tokens if args.assemble else None,
        user_text=args.user_text,
        assistant_text=args.assistant_text,
        tools_used=[tool.model_dump(exclude_none=True) for tool in args.tools_used],
        turn_id=args.turn_id,
        since_seq=args.since_seq,
    )


class SubagentArgs(ToolArgs):
    ARGUMENT_ALIASES: ClassVar[dict[str, str]] = {"subagent_session": "subagent_session_id"}

    parent_session_id: optional(
        SessionName, "The session that started the subagent (default: the server's session; same as session_id)."
    ) = None
    subagent_session_id: optional(
        SessionName, "The subagent's own session, if it had one (its open tasks are settled, its chain verified)."
    ) = None
    summary: str = Field(min_length=1, max_length=8000, description="What it did and found.")
    subagent_id: optional(str, "The subagent's id or name (default: its session).", min_length=1, max_length=128) = None
    status: Literal["completed", "failed", "cancelled"] = Field(
        default="completed", description="How the subagent ended."
    )
    task_ids: optional(
        list[Annotated[str, Field(min_length=1, max_length=200)]],
        "The subagent's open tasks (when it shared your session).",
        max_length=100,
    ) = None
    open_items: Literal["handover", "close"] = Field(
        default="handover", description="handover: re-open its tasks in your session; close: close them."
    )

    @model_validator(mode="after")
    def _parent_is_the_session(self) -> SubagentArgs:
        if self.parent_session_id is not None:
            if self.session_id is not None and self.session_id != self.parent_session_id:
                raise ValueError("parent_session_id and session_id name different sessions; pass one of them")
            self.session_id = self.parent_session_id
        return self


@tool(
    "subagent_cleanup",
    profile="full",
    order=150,
    summarize=lambda r: f"closed={len(r.get('closed', []))} handed_over={len(r.get('handed_over', []))}",
    description="""Call when a subagent finishes: verifies its session's hash chain, records subagent.cleaned there
    and subagent.completed in your session, closes or hands over the tasks it left open, and returns the handoff
    (summary and integrity status) so nothing it started is silently dropped.""",
)
def subagent_cleanup(call: ToolCall[SubagentArgs]) -> dict[str, Any]:
    args = call.args
    subagent_session = call.caller.allow_session(args.subagent_session_id, field="subagent_session_id")
    return call.fabric.subagent_cleanup(
        call.session,
        subagent_id=args.subagent_id or args.subagent_session_id or "subagent",
        status=args.status,
        summary=args.summary,
        subagent_session=subagent_session if args.subagent_session_id is not None else None,
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
