"""``langchain.agents.create_agent`` with langmem's memory tools, on ZaxyStore and ZaxyCheckpointer, unchanged."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langmem import create_manage_memory_tool, create_search_memory_tool

from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore
from zaxy_agents.langgraph.scripted import ScriptedChatModel

INDEX = {"dims": 128, "embed": "hashing:128", "fields": ["content"]}


def policy(messages: Sequence[BaseMessage]) -> AIMessage:
    """Remember on request, recall by searching, then answer from the tool result."""
    last = messages[-1]
    if isinstance(last, HumanMessage):
        text = str(last.content)
        if text.startswith("Remember"):
            fact = text.removeprefix("Remember that ").rstrip(".")
            call = {
                "name": "manage_memory",
                "args": {"content": fact, "action": "create"},
                "id": f"call-{len(messages)}",
            }
            return AIMessage("", tool_calls=[call])
        call = {"name": "search_memory", "args": {"query": text}, "id": f"call-{len(messages)}"}
        return AIMessage("", tool_calls=[call])
    assert isinstance(last, ToolMessage)
    if last.name == "manage_memory":
        return AIMessage("Saved it.")
    found = json.loads(str(last.content))
    return AIMessage("You told me: " + "; ".join(m["value"]["content"] for m in found[:1]) if found else "No idea.")


def agent(saver: ZaxyCheckpointer, store: ZaxyStore):
    tools = [
        create_manage_memory_tool(namespace=("memories", "{langgraph_user_id}")),
        create_search_memory_tool(namespace=("memories", "{langgraph_user_id}")),
    ]
    return create_agent(ScriptedChatModel(policy=policy), tools, checkpointer=saver, store=store)


def say(graph, thread: str, text: str, user: str = "ana") -> str:
    config = {"configurable": {"thread_id": thread, "langgraph_user_id": user}}
    return graph.invoke({"messages": [HumanMessage(text)]}, config)["messages"][-1].content


def test_agent_remembers_across_threads_and_restarts(eventloom) -> None:
    with ZaxyCheckpointer.from_path(eventloom) as saver, ZaxyStore.from_path(eventloom, index=INDEX) as store:
        graph = agent(saver, store)
        assert say(graph, "monday", "Remember that my favourite colour is teal.") == "Saved it."
        assert say(graph, "monday", "Remember that I live in Porto.") == "Saved it."
        [item] = [i for i in store.search(("memories", "ana"), query="colour", limit=1)]
        assert item.value == {"content": "my favourite colour is teal"}
        put = next(e for e in store.fabric.replay(store.session) if e.type == "store.item.put")
        assert put.payload["namespace"] == ["memories", "ana"]
        assert put.payload["texts"] == [{"path": "content", "text": "my favourite colour is teal"}]

    with ZaxyCheckpointer.from_path(eventloom) as saver, ZaxyStore.from_path(eventloom, index=INDEX) as store:
        graph = agent(saver, store)
        assert say(graph, "tuesday", "what is my favourite colour") == "You told me: my favourite colour is teal"
        assert say(graph, "tuesday", "where do I live") == "You told me: I live in Porto"
        assert say(graph, "other", "where do I live", user="bob") == "No idea."  # namespaces per user
        turns = [e.payload for e in saver.fabric.replay(saver.session_of("tuesday")) if e.type == "transcript.turn"]
        assert [t["role"] for t in turns] == ["user", "assistant", "tool", "assistant"] * 2
        assert turns[1]["tool_calls"] == [
            {"name": "search_memory", "args": {"query": "what is my favourite colour"}, "id": "call-1"}
        ]
        assert turns[2]["tool_call_id"] == "call-1" and turns[2]["name"] == "search_memory"
        monday = saver.get_tuple({"configurable": {"thread_id": "monday"}})
        assert len(monday.checkpoint["channel_values"]["messages"]) == 8


def test_agent_async_with_langmem_tools(eventloom) -> None:
    async def scenario() -> None:
        async with (
            ZaxyCheckpointer.from_path(eventloom) as saver,
            ZaxyStore.from_path(eventloom, index=INDEX) as store,
        ):
            graph = agent(saver, store)
            config = {"configurable": {"thread_id": "a1", "langgraph_user_id": "cy"}}
            await graph.ainvoke({"messages": [HumanMessage("Remember that tea beats coffee.")]}, config)
            result = await graph.ainvoke({"messages": [HumanMessage("tea or coffee")]}, config)
            assert result["messages"][-1].content == "You told me: tea beats coffee"
            assert [i.value for i in await store.asearch(("memories", "cy"))] == [{"content": "tea beats coffee"}]

    asyncio.run(scenario())
