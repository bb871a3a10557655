"""The metacognition tools through a real LangGraph graph (ToolNode): opt-in, no session argument, the run's
recall scope, the known-unknown guardrail seen by memory_checkout, structured errors."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import memory_tools, metacognition_tools
from zaxy_agents.langgraph.metacognition import METACOGNITION_TOOLS

THREAD = {"thread_id": "research"}
SESSION = "langgraph.research"


def call(fabric: MemoryFabric, name: str, args: dict[str, Any], configurable: dict[str, Any] = THREAD) -> ToolMessage:
    builder = StateGraph(MessagesState)
    tools = memory_tools(fabric, include=["memory_append", "memory_checkout", *METACOGNITION_TOOLS])
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "tools")
    request = AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])
    [_, message] = builder.compile().invoke({"messages": [request]}, {"configurable": configurable})["messages"]
    return message


def body(message: ToolMessage) -> dict[str, Any]:
    return json.loads(str(message.content))


def test_the_tools_are_opt_in_and_take_no_session(fabric: MemoryFabric) -> None:
    assert not set(METACOGNITION_TOOLS) & {tool.name for tool in memory_tools(fabric)}
    tools = metacognition_tools(fabric)
    assert [tool.name for tool in tools] == list(METACOGNITION_TOOLS)
    for tool in tools:
        properties = tool.tool_call_schema.model_json_schema()["properties"]
        assert not {"session", "session_id", "scope"} & set(properties), tool.name


def test_record_read_and_the_checkout_guardrail(fabric: MemoryFabric) -> None:
    fact = body(call(fabric, "memory_append", {"type": "fact.asserted", "payload": {"key": "launch", "fact": "May"}}))
    fabric.append("langgraph.source-b", "fact.asserted", {"key": "launch", "fact": "June"})
    note = body(call(fabric, "memory_append", {"type": "note.recorded", "payload": {"text": "no owner named"}}))
    recorded = call(
        fabric,
        "memory_record_known_unknown",
        {"question": "Who signs off the launch budget?", "reason": "unnamed", "source_events": [note["citation"]]},
    )
    assert recorded.status == "success" and body(recorded)["known_unknown"]["session"] == SESSION
    packet = str(call(fabric, "memory_checkout", {"query": "Who signs off the launch budget?"}).content)
    assert "answerability: refresh_recommended" in packet and "open known unknown" in packet
    listed = body(call(fabric, "memory_confidence", {"operation": "known_unknowns"}))
    assert listed["open_count"] == 1 and listed["items"][0]["question"] == "Who signs off the launch budget?"

    # the recall scope (configurable zaxy_scope) is where contradicting claims are found
    scoped = {**THREAD, "zaxy_scope": ["langgraph.source-b"]}
    claim = body(call(fabric, "memory_claim_confidence", {"claim_key": "fact:launch"}, scoped))
    assert claim["conflict_cluster"]["status"] == "unresolved" and not claim["supported"]
    alone = body(call(fabric, "memory_claim_confidence", {"claim_key": "fact:launch"}))
    assert alone["conflict_cluster"] is None and alone["supported"]
    assessed = call(
        fabric,
        "memory_claim_confidence",
        {
            "claim_key": "fact:launch",
            "confidence": 0.35,
            "rationale": "sources differ",
            "source_events": [fact["citation"]],
        },
    )
    assert body(assessed)["recorded"].startswith(f"eventloom://{SESSION}/")
    trajectory = body(call(fabric, "memory_confidence_trajectory", {"claim_key": "fact:launch"}))
    assert trajectory["point_count"] == 1 and trajectory["current_confidence"] == 0.35
    needs = body(call(fabric, "memory_reverification_needs", {}, scoped))
    assert {tuple(sorted(n["reasons"])) for n in needs["derived"]} == {("contradicted", "weak")}

    uncited = call(fabric, "memory_record_known_unknown", {"question": "q?", "reason": "r", "source_events": []})
    assert uncited.status == "error" and body(uncited)["error"]["field"] == "source_events"
    forged = call(
        fabric,
        "memory_append",
        {"type": "metacognition.known_unknown.resolved", "payload": {"unknown_id": "unk_" + "0" * 24}},
    )
    assert forged.status == "error"  # the model may not write metacognition.* events directly
