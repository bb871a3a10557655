"""memory_erase (admin): real forgetting -- an event's content leaves the log and every derived file."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import ToolArgs, optional


class EraseArgs(ToolArgs):
    citation: optional(str, "Erase the event this eventloom:// citation names.", max_length=300) = None
    from_seq: optional(int, "First event of the session to erase.", ge=1) = None
    to_seq: optional(int, "Last event to erase (default: from_seq).", ge=1) = None
    all_events: bool = Field(default=False, description="Erase every event of the session.")
    reason: optional(str, "Why (recorded; never repeat the erased content).", max_length=500) = None


@tool(
    "memory_erase",
    profile="full",
    order=270,
    admin=True,
    summarize=lambda r: f"erased={r.get('erased')}",
    description="""Erase memory for real (privacy requests, secrets pasted by mistake): the events' content is
    removed from the log and from every derived index, graph and cache; the hash chain still verifies and the
    erasure itself is recorded (which events, when, by whom; never the content). Give exactly one of citation,
    from_seq (with to_seq) or all_events. Irreversible. Over HTTP this needs the admin token.""",
)
def memory_erase(call: ToolCall[EraseArgs]) -> dict[str, Any]:
    args = call.args
    if sum([args.citation is not None, args.from_seq is not None, args.all_events]) != 1:
        raise InvalidRequestError(
            "give exactly one of citation, from_seq or all_events",
            field="citation",
            remediation='For example {"from_seq": 4, "to_seq": 6, "reason": "user request"}.',
        )
    actor = f"mcp:{call.caller.transport}"
    if args.citation is not None:
        call.caller.allow_session(parse_citation(args.citation, field="citation").session, field="citation")
        return call.fabric.erase_citation(args.citation, actor=actor, reason=args.reason)
    if args.all_events:
        return call.fabric.erase_session(call.session, actor=actor, reason=args.reason)
    to_seq = args.to_seq if args.to_seq is not None else args.from_seq
    return call.fabric.erase_range(call.session, args.from_seq, to_seq, actor=actor, reason=args.reason)
