"""Real LangGraph graphs compiled with ZaxyCheckpointer and ZaxyStore: the drop-in promise, end to end."""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Sequence
from typing import Annotated, Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore


def chat_graph(checkpointer: Any, store: Any = None) -> Any:
    def chat(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        question = state["messages"][-1].content
        remembered = store.get(("facts",), "last") if store else None
        if store is not None:
            store.put(("facts",), "last", {"text": question})
        seen = remembered.value["text"] if remembered else "nothing"
        return {"messages": [AIMessage(f"you said {question!r}; before that {seen!r}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=checkpointer, store=store)


def ask(graph: Any, thread: str, text: str) -> list[str]:
    result = graph.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}})
    return [m.content for m in result["messages"]]


def test_conversation_survives_restart_with_store_and_transcripts(eventloom) -> None:
    with ZaxyCheckpointer.from_path(eventloom) as saver, ZaxyStore.from_path(eventloom) as store:
        graph = chat_graph(saver, store)
        ask(graph, "t1", "hello")
        assert ask(graph, "t1", "again")[-1] == "you said 'again'; before that 'hello'"
    with ZaxyCheckpointer.from_path(eventloom) as saver, ZaxyStore.from_path(eventloom) as store:
        graph = chat_graph(saver, store)
        history = ask(graph, "t1", "third")
        assert history == [
            "hello",
            "you said 'hello'; before that 'nothing'",
            "again",
            "you said 'again'; before that 'hello'",
            "third",
            "you said 'third'; before that 'again'",
        ]
        turns = [e.payload for e in saver.fabric.replay(saver.session_of("t1")) if e.type == "transcript.turn"]
        assert [(t["role"], t["text"]) for t in turns] == [
            ("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(history)
        ]
        assert all(t["thread_id"] == "t1" and t["message_id"] for t in turns)
        assert len({t["message_id"] for t in turns}) == 6  # one event per message, never repeated
        assert saver.fabric.verify(saver.session_of("t1")).ok


def test_interrupt_and_resume_across_a_restart(eventloom) -> None:
    class State(TypedDict):
        request: str
        decision: str

    def ask_human(state: State) -> dict[str, Any]:
        return {"decision": interrupt({"question": f"approve {state['request']}?"})}

    def build(saver: ZaxyCheckpointer) -> Any:
        builder = StateGraph(State)
        builder.add_node("ask_human", ask_human)
        builder.add_edge(START, "ask_human")
        builder.add_edge("ask_human", END)
        return builder.compile(checkpointer=saver)

    config = {"configurable": {"thread_id": "approval"}}
    with ZaxyCheckpointer.from_path(eventloom) as saver:
        result = build(saver).invoke({"request": "refund #42"}, config)
        assert result["__interrupt__"][0].value == {"question": "approve refund #42?"}
    with ZaxyCheckpointer.from_path(eventloom) as saver:
        graph = build(saver)
        assert graph.get_state(config).tasks[0].interrupts[0].value == {"question": "approve refund #42?"}
        assert graph.invoke(Command(resume="yes"), config) == {"request": "refund #42", "decision": "yes"}
        assert graph.get_state(config).next == ()


def time_travel_scenario(saver: Any) -> list[list[list[str]]]:
    graph = chat_graph(saver)
    for text in ("one", "two", "three"):
        ask(graph, "tt", text)
    config = {"configurable": {"thread_id": "tt"}}
    snapshots = [list(graph.get_state_history(config))]
    after_one = next(s for s in snapshots[0] if len(s.values.get("messages", [])) == 2)
    graph.invoke({"messages": [HumanMessage("changed my mind")]}, after_one.config)
    updated = graph.update_state(after_one.config, {"messages": [AIMessage("an edited reply")]})
    snapshots.append([graph.get_state(updated)])
    snapshots.append(list(graph.get_state_history(config)))
    return [[[m.content for m in s.values.get("messages", [])] for s in group] for group in snapshots]


def test_time_travel_and_forks_match_in_memory_saver(saver: ZaxyCheckpointer) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    ours = time_travel_scenario(saver)
    assert ours == time_travel_scenario(InMemorySaver())
    assert ours[1][0][-1] == "an edited reply"
    assert len(ours[2]) > len(ours[0])  # the forks added checkpoints to the thread's history


def test_many_threads_stay_isolated(saver: ZaxyCheckpointer) -> None:
    graph = chat_graph(saver)
    for thread in range(25):
        for turn in range(2):
            ask(graph, f"user-{thread}", f"t{thread}-m{turn}")
    for thread in (0, 13, 24):
        state = graph.get_state({"configurable": {"thread_id": f"user-{thread}"}})
        assert [m.content for m in state.values["messages"]][::2] == [f"t{thread}-m0", f"t{thread}-m1"]
    assert len({t.config["configurable"]["thread_id"] for t in saver.list(None)}) == 25


def test_async_graph(eventloom) -> None:
    async def chat(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        await store.aput(("seen",), state["messages"][-1].id, {"text": state["messages"][-1].content})
        return {"messages": [AIMessage(f"async echo {state['messages'][-1].content}")]}

    async def scenario() -> None:
        async with ZaxyCheckpointer.from_path(eventloom) as saver, ZaxyStore.from_path(eventloom) as store:
            builder = StateGraph(MessagesState)
            builder.add_node("chat", chat)
            builder.add_edge(START, "chat")
            builder.add_edge("chat", END)
            graph = builder.compile(checkpointer=saver, store=store)
            config = {"configurable": {"thread_id": "async"}}
            for text in ("a", "b"):
                await graph.ainvoke({"messages": [HumanMessage(text)]}, config)
            chunks = [chunk async for chunk in graph.astream({"messages": [HumanMessage("c")]}, config)]
            assert chunks[-1]["chat"]["messages"][-1].content == "async echo c"
            states = [s async for s in graph.aget_state_history(config)]
            assert len(states[0].values["messages"]) == 6
            assert sorted(i.value["text"] for i in await store.asearch(("seen",))) == ["a", "b", "c"]

    asyncio.run(scenario())


def test_subgraph_checkpoints_live_in_their_namespace(saver: ZaxyCheckpointer) -> None:
    class Inner(TypedDict):
        items: Annotated[list[str], operator.add]

    def inner_step(state: Inner) -> dict[str, Any]:
        return {"items": ["inner"]}

    inner_builder = StateGraph(Inner)
    inner_builder.add_node("inner_step", inner_step)
    inner_builder.add_edge(START, "inner_step")
    inner_builder.add_edge("inner_step", END)
    inner = inner_builder.compile(checkpointer=True)

    outer_builder = StateGraph(Inner)
    outer_builder.add_node("sub", inner)
    outer_builder.add_edge(START, "sub")
    outer_builder.add_edge("sub", END)
    graph = outer_builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "nested"}}
    assert graph.invoke({"items": ["start"]}, config)["items"] == ["start", "start", "inner"]
    namespaces = {
        t.config["configurable"]["checkpoint_ns"] for t in saver.list({"configurable": {"thread_id": "nested"}})
    }
    assert "" in namespaces and any(ns.startswith("sub") for ns in namespaces)
    assert graph.invoke({"items": ["again"]}, config)["items"][-1] == "inner"


def concat(state: list[str], writes: Sequence[list[str]]) -> list[str]:
    return state + [item for write in writes for item in write]


def test_prune_keeps_delta_channel_history_reconstructible(saver: ZaxyCheckpointer) -> None:
    class State(TypedDict):
        log: Annotated[list[str], DeltaChannel(concat, snapshot_frequency=4)]

    def step(state: State) -> dict[str, Any]:
        return {"log": [f"entry {len(state['log'])}"]}

    builder = StateGraph(State)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "delta"}}
    for i in range(7):
        graph.invoke({"log": [f"input {i}"]}, config)
    before = graph.get_state(config).values["log"]
    assert len(before) == 14
    saver.prune(["delta"], strategy="keep_latest")
    kept = list(saver.list(config))
    assert 1 < len(kept) < 15  # the latest plus the ancestors back to the last snapshot, not the whole history
    assert graph.get_state(config).values["log"] == before
    graph.invoke({"log": ["after prune"]}, config)
    assert graph.get_state(config).values["log"][:14] == before


