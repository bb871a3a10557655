"""The memory tools: typed BaseTools, scoped by the run's config (never by the model), structured errors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel, Field

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import memory_tools
from zaxy_agents.langgraph.scripted import ScriptedChatModel
from zaxy_agents.langgraph.tools import ToolContext, ZaxyTool


def call(fabric: MemoryFabric, name: str, args: dict[str, Any], configurable: dict[str, Any], **options) -> ToolMessage:
    """Run one tool call the way an agent does: through LangGraph's ToolNode in a graph."""
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(memory_tools(fabric, **options)))
    builder.add_edge(START, "tools")
    request = AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])
    result = builder.compile().invoke({"messages": [request]}, {"configurable": configurable})
    [_, message] = result["messages"]
    return message


def body(message: ToolMessage) -> dict[str, Any]:
    return json.loads(str(message.content))


def test_tools_are_typed_base_tools_without_a_session_argument(fabric: MemoryFabric) -> None:
    tools = memory_tools(fabric)
    assert [t.name for t in tools[:5]] == [
        "memory_checkout",
        "memory_append",
        "memory_query",
        "memory_feedback",
        "memory_invalidate",
    ]
    for tool in tools:
        assert isinstance(tool, BaseTool) and tool.description
        schema = tool.tool_call_schema.model_json_schema()
        assert not {"session", "session_id", "config", "scope"} & set(schema["properties"])
    append = next(t for t in tools if t.name == "memory_append").tool_call_schema.model_json_schema()
    assert set(append["required"]) == {"type", "payload"} and append["properties"]["payload"]["type"] == "object"


def test_append_query_feedback_invalidate_round_trip_in_the_threads_session(fabric: MemoryFabric) -> None:
    thread = {"thread_id": "t-42"}
    appended = call(
        fabric,
        "memory_append",
        {"type": "fact.asserted", "payload": {"fact": "staging runs on db-stg-2", "key": "staging db"}},
        thread,
    )
    assert appended.status == "success" and appended.artifact["lc_source"] == "zaxy_memory"
    citation = body(appended)["citation"]
    assert citation.startswith("eventloom://langgraph.t-42/events/1#")

    hits = body(call(fabric, "memory_query", {"query": "which db does staging run on"}, thread))["hits"]
    assert hits[0]["citation"] == citation and hits[0]["status"] == "current"

    packet = call(fabric, "memory_checkout", {"query": "which db does staging use?", "max_tokens": 300}, thread)
    assert packet.content.startswith("# Memory Checkout") and citation in packet.content

    feedback = call(
        fabric,
        "memory_feedback",
        {"entity": "staging db", "entity_type": "fact", "signal": "helpful", "citation": citation},
        thread,
    )
    assert body(feedback)["recorded"] == "memory.reinforced"

    gone = call(
        fabric,
        "memory_invalidate",
        {"entity": "staging db", "entity_type": "fact", "reason": "moved to db-stg-3"},
        thread,
    )
    assert body(gone)["recorded"] == "memory.invalidated"
    after = body(call(fabric, "memory_query", {"query": "which db does staging run on"}, thread))["hits"]
    assert citation not in [hit["citation"] for hit in after]
    history = call(
        fabric, "memory_query", {"query": "which db does staging run on", "include_superseded": True}, thread
    )
    assert [hit["status"] for hit in body(history)["hits"] if hit["citation"] == citation] == ["invalidated"]


def test_scoping_comes_from_config_and_a_model_supplied_session_is_ignored(fabric: MemoryFabric) -> None:
    fabric.append("secret-team", "fact.asserted", {"fact": "the vault unseal key is split five ways"})
    spoof = {"type": "note.recorded", "payload": {"text": "hi"}, "session": "secret-team"}
    written = body(call(fabric, "memory_append", spoof, {"thread_id": "mallory"}))
    assert written["citation"].startswith("eventloom://langgraph.mallory/")

    query = {"query": "vault unseal key"}
    assert body(call(fabric, "memory_query", query, {"thread_id": "mallory"}))["hits"] == []
    allowed = body(call(fabric, "memory_query", query, {"thread_id": "mallory", "zaxy_scope": ["secret-*"]}))
    assert allowed["hits"][0]["citation"].startswith("eventloom://secret-team/")
    explicit = body(call(fabric, "memory_append", spoof, {"zaxy_session": "desk-1"}))
    assert explicit["citation"].startswith("eventloom://desk-1/")
    fixed = body(call(fabric, "memory_append", spoof, {}, session="app-memory"))
    assert fixed["citation"].startswith("eventloom://app-memory/")


