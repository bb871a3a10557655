"""The agent lifecycle: context_after_turn, subagent_cleanup and memory_skill (full profile)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import SessionName, ToolArgs, optional, session_field


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

    _parent = session_field("parent_session_id")


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


Text = Annotated[str, Field(min_length=1, max_length=2000)]


class SkillArgs(ToolArgs):
    ARGUMENT_ALIASES: ClassVar[dict[str, str]] = {"skill": "skill_id", "description": "summary", "note": "reason"}

    action: Literal["proposed", "validated", "revised", "deprecated", "contradicted", "applied", "outcome_recorded"] = (
        Field(description="The lifecycle step.")
    )
    skill_id: str = Field(min_length=1, max_length=200, description="The skill's id.")
    version: optional(str, "Its version (proposed: default 1; revised: the new one).", max_length=64) = None
    name: optional(str, "A display name.", max_length=200) = None
    summary: optional(str, "What it does and when to use it.", max_length=4000) = None
    procedure: optional(list[Text], "The steps, in order.", max_length=50) = None
    applicability: optional(str, "When it applies (and when not).", max_length=4000) = None
    citations: optional(list[Text], "eventloom:// citations of the evidence behind it.", max_length=50) = None
    task: optional(str, "The task it was applied to (applied, outcome_recorded).", max_length=500) = None
    success_score: optional(float, "outcome_recorded: how well it worked, 0..1.", ge=0.0, le=1.0) = None
    feedback: optional(str, "outcome_recorded: what happened.", max_length=4000) = None
    evidence: optional(str, "outcome_recorded: what shows it (text; cite events in citations).", max_length=4000) = None
    reason: optional(str, "Why (deprecated needs one).", max_length=4000) = None
    failure_modes: optional(list[Text], "How it fails.", max_length=50) = None
    rollback: optional(str, "How to undo it.", max_length=4000) = None
    contradiction_reason: optional(str, "contradicted: what contradicts it.", max_length=4000) = None
    supersedes_version: optional(str, "revised: the version it replaces (default: the current one).", max_length=64) = (
        None
    )
    actor: str = Field(default="agent", min_length=1, max_length=256, description="Who records it.")


@tool(
    "memory_skill",
    profile="full",
    order=160,
    summarize=lambda r: f"{r.get('type')} v{r.get('version')}",
    description="""Record a reusable procedure's lifecycle: proposed (summary or steps), validated, revised (a new
    version superseding the old), deprecated (with a reason), contradicted (with a contradiction_reason), applied,
    outcome_recorded (success_score or feedback; a good outcome reinforces it). Versions keep steps,
    applicability, citations, failure modes and rollback. memory_checkout (the front door) reads skills;
    nothing changes a skill but this tool.""",
)
def memory_skill(call: ToolCall[SkillArgs]) -> dict[str, Any]:
    args = call.args
    fields = args.model_dump(exclude={"action", "skill_id", "actor", "session_id"}, exclude_none=True)
    event = call.fabric.record_skill(call.session, args.action, args.skill_id, actor=args.actor, **fields)
    return {
        "event": event.citation,
        "type": event.type,
        "skill_id": event.payload["skill_id"],
        "version": event.payload.get("version"),
        "status": args.action,
    }
