"""Belief-update proposal tools through a real LangGraph graph (ToolNode): opt-in, the run's session, review as
a disposition, the model cannot append belief.update.* events directly."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import belief_tools, memory_tools
from zaxy_agents.langgraph.beliefs import BELIEF_TOOLS

THREAD = {"thread_id": "beliefs"}
SESSION = "langgraph.beliefs"


def call(fabric: MemoryFabric, name: str, args: dict[str, Any]) -> ToolMessage:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(memory_tools(fabric, include=["memory_append", *BELIEF_TOOLS])))
    builder.add_edge(START, "tools")
    request = AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])
    [_, message] = builder.compile().invoke({"messages": [request]}, {"configurable": THREAD})["messages"]
    return message


def body(message: ToolMessage) -> dict[str, Any]:
    return json.loads(str(message.content))


def test_propose_review_list_through_a_graph(fabric: MemoryFabric) -> None:
    assert not set(BELIEF_TOOLS) & {tool.name for tool in memory_tools(fabric)}
    assert [tool.name for tool in belief_tools(fabric)] == list(BELIEF_TOOLS)
    note = body(call(fabric, "memory_append", {"type": "note.recorded", "payload": {"text": "db moved to pg"}}))
    proposed = body(
        call(
            fabric,
            "memory_propose_belief_update",
            {"claim": "db is Postgres", "rationale": "ops note", "confidence": 0.8, "citations": [note["citation"]]},
        )
    )
    assert proposed["proposal"]["session"] == SESSION and proposed["review_status"] == "pending"
    reviewed = body(
        call(
            fabric,
            "memory_review_belief_update",
            {"proposal_id": proposed["proposal_id"], "status": "rejected", "rationale": "not confirmed"},
        )
    )
    assert reviewed["status"] == "rejected" and reviewed["promoted"] is False
    listed = body(call(fabric, "memory_belief_update_proposals", {}))
    assert (listed["proposal_count"], listed["rejected_count"]) == (1, 1)
    bad = call(fabric, "memory_review_belief_update", {"proposal_id": "bel_x", "status": "accepted", "rationale": "r"})
    assert bad.status == "error" and body(bad)["error"]["field"] == "proposal_id"
    forged = call(fabric, "memory_append", {"type": "belief.update.reviewed", "payload": {"status": "accepted"}})
    assert forged.status == "error"
