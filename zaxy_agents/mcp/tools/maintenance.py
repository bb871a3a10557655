"""Keeping memory honest: memory_feedback and memory_invalidate (core)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import ToolArgs, optional

Signal = Literal["used", "helpful", "confirmed", "irrelevant", "wrong", "outdated"]
ENTITY_HELP = "Entity name exactly as a checkout returned it (current facts only)."


class FeedbackArgs(ToolArgs):
    entity: str = Field(min_length=1, max_length=200, description=ENTITY_HELP)
    entity_type: str = Field(default="fact", min_length=1, max_length=64, description="Its entity_type.")
    signal: Signal = Field(description="used, helpful, confirmed reinforce it; irrelevant, wrong, outdated do not.")
    weight: float = Field(default=1.0, gt=0.0, le=10.0, description="Strength of the signal.")
    citation: optional(str, "The eventloom:// citation you relied on.", max_length=300) = None
    note: optional(str, "Why.", max_length=2000) = None


@tool(
    "memory_feedback",
    profile="core",
    order=50,
    summarize=lambda r: f"signal={r.get('signal')}",
    description="""Tell memory how a cited fact worked out: positive signals (used, helpful, confirmed) make it
    more salient in later checkouts; negative ones (irrelevant, wrong, outdated) are recorded for audit. To retract
    a fact that is no longer true, use memory_invalidate.""",
)
def memory_feedback(call: ToolCall[FeedbackArgs]) -> dict[str, Any]:
    args = call.args
    event = call.fabric.feedback(
        call.session,
        args.entity,
        args.entity_type,
        args.signal,
        weight=args.weight,
        citation=args.citation,
        note=args.note,
    )
    return {"event": event.citation, "type": event.type, "signal": args.signal, "entity": args.entity}


class InvalidateArgs(ToolArgs):
    entity: str = Field(min_length=1, max_length=200, description=ENTITY_HELP)
    entity_type: str = Field(default="fact", min_length=1, max_length=64, description="Its entity_type.")
    reason: str = Field(min_length=1, max_length=2000, description="Why it is no longer true.")


@tool(
    "memory_invalidate",
    profile="core",
    order=60,
    admin=True,
    summarize=lambda r: f"invalidated {r.get('entity_type')}",
    description="""Retract a fact that is no longer true: closes the validity window of its current version
    (history is kept and stays citable; checkouts stop showing it). Over HTTP this needs the admin token.""",
)
def memory_invalidate(call: ToolCall[InvalidateArgs]) -> dict[str, Any]:
    args = call.args
    event = call.fabric.invalidate(call.session, args.entity, args.entity_type, reason=args.reason)
    return {"event": event.citation, "entity": args.entity, "entity_type": args.entity_type}
