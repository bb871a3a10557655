"""Progressive disclosure (full profile): memory_search -> memory_timeline -> memory_get.

Search returns a cheap index (ids, titles, the token cost of opening each), the timeline shows what happened
around a hit, and get opens only the events chosen: an agent spends tokens on what it reads.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import MAX_SCOPE, SessionName, ToolArgs, optional

EventId = Annotated[str, Field(min_length=20, max_length=300, description="An id (citation) from search/timeline.")]


class SearchArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=4000, description="What to look for.")
    scope: optional(list[SessionName], "Other sessions to search as well.", max_length=MAX_SCOPE) = None
    k: int = Field(default=10, ge=1, le=50, description="How many index rows to return.")
    as_of: optional(str, "Search memory as it was at an ISO-8601 instant.", max_length=40) = None


@tool(
    "memory_search",
    profile="full",
    order=170,
    read_only=True,
    summarize=lambda r: f"hits={len(r.get('hits', []))} tokens_to_open_all={r.get('tokens_to_open_all')}",
    description="""Step 1 of 3 (cheap): search memory and get an index of hits, each with its id (citation),
    type, a one-line title, score and `tokens`, the cost of opening it. Then memory_timeline(id) for context around
    a hit and memory_get(ids) for the full events you actually need.""",
)
def memory_search(call: ToolCall[SearchArgs]) -> dict[str, Any]:
    args = call.args
    sessions = sorted({call.session, *(call.caller.allow_scope(args.scope) or [])})
    return call.fabric.search_index(args.query, sessions=sessions, k=args.k, as_of=args.as_of)


class TimelineArgs(ToolArgs):
    id: EventId
    before: int = Field(default=5, ge=0, le=25, description="Events to show before it.")
    after: int = Field(default=5, ge=0, le=25, description="Events to show after it.")


@tool(
    "memory_timeline",
    profile="full",
    order=171,
    read_only=True,
    summarize=lambda r: f"events={len(r.get('events', []))}",
    description="""Step 2 of 3: the events just before and after one id (from memory_search) in its session, as
    index rows with titles and token costs. Open the ones you need with memory_get.""",
)
def memory_timeline(call: ToolCall[TimelineArgs]) -> dict[str, Any]:
    args = call.args
    call.caller.allow_session(_session_of(args.id), field="id")
    return call.fabric.timeline(args.id, before=args.before, after=args.after)


class GetArgs(ToolArgs):
    ids: list[EventId] = Field(min_length=1, max_length=20, description="Ids (citations) to open.")
    max_tokens: optional(int, "Stop before the events returned would exceed this many tokens.", ge=1) = None


@tool(
    "memory_get",
    profile="full",
    order=172,
    read_only=True,
    summarize=lambda r: f"events={len(r.get('events', []))} tokens={r.get('tokens')}",
    description="""Step 3 of 3: the full events for ids from memory_search or memory_timeline (payload, actor,
    time), each verified against its hash first; an event that does not match its citation is reported, never
    returned. max_tokens caps what is returned.""",
)
def memory_get(call: ToolCall[GetArgs]) -> dict[str, Any]:
    args = call.args
    for index, event_id in enumerate(args.ids):
        call.caller.allow_session(_session_of(event_id), field=f"ids[{index}]")
    return call.fabric.get_events(list(args.ids), max_tokens=args.max_tokens)


def _session_of(event_id: str) -> str | None:
    """The session an id names (authorization over HTTP); a malformed id is reported by the fabric."""
    from zaxy_agents.eventloom.citations import parse_citation

    try:
        return parse_citation(event_id, field="id").session
    except Exception:
        return None
