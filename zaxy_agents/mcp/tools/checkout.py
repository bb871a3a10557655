"""The front door: memory_checkout (core), context_assemble (core) and memory_bootstrap (full)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import MAX_SCOPE, SessionName, ToolArgs, optional
from zaxy_agents.tool_arguments import as_of_field

Purpose = Literal["general", "coding", "review", "release", "security", "research", "coordinate"]
SCOPE_HELP = (
    "Other sessions to recall from as well (your own is always included). Default: this workspace's other "
    "clients' sessions when the server recalls them together; [] for your session only."
)


class CheckoutArgs(ToolArgs):
    query: str = Field(
        default="",
        max_length=4000,
        description="The question or task you are about to work on. Empty: just current state and stable memory.",
    )
    scope: optional(list[SessionName], SCOPE_HELP, max_length=MAX_SCOPE) = None
    max_tokens: int = Field(default=2000, ge=64, le=200_000, description="Token budget of the packet's prompt.")
    purpose: optional(Purpose, "What the memory is for; tunes retrieval and what is suppressed.") = None
    ref: optional(
        str, "Check memory out as of a memory ref (refs/tags/v1) or a seq of the session.", max_length=128
    ) = None
    as_of: as_of_field("Check memory out") = None
    k: int = Field(default=8, ge=1, le=50, description="How many evidence items to retrieve.")


def _summary(result: dict[str, Any]) -> str:
    quality = result.get("quality", {})
    return (
        f"answerability={quality.get('answerability')} facts={len(result.get('current_facts', []))} "
        f"evidence={len(result.get('evidence', []))} tokens={result.get('diagnostics', {}).get('budget_used')}"
    )


def _render(result: dict[str, Any]) -> str:
    quality = result.get("quality", {})
    diagnostics = result.get("diagnostics", {})
    footer = (
        f"[zaxy] answerability {quality.get('answerability')} (confidence {quality.get('confidence')}); "
        f"{diagnostics.get('citation_count', 0)} citations; "
        f"{diagnostics.get('budget_used')} of {diagnostics.get('budget_requested')} tokens"
    )
    if diagnostics.get("degraded"):
        footer += f"; degraded: {diagnostics['degraded']}"
    return f"{result.get('prompt', '')}\n\n{footer}"


@tool(
    "memory_checkout",
    profile="core",
    order=10,
    read_only=True,
    summarize=_summary,
    render=_render,
    description="""The front door to memory: call this before answering or starting work. Returns a budgeted, cited
    packet: current facts (superseded ones excluded), evidence for your question, the session's working set (open
    tasks, decisions, blockers), answerability (answer_from_memory | refresh_recommended | ask_user) with the next
    step, and a ready-to-use prompt. Cite the eventloom:// citations you rely on.""",
)
def memory_checkout(call: ToolCall[CheckoutArgs]) -> dict[str, Any]:
    args = call.args
    packet = call.fabric.checkout(
        args.query,
        session=call.session,
        scope=call.caller.allow_scope(args.scope),
        max_tokens=args.max_tokens,
        purpose=args.purpose,
        ref=args.ref,
        as_of=args.as_of,
        k=args.k,
    )
    call.fabric.mark_checkout(call.session, packet.retention.projected_through.get(call.session, 0))
    return packet.model_dump(mode="json", exclude_none=True)


class AssembleArgs(ToolArgs):
    queries: list[Annotated[str, Field(min_length=1, max_length=4000)]] = Field(
        min_length=1, max_length=8, description="The questions the next step needs answered (1-8)."
    )
    scope: optional(list[SessionName], SCOPE_HELP, max_length=MAX_SCOPE) = None
    max_tokens: int = Field(default=4000, ge=200, le=200_000, description="Token budget shared by all questions.")
    purpose: optional(Purpose, "What the memory is for.") = None


@tool(
    "context_assemble",
    profile="core",
    order=40,
    read_only=True,
    summarize=lambda r: f"citations={len(r.get('citations', []))} tokens={r.get('budget_used')}",
    render=lambda r: r.get("context", ""),
    description="""One budgeted context block for several questions at once (each checked out, citations
    de-duplicated), with answerability per question. Use it to prepare a multi-part task.""",
)
def context_assemble(call: ToolCall[AssembleArgs]) -> dict[str, Any]:
    args = call.args
    return call.fabric.context_assemble(
        list(args.queries),
        session=call.session,
        scope=call.caller.allow_scope(args.scope),
        max_tokens=args.max_tokens,
        purpose=args.purpose,
    )


class BootstrapArgs(ToolArgs):
    scope: optional(list[SessionName], SCOPE_HELP, max_length=MAX_SCOPE) = None
    max_tokens: int = Field(default=2000, ge=64, le=200_000, description="Token budget of the packet's prompt.")
    purpose: optional(Purpose, "What the memory is for.") = None


@tool(
    "memory_bootstrap",
    profile="full",
    order=110,
    read_only=True,
    summarize=_summary,
    render=_render,
    description="""A question-free packet for the start of a session or after context compaction: stable
    decisions and facts plus the session's working state, budgeted and cited.""",
)
def memory_bootstrap(call: ToolCall[BootstrapArgs]) -> dict[str, Any]:
    args = call.args
    packet = call.fabric.bootstrap(
        call.session, scope=call.caller.allow_scope(args.scope), max_tokens=args.max_tokens, purpose=args.purpose
    )
    call.fabric.mark_checkout(call.session, packet.retention.projected_through.get(call.session, 0))
    return packet.model_dump(mode="json", exclude_none=True)
