"""Procedural-memory tools through a real LangGraph graph (ToolNode): opt-in, the run's session; a plan from an
accepted procedure, then its skill proposal."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import memory_tools, procedure_tools
from zaxy_agents.langgraph.procedures import PROCEDURE_TOOLS

THREAD = {"thread_id": "procedures"}
SESSION = "langgraph.procedures"


def call(fabric: MemoryFabric, name: str, args: dict[str, Any]) -> ToolMessage:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(memory_tools(fabric, include=list(PROCEDURE_TOOLS))))
    builder.add_edge(START, "tools")
    request = AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])
    [_, message] = builder.compile().invoke({"messages": [request]}, {"configurable": THREAD})["messages"]
    return message


def test_plan_and_propose_through_a_graph(fabric: MemoryFabric) -> None:
    assert not set(PROCEDURE_TOOLS) & {tool.name for tool in memory_tools(fabric)}
    assert [tool.name for tool in procedure_tools(fabric)] == list(PROCEDURE_TOOLS)
    run = fabric.append(SESSION, "command.completed", {"command": "make release", "exit_code": 0})
    candidate = fabric.consolidation_candidate(
        SESSION,
        candidate_type="procedure",
        title="Cut a release: tag, build, publish",
        summary="tag, build, publish",
        source_events=[run.citation],
        confidence=0.7,
    )
    fabric.consolidation_review(SESSION, candidate["candidate_id"], decision="accepted", rationale="routine")
    plan = json.loads(str(call(fabric, "memory_plan_from_procedures", {"goal": "cut a release"}).content))
    assert plan["session"] == SESSION and plan["plan"]["id"] == candidate["candidate_id"]
    skill = json.loads(
        str(call(fabric, "memory_skill_from_procedure", {"candidate_id": candidate["candidate_id"]}).content)
    )
    assert skill["status"] == "proposed"
    again = call(fabric, "memory_skill_from_procedure", {"candidate_id": candidate["candidate_id"]})
    assert again.status == "error" and json.loads(str(again.content))["error"]["code"] == "conflict"
