"""The retrieval profile on LangGraph surfaces: the middleware's checkout option and the memory tools' argument."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage

from tests.langgraph.test_memory_tools import body, call
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyMemoryMiddleware
from zaxy_agents.langgraph.scripted import ScriptedChatModel

SESSION = "langgraph.t1"
LEGACY = "legacy gateway port is 7001"


def _remember(fabric: MemoryFabric) -> None:
    fabric.append(SESSION, "fact.asserted", {"key": "gateway port", "fact": "gateway port is 8080"})
    fabric.append(SESSION, "fact.asserted", {"key": "legacy port", "fact": LEGACY, "valid_from": "2024-01-15"})


def _system_prompt(fabric: MemoryFabric, **options) -> str:
    llm = ScriptedChatModel(policy=lambda messages: AIMessage("ok"))
    middleware = ZaxyMemoryMiddleware(fabric, tools=False, capture=False, feedback=False, **options)
    graph = create_agent(llm, [], middleware=[middleware])
    graph.invoke({"messages": [HumanMessage("legacy gateway port?")]}, {"configurable": {"thread_id": "t1"}})
    return llm.calls[-1][0].text


def test_middleware_option_and_tool_argument(fabric: MemoryFabric) -> None:
    _remember(fabric)
    assert LEGACY in _system_prompt(fabric)  # balanced: no attenuation floor
    assert LEGACY not in _system_prompt(fabric, retrieval_profile="full")  # below the floor: out of checkout
    found = body(
        call(fabric, "memory_query", {"query": "legacy gateway port", "retrieval_profile": "full"}, {"thread_id": "t1"})
    )
    assert [hit.get("attenuated", False) for hit in found["hits"] if hit["text"] == LEGACY] == [True]
    refused = call(fabric, "memory_query", {"query": "x", "retrieval_profile": "fancy"}, {"thread_id": "t1"})
    assert "retrieval_profile" in str(refused.content)
