"""The front door: memory_checkout (core), context_assemble (core) and memory_bootstrap (full)."""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar

from pydantic import Field

from zaxy_agents.checkout.replay import MAX_RECENT_EVENTS
from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import MAX_SCOPE, SessionName, ToolArgs, optional
from zaxy_agents.mcp.tools.meta import Cues
from zaxy_agents.tool_arguments import PurposeArgument, RetrievalProfileArgument, as_of_field, purpose_value

SCOPE_HELP = (
    "Other sessions to recall from as well (your own is always included). Default: this workspace's other "
    "clients' sessions when the server recalls them together; [] for your session only."
)


class CheckoutArgs(ToolArgs):
    ARGUMENT_ALIASES: ClassVar[dict[str, str]] = {"k": "limit"}

    query: str = Field(
        default="",
        max_length=4000,
        description="The question or task you are about to work on. Empty: just current state and stable memory.",
    )
    ref: optional(
        str, "Check memory out as of a memory ref (refs/tags/v1) or a seq of the session.", max_length=128
    ) = None
    replay_from_seq: optional(int, "Also show the session's events from this seq on (the replay lane).", ge=1) = None
    limit: int = Field(default=8, ge=1, le=50, description="How many evidence items to retrieve.")
    max_recent_events: optional(
        int, "Also show this many of the session's latest events (the replay lane).", ge=0, le=MAX_RECENT_EVENTS
    ) = None
    max_tokens: int = Field(default=2000, ge=64, le=200_000, description="Token budget of the packet's prompt.")
    purpose: PurposeArgument = None
    scope: optional(list[SessionName], SCOPE_HELP, max_length=MAX_SCOPE) = None
    as_of: as_of_field("Check memory out") = None
    retrieval_profile: RetrievalProfileArgument = None
    cues: optional(Cues, "Your context (mission, workspace, tool, phase): memories recorded in it rank higher.") = None


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
    description="""memory_checkout is the front door to memory: call it before answering or starting work (the
    other tools are plumbing or power use). Returns a budgeted, cited packet: current facts (superseded ones
    excluded), evidence for your question, the session's working set (open tasks, decisions, blockers),
    answerability (answer_from_memory | refresh_recommended | ask_user) with the next step, and a ready-to-use
    prompt. Cite the eventloom:// citations you rely on.""",
)
def memory_checkout(call: ToolCall[CheckoutArgs]) -> dict[str, Any]:
    args = call.args
    packet = call.fabric.checkout(
        args.query,
        session=call.session,
        scope=call.caller.allow_scope(args.scope),
        max_tokens=args.max_tokens,
        purpose=purpose_value(args.purpose),
        ref=args.ref,
        as_of=args.as_of,
        k=args.limit,
        replay_from_seq=args.replay_from_seq,
        max_recent_events=args.max_recent_events,
        retrieval_profile=args.retrieval_profile,
        cues=args.cues.model_dump(exclude_none=True) if args.cues is not None else None,
    )
    call.fabric.mark_checkout(call.session, packet.retention.projected_through.get(call.session, 0))
    return _packet(packet)


def _packet(packet: Any) -> dict[str, Any]:
    """The packet as JSON; ``quality.required_action`` stays present (null) as in the seed's contract."""
    result = packet.model_dump(mode="json", exclude_none=True)
    result["quality"].setdefault("required_action", None)
    return result


Question = Annotated[str, Field(min_length=1, max_length=4000)]


class AssembleArgs(ToolArgs):
    ARGUMENT_ALIASES: ClassVar[dict[str, str]] = {"queries": "query", "k": "limit"}

    query: Question | Annotated[list[Question], Field(min_length=1, max_length=8)] = Field(
        description="The question the next step needs answered (or a list of up to 8, assembled in one block)."
    )
    replay_from_seq: optional(int, "Replay the session's events from this seq on.", ge=1) = None
    limit: int = Field(default=8, ge=1, le=50, description="Evidence items to retrieve per question.")
    max_recent_events: int = Field(
        default=5, ge=0, le=MAX_RECENT_EVENTS, description="How many of the session's latest events to replay."
    )
    max_tokens: int = Field(default=4000, ge=200, le=200_000, description="Token budget shared by all questions.")
    purpose: PurposeArgument = None
    scope: optional(list[SessionName], SCOPE_HELP, max_length=MAX_SCOPE) = None
    retrieval_profile: RetrievalProfileArgument = None


