"""Context cues on LangGraph surfaces: the middleware's ``cues`` option (its checkout and its tools' default), the
memory tools' ``cues`` argument, and structured errors for a bad cue, in a real ``create_agent`` graph."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage

from tests.langgraph.test_memory_tools import body, call
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyMemoryMiddleware, checkout_node
from zaxy_agents.langgraph.scripted import ScriptedChatModel

SESSION = "langgraph.t1"
OURS, THEIRS = "to deploy run make release", "to deploy run make ship now"


def _remember(fabric: MemoryFabric) -> None:
    fabric.append(SESSION, "note.recorded", {"text": OURS, "cues": {"workspace": "zaxy", "tool": "make"}})
    fabric.append(SESSION, "note.recorded", {"text": THEIRS, "cues": {"workspace": "other"}})


def _ours_first(text: str) -> bool:
    assert OURS in text and THEIRS in text
    return text.index(OURS) < text.index(THEIRS)


def _system_prompt(fabric: MemoryFabric, **options) -> str:
    llm = ScriptedChatModel(policy=lambda messages: AIMessage("ok"))
    middleware = ZaxyMemoryMiddleware(fabric, tools=False, capture=False, feedback=False, **options)
    graph = create_agent(llm, [], middleware=[middleware])
    graph.invoke({"messages": [HumanMessage("how do I deploy?")]}, {"configurable": {"thread_id": "t1"}})
    return llm.calls[-1][0].text


def test_middleware_cues_reorder_the_checkout(fabric: MemoryFabric) -> None:
    _remember(fabric)
    assert _ours_first(_system_prompt(fabric))
    assert not _ours_first(_system_prompt(fabric, cues={"repo": "other"}))  # the default profile blends cues
    assert not _ours_first(_system_prompt(fabric, retrieval_profile="full", cues={"repo": "other"}))
    assert _ours_first(_system_prompt(fabric, cues={"workspace": "zaxy"}))
    # plain is pre-2.2 ranking: cues change nothing
    assert _ours_first(_system_prompt(fabric, retrieval_profile="plain", cues={"repo": "other"}))


def test_tool_cues_argument_and_the_middlewares_default(fabric: MemoryFabric) -> None:
    _remember(fabric)
    query = {"query": "how do I deploy", "retrieval_profile": "full"}
    plain = body(call(fabric, "memory_query", query, {"thread_id": "t1"}))
    assert plain["hits"][0]["text"].endswith(OURS)
    asked = body(call(fabric, "memory_query", {**query, "cues": {"repo": "other"}}, {"thread_id": "t1"}))
    assert asked["hits"][0]["text"].endswith(THEIRS)
    default = body(call(fabric, "memory_query", query, {"thread_id": "t1"}, cues={"workspace": "other"}))
    assert default["hits"][0]["text"].endswith(THEIRS)
    overridden = call(
        fabric, "memory_query", {**query, "cues": {"repo": "zaxy"}}, {"thread_id": "t1"}, cues={"repo": "other"}
    )
    assert body(overridden)["hits"][0]["text"].endswith(OURS)
    checkout = call(fabric, "memory_checkout", {**query, "cues": {"repo": "other"}}, {"thread_id": "t1"})
    assert not _ours_first(str(checkout.content))
    refused = call(fabric, "memory_checkout", {**query, "cues": {"colour": "red"}}, {"thread_id": "t1"})
    error = body(refused)["error"]
    assert (error["code"], error["field"]) == ("invalid_request", "cues.colour")


@pytest.mark.parametrize(
    ("cues", "field"),
    [
        ({"colour": "red"}, "cues.colour"),
        ({"tool": 7}, "cues.tool"),
        ({"repo": "a", "workspace": "b"}, "cues.workspace"),
    ],
)
def test_a_bad_cue_fails_when_the_graph_is_built(fabric: MemoryFabric, cues: dict, field: str) -> None:
    for build in (lambda: ZaxyMemoryMiddleware(fabric, cues=cues), lambda: checkout_node(fabric, cues=cues)):
        with pytest.raises(InvalidRequestError) as raised:
            build()
        assert raised.value.field == field
