"""Keeping memory honest: memory_feedback and memory_invalidate (core)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, Literal

from pydantic import Field

from zaxy_agents.errors import ZaxyError
from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import ToolArgs, optional
from zaxy_agents.tool_arguments import PurposeArgument, purpose_value

Feedback = Literal["used", "helpful", "confirmed", "irrelevant", "wrong", "outdated"]
ENTITY_HELP = "Entity name exactly as a checkout returned it (current facts only)."
# The fabric names its Python parameters in errors; this tool's arguments are the seed's names.
FIELD_NAMES = {"entity": "entity_name", "signal": "feedback", "note": "reason"}


@contextmanager
def seed_field_names() -> Iterator[None]:
    try:
        yield
    except ZaxyError as exc:
        exc.field = FIELD_NAMES.get(exc.field or "", exc.field)
        raise


class FeedbackArgs(ToolArgs):
    ARGUMENT_ALIASES: ClassVar[dict[str, str]] = {"entity": "entity_name", "signal": "feedback", "note": "reason"}

    entity_name: str = Field(min_length=1, max_length=200, description=ENTITY_HELP)
    entity_type: str = Field(default="fact", min_length=1, max_length=64, description="Its entity_type.")
    feedback: Feedback = Field(
        description="used, helpful, confirmed reinforce it; irrelevant, wrong, outdated are recorded for audit only."
    )
    actor: str = Field(default="agent", min_length=1, max_length=256, description="Who is giving the feedback.")
    citation: optional(str, "The eventloom:// citation you relied on.", max_length=300) = None
    reason: optional(str, "Why.", max_length=2000) = None
    importance: optional(float, "How important the memory was for this, 0..1.", ge=0.0, le=1.0) = None
    query: optional(str, "The question or task it was used for.", max_length=4000) = None
    source: optional(str, "Where you got it (e.g. memory_checkout, the graph or verbatim lane).", max_length=200) = None
    score: optional(float, "Its retrieval score, if you have it.", ge=-1e9, le=1e9) = None
    purpose: PurposeArgument = None
    outcome: optional(str, "What it led to (e.g. the handoff it supported).", max_length=500) = None
    weight: float = Field(default=1.0, gt=0.0, le=10.0, description="Strength of the signal.")


@tool(
    "memory_feedback",
    profile="core",
    order=50,
    summarize=lambda r: f"feedback={r.get('feedback')}",
    description="""After using what memory_checkout (the front door) returned, tell memory how a cited fact worked
    out: positive feedback (used, helpful, confirmed) makes it more salient in later checkouts; negative
    (irrelevant, wrong, outdated) is recorded for audit. To retract a fact that is no longer true, use
    memory_invalidate.""",
)
def memory_feedback(call: ToolCall[FeedbackArgs]) -> dict[str, Any]:
    args = call.args
    details = {
        name: getattr(args, name)
        for name in ("importance", "query", "source", "score", "outcome")
        if getattr(args, name) is not None
    }
    if args.purpose is not None:
        details["purpose"] = purpose_value(args.purpose)
    with seed_field_names():
        event = call.fabric.feedback(
            call.session,
            args.entity_name,
            args.entity_type,
            args.feedback,
            weight=args.weight,
            citation=args.citation,
            note=args.reason,
            actor=args.actor,
            **details,
        )
    return {
        "event": event.citation,
        "type": event.type,
        "feedback": args.feedback,
        "entity_name": args.entity_name,
        "entity_type": args.entity_type,
    }


class InvalidateArgs(ToolArgs):
    ARGUMENT_ALIASES: ClassVar[dict[str, str]] = {"entity": "entity_name"}

    entity_name: str = Field(min_length=1, max_length=200, description=ENTITY_HELP)
    entity_type: str = Field(default="fact", min_length=1, max_length=64, description="Its entity_type.")
    invalid_at: optional(
        str, "When it stopped being true (ISO-8601; default now; not before it became valid).", max_length=40
    ) = None
    reason: optional(str, "Why it is no longer true.", min_length=1, max_length=2000) = None


@tool(
    "memory_invalidate",
    profile="core",
    order=60,
    admin=True,
    summarize=lambda r: f"invalidated {r.get('entity_type')}",
    description="""Retract a fact that is no longer true: closes the validity window of its current version at
    invalid_at (history is kept and stays citable; memory_checkout, the front door, stops showing it). Over HTTP
    this needs the admin token.""",
)
def memory_invalidate(call: ToolCall[InvalidateArgs]) -> dict[str, Any]:
    args = call.args
    with seed_field_names():
        event = call.fabric.invalidate(
            call.session, args.entity_name, args.entity_type, reason=args.reason, invalid_at=args.invalid_at
        )
    return {
        "event": event.citation,
        "entity_name": args.entity_name,
        "entity_type": args.entity_type,
        "invalid_at": event.payload.get("invalid_at", event.timestamp),
    }