@pytest.mark.parametrize(
    ("name", "args", "configurable", "code", "field"),
    [
        ("memory_append", {"type": "checkpoint.saved", "payload": {}}, {"thread_id": "e"}, "invalid_request", "type"),
        ("memory_append", {"type": "Not A Type", "payload": {}}, {"thread_id": "e"}, "invalid_request", "type"),
        ("memory_query", {"query": "x", "k": 500}, {"thread_id": "e"}, "invalid_request", "k"),
        ("memory_query", {"query": "x"}, {}, "invalid_request", "configurable.thread_id"),
        (
            "memory_feedback",
            {"entity": "nope", "entity_type": "fact", "signal": "used"},
            {"thread_id": "e"},
            "not_found",
            "entity",
        ),
        (
            "memory_invalidate",
            {
                "entity": "x",
                "entity_type": "fact",
                "reason": "r",
                "citation": "eventloom://other/events/1#0123456789ab",
            },
            {"thread_id": "e"},
            "unauthorized",
            "citation",
        ),
    ],
)
def test_errors_come_back_as_structured_model_readable_messages(
    fabric: MemoryFabric, name: str, args: dict, configurable: dict, code: str, field: str
) -> None:
    message = call(fabric, name, args, configurable)
    assert message.status == "error"
    error = body(message)["error"]
    assert error["code"] == code and error["field"] == field and error["remediation"]
    assert "Traceback" not in str(message.content)


def test_unexpected_failures_do_not_leak_tracebacks(fabric: MemoryFabric, monkeypatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(MemoryFabric, "query", broken)
    message = call(fabric, "memory_query", {"query": "anything"}, {"thread_id": "boom"})
    assert message.status == "error"
    assert body(message)["error"]["code"] == "internal_error" and "disk on fire" in body(message)["error"]["message"]


def test_a_new_tool_is_one_self_contained_class(fabric: MemoryFabric) -> None:
    class EchoArgs(BaseModel):
        text: str = Field(description="What to echo.")

    class EchoTool(ZaxyTool):
        name: str = "memory_echo_test"
        description: str = "Echo text with the session it would be stored in."
        args_schema: type[BaseModel] = EchoArgs

        def execute(self, context: ToolContext, args: EchoArgs) -> dict[str, Any]:
            return {"text": args.text, "session": context.session}

    try:
        [echo] = memory_tools(fabric, include=["memory_echo_test"])
        assert isinstance(echo, EchoTool)
        assert body(call(fabric, "memory_echo_test", {"text": "hi"}, {"thread_id": "x"})) == {
            "text": "hi",
            "session": "langgraph.x",
        }
    finally:
        ZaxyTool.registry.pop("memory_echo_test", None)


def test_tools_work_with_bind_tools_style_agents(fabric: MemoryFabric) -> None:
    """A hand-written ReAct loop: model -> ToolNode -> model, as with ``model.bind_tools(tools)``."""

    def policy(messages: Sequence[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], HumanMessage):
            args = {"type": "decision.recorded", "payload": {"decision": "Ship on Fridays", "topic": "release"}}
            return AIMessage("", tool_calls=[{"name": "memory_append", "args": args, "id": "c1"}])
        return AIMessage("Recorded " + body(messages[-1])["citation"])

    tools = memory_tools(fabric)
    llm = ScriptedChatModel(policy=policy).bind_tools(tools)
    builder = StateGraph(MessagesState)
    builder.add_node("model", lambda state: {"messages": [llm.invoke(state["messages"])]})
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    builder.add_edge("model", END)
    result = builder.compile().invoke(
        {"messages": [HumanMessage("we ship on fridays")]}, {"configurable": {"thread_id": "rel"}}
    )
    assert result["messages"][-1].text.startswith("Recorded eventloom://langgraph.rel/events/1#")
