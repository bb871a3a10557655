"""Synthesis tools through a real LangGraph graph (ToolNode): memory_checkout shows the answer candidates with
their ids as text, memory_synthesis_artifact / _evidence record them by the checkout's query in the run's
session; opt-in; the model cannot append memory.synthesis.* events directly."""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import memory_tools, synthesis_tools
from zaxy_agents.langgraph.synthesis import SYNTHESIS_TOOLS

THREAD = {"thread_id": "synthesis"}
SESSION = "langgraph.synthesis"
QUESTION = "How many hours did I practise piano this week?"


def call(fabric: MemoryFabric, name: str, args: dict[str, Any]) -> ToolMessage:
    builder = StateGraph(MessagesState)
    tools = memory_tools(fabric, include=["memory_append", "memory_checkout", *SYNTHESIS_TOOLS])
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "tools")
    request = AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])
    [_, message] = builder.compile().invoke({"messages": [request]}, {"configurable": THREAD})["messages"]
    return message


def body(message: ToolMessage) -> dict[str, Any]:
    return json.loads(str(message.content))


def test_record_by_query_through_a_graph(fabric: MemoryFabric) -> None:
    assert not set(SYNTHESIS_TOOLS) & {tool.name for tool in memory_tools(fabric)}
    assert [tool.name for tool in synthesis_tools(fabric)] == list(SYNTHESIS_TOOLS)
    for text in ("Monday: practised piano for 2 hours.", "Thursday: piano practice, 3 hours."):
        call(fabric, "memory_append", {"type": "note.recorded", "payload": {"text": text}})
    shown = str(call(fabric, "memory_checkout", {"query": QUESTION}).content)
    assert "synthesis candidates:" in shown and "sum = 5 hour" in shown
    candidate = re.search(r"(ans_[0-9a-f]{16}) rank 1", shown).group(1)
    row = re.search(r"(row_[0-9a-f]{16}) 3 hours", shown).group(1)
    recorded = body(
        call(fabric, "memory_synthesis_artifact", {"query": QUESTION, "candidate": candidate, "outcome": "used"})
    )
    assert recorded["session"] == SESSION and recorded["outcome"]["candidate"]["answer_value"] == 5
    used = body(call(fabric, "memory_synthesis_evidence", {"query": QUESTION, "row": row, "outcome": "helpful"}))
    assert used["event_type"] == "memory.evidence.reinforced" and used["artifact_id"] == recorded["artifact_id"]
    gone = call(
        fabric, "memory_synthesis_artifact", {"query": QUESTION, "candidate": "ans_" + "0" * 16, "outcome": "used"}
    )
    assert gone.status == "error" and body(gone)["error"]["field"] == "candidate"
    forged = call(fabric, "memory_append", {"type": "memory.synthesis.used", "payload": {"outcome": "used"}})
    assert forged.status == "error"
    # the synthesis tools are reasoning primitives (execution phase): each call was observed in the run's session
    observed = [event.payload for event in fabric.replay(SESSION) if event.type == "reasoning.primitive.called"]
    assert [(o["primitive"], o["phase"], o["status"]) for o in observed] == [
        ("record_synthesis", "execution", "ok"),
        ("record_synthesis_evidence", "execution", "ok"),
    ]  # the refused call is not observed