def test_plain_graph_prunes_to_one_checkpoint(saver: ZaxyCheckpointer) -> None:
    graph = chat_graph(saver)
    for text in ("a", "b", "c"):
        ask(graph, "p", text)
    saver.prune(["p"])
    assert len(list(saver.list({"configurable": {"thread_id": "p"}}))) == 1
    assert ask(graph, "p", "d")[-2:] == ["d", "you said 'd'; before that 'nothing'"]
    assert len(ask(graph, "p", "e")) == 10


def test_parallel_branches_write_concurrently(eventloom) -> None:
    class State(TypedDict):
        results: Annotated[list[str], operator.add]

    def fan_out(state: State) -> dict[str, Any]:
        return {"results": ["start"]}

    def branch(name: str) -> Any:
        def run(state: State, *, store: BaseStore) -> dict[str, Any]:
            for i in range(5):
                store.put(("branches", name), f"k{i}", {"i": i})
            return {"results": [name]}

        return run

    builder = StateGraph(State)
    builder.add_node("fan_out", fan_out)
    for name in ("b1", "b2", "b3", "b4"):
        builder.add_node(name, branch(name))
        builder.add_edge("fan_out", name)
        builder.add_edge(name, END)
    builder.add_edge(START, "fan_out")
    with ZaxyCheckpointer.from_path(eventloom) as saver, ZaxyStore.from_path(eventloom) as store:
        graph = builder.compile(checkpointer=saver, store=store)
        config = {"configurable": {"thread_id": "fan"}}
        for _ in range(3):
            result = graph.invoke({"results": []}, config)
        assert sorted(result["results"][-5:]) == ["b1", "b2", "b3", "b4", "start"]
        assert store.list_namespaces(prefix=("branches",)) == [("branches", f"b{i}") for i in range(1, 5)]
        assert len(store.search(("branches",), limit=100)) == 20
        assert saver.fabric.verify(saver.session_of("fan")).ok and saver.fabric.verify(store.session).ok