@tool(
    "context_assemble",
    profile="core",
    order=40,
    read_only=True,
    summarize=lambda r: f"items={len(r.get('items', []))} tokens={r.get('budget', {}).get('budget_used')}",
    render=lambda r: r.get("prompt", ""),
    description="""A prompt-ready bundle for the next model call, built on memory_checkout (the front door): the
    active working set, then each question's budgeted, cited evidence (graph, verbatim and the session's latest
    events), citations de-duplicated, with each item's lane, answerability per question and the budget used.""",
)
def context_assemble(call: ToolCall[AssembleArgs]) -> dict[str, Any]:
    args = call.args
    return call.fabric.context_assemble(
        args.query if isinstance(args.query, str) else list(args.query),
        session=call.session,
        scope=call.caller.allow_scope(args.scope),
        max_tokens=args.max_tokens,
        purpose=purpose_value(args.purpose),
        limit=args.limit,
        replay_from_seq=args.replay_from_seq,
        max_recent_events=args.max_recent_events,
        retrieval_profile=args.retrieval_profile,
    )


class BootstrapArgs(ToolArgs):
    current_task: optional(str, "What you are about to work on (shapes the recommended checkout).", max_length=4000) = (
        None
    )
    scope: optional(list[SessionName], SCOPE_HELP, max_length=MAX_SCOPE) = None
    max_tokens: int = Field(default=2000, ge=64, le=200_000, description="Token budget of the packet's prompt.")
    purpose: PurposeArgument = None


def _render_bootstrap(result: dict[str, Any]) -> str:
    """The packet, then the handoff a model acts on: the next call, capture health, how to trust memory."""
    call = result.get("recommended_checkout", {})
    capture = result.get("capture_status", {})
    lines = [_render(result), "", f"[zaxy] next: {call.get('tool')}({json.dumps(call.get('arguments', {}))})"]
    lines.append(f"[zaxy] capture {capture.get('status')}")
    lines += [f"[zaxy] capture issue: {issue['problem']}; fix: {issue['fix']}" for issue in capture.get("issues", [])]
    lines += [f"[zaxy] trust: {text}" for text in result.get("trust_policy", {}).values()]
    return "\n".join(lines)


@tool(
    "memory_bootstrap",
    profile="full",
    order=110,
    read_only=True,
    summarize=_summary,
    render=_render_bootstrap,
    description="""The session-start handoff: the capability manifest (tools, refresh policy, capture health),
    the recommended first checkout call, capture status and the trust policy, plus a question-free packet of
    stable decisions, facts and the working state, budgeted and cited. Use at session start or after a
    compaction, then follow recommended_checkout (memory_checkout, the front door).""",
)
def memory_bootstrap(call: ToolCall[BootstrapArgs]) -> dict[str, Any]:
    from zaxy_agents.mcp.awareness import TRUST_POLICY
    from zaxy_agents.mcp.tools.meta import capabilities_manifest

    args = call.args
    packet = call.fabric.bootstrap(
        call.session,
        scope=call.caller.allow_scope(args.scope),
        max_tokens=args.max_tokens,
        purpose=purpose_value(args.purpose),
    )
    call.fabric.mark_checkout(call.session, packet.retention.projected_through.get(call.session, 0))
    manifest = capabilities_manifest(call, args.current_task)
    return {
        **_packet(packet),
        "manifest": manifest,
        "recommended_checkout": manifest["recommended_next_call"],
        "capture_status": manifest["capture"],
        "trust_policy": dict(TRUST_POLICY),
    }
