"""The checkpointer's drop-in details: LangGraph's construction idioms, thread_id="", closed savers, and two
writers forking one thread."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from zaxy_agents.errors import ClosedError, ConflictError, InvalidRequestError
from zaxy_agents.langgraph import ZaxyCheckpointer
from zaxy_agents.langgraph.checkpointer import AsyncZaxyCheckpointer
from zaxy_agents.storage.conformance.harness import postgres_schema


def echo_graph(saver: Any, gate: tuple[threading.Event, threading.Event] | None = None) -> Any:
    def chat(state: MessagesState) -> dict[str, Any]:
        if gate is not None:
            started, release = gate
            started.set()
            assert release.wait(10)
        return {"messages": [AIMessage(f"echo {state['messages'][-1].content}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=saver)


def say(graph: Any, thread: str, text: str, **kwargs: Any) -> list[str]:
    result = graph.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}}, **kwargs)
    return [m.content for m in result["messages"]]


@pytest.fixture(params=["folder", "postgresql"])
def conn_string(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """What a user passes to ``from_conn_string``: a folder, or a PostgreSQL DSN (fresh schema)."""
    if request.param == "folder":
        yield str(tmp_path / "eventloom")
        return
    monkeypatch.chdir(tmp_path)  # derived state of the DSN form goes to ./.eventloom
    with postgres_schema(monkeypatch) as dsn:
        yield dsn


def test_from_conn_string_and_setup_as_sqlite_and_postgres_savers(conn_string: str) -> None:
    with ZaxyCheckpointer.from_conn_string(conn_string) as saver:
        saver.setup()
        saver.setup()  # idempotent, like PostgresSaver.setup()
        assert say(echo_graph(saver), "t1", "hi") == ["hi", "echo hi"]
    with ZaxyCheckpointer.from_conn_string(conn_string) as saver:
        assert say(echo_graph(saver), "t1", "again")[-2:] == ["again", "echo again"]
        assert len(echo_graph(saver).get_state({"configurable": {"thread_id": "t1"}}).values["messages"]) == 4


async def test_async_saver_from_conn_string(conn_string: str) -> None:
    async with AsyncZaxyCheckpointer.from_conn_string(conn_string) as saver:
        await saver.setup()
        graph = echo_graph(saver)
        result = await graph.ainvoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "a"}})
        assert [m.content for m in result["messages"]] == ["hi", "echo hi"]
        assert (await saver.aget_tuple({"configurable": {"thread_id": "a"}})) is not None


def test_memory_conn_string_leaves_nothing_behind() -> None:
    with ZaxyCheckpointer.from_conn_string(":memory:") as saver:
        folder = saver.fabric.settings.eventloom_dir
        assert say(echo_graph(saver), "t", "hi") == ["hi", "echo hi"]
        assert os.path.isdir(folder)
    assert not os.path.exists(folder)


def test_conn_string_mistakes_are_named(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        ZaxyCheckpointer.from_conn_string(str(tmp_path), backend="jsonl")
    assert caught.value.field == "backend"
    with pytest.raises(InvalidRequestError) as caught:
        ZaxyCheckpointer.from_conn_string("")
    assert caught.value.field == "conn_string"


def test_empty_thread_id_is_a_thread_like_any_other(eventloom: Path) -> None:
    with ZaxyCheckpointer.from_path(eventloom) as saver:
        assert say(echo_graph(saver), "", "hi") == ["hi", "echo hi"]
    with ZaxyCheckpointer.from_path(eventloom) as saver:
        assert say(echo_graph(saver), "", "again") == ["hi", "echo hi", "again", "echo again"]
        assert [t.config["configurable"]["thread_id"] for t in saver.list(None)] == [""] * 6
        turns = [e for e in saver.fabric.replay(saver.session_of("")) if e.type == "transcript.turn"]
        assert [t.payload["text"] for t in turns] == ["hi", "echo hi", "again", "echo again"]


def test_a_closed_saver_refuses_every_call(eventloom: Path) -> None:
    saver = ZaxyCheckpointer.from_path(eventloom)
    graph = echo_graph(saver)
    say(graph, "t", "hi")
    config = {"configurable": {"thread_id": "t"}}
    latest = saver.get_tuple(config)
    assert latest is not None
    saver.close()
    saver.close()  # twice is fine
    for call in (
        lambda: saver.get_tuple(config),
        lambda: list(saver.list(None)),
        lambda: saver.put(latest.config, latest.checkpoint, latest.metadata, {}),
        lambda: saver.put_writes(latest.config, [("messages", [])], "task"),
        lambda: saver.delete_thread("t"),
        lambda: say(graph, "t", "after close"),
    ):
        with pytest.raises(ClosedError):
            call()


def test_a_saver_closed_on_a_shared_fabric_leaves_the_fabric_open(fabric: Any) -> None:
    with ZaxyCheckpointer(fabric) as saver:
        say(echo_graph(saver), "t", "hi")
    with pytest.raises(ClosedError):
        saver.get_tuple({"configurable": {"thread_id": "t"}})
    with ZaxyCheckpointer(fabric) as again:
        assert again.get_tuple({"configurable": {"thread_id": "t"}}) is not None


def _fork(eventloom: Path, mode: str) -> tuple[ZaxyCheckpointer, BaseException | None]:
    """Writer B starts a turn on thread t, writer A completes one meanwhile, then B saves: B forks A's turn."""
    first = ZaxyCheckpointer.from_path(eventloom)
    second = ZaxyCheckpointer.from_path(eventloom, concurrent_writes=mode)
    say(echo_graph(first), "t", "one", durability="sync")
    gate = (threading.Event(), threading.Event())
    failure: list[BaseException] = []

    def run_second() -> None:
        try:
            say(echo_graph(second, gate), "t", "from B", durability="sync")
        except BaseException as exc:  # handed to the test
            failure.append(exc)

    worker = threading.Thread(target=run_second)
    worker.start()
    try:
        assert gate[0].wait(10)  # B has read the thread and is inside its step
        say(echo_graph(first), "t", "from A", durability="sync")
    finally:
        gate[1].set()
        worker.join(20)
    second.close()
    return first, failure[0] if failure else None


def test_two_writers_on_one_thread_are_reported(eventloom: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="zaxy_agents.checkpoints.writes"):
        first, failure = _fork(eventloom, "warn")
    assert failure is None
    with first:
        events = [e for e in first.fabric.replay(first.session_of("t")) if e.type == "checkpoint.concurrent_write"]
        assert len(events) == 1
        saved = [e.payload for e in first.fabric.replay(first.session_of("t")) if e.type == "checkpoint.saved"]
        theirs = events[0].payload["latest_checkpoint_id"]
        assert theirs in {s["checkpoint_id"] for s in saved}
        assert events[0].payload["parent_checkpoint_id"] != theirs
    assert "another writer saved checkpoint" in caplog.text


def test_strict_mode_refuses_the_fork_and_writes_nothing(eventloom: Path) -> None:
    first, failure = _fork(eventloom, "error")
    with first:
        assert isinstance(failure, ConflictError)
        assert failure.details["checkpoint_ns"] == "" and failure.field == "configurable.thread_id"
        types = [e.type for e in first.fabric.replay(first.session_of("t"))]
        assert "checkpoint.concurrent_write" not in types
        state = echo_graph(first).get_state({"configurable": {"thread_id": "t"}})
        # A read the thread after B saved its input, so A's turn builds on it; B's own step was refused
        assert [m.content for m in state.values["messages"]] == ["one", "echo one", "from B", "from A", "echo from A"]


def test_taking_turns_and_time_travel_are_not_forks(eventloom: Path) -> None:
    with (
        ZaxyCheckpointer.from_path(eventloom, concurrent_writes="error") as first,
        ZaxyCheckpointer.from_path(eventloom, concurrent_writes="error") as second,
    ):
        for turn in range(3):  # two workers serving one conversation in turn (each reads before it writes)
            say(echo_graph(first), "t", f"a{turn}")
            say(echo_graph(second), "t", f"b{turn}")
        graph = echo_graph(first)
        history = list(graph.get_state_history({"configurable": {"thread_id": "t"}}))
        older = history[4].config  # replay from an earlier checkpoint: a deliberate fork
        graph.invoke({"messages": [HumanMessage("rewind")]}, older)
        assert graph.get_state({"configurable": {"thread_id": "t"}}).values["messages"][-1].content == "echo rewind"


def test_checkout_takes_the_scope_patterns_the_middleware_takes(eventloom: Path) -> None:
    with ZaxyCheckpointer.from_path(eventloom) as saver:
        say(echo_graph(saver), "monday", "the deploy key rotates every Tuesday")
        say(echo_graph(saver), "tuesday", "hello")
        packet = saver.fabric.checkout("when does the deploy key rotate?", scope=["langgraph.*"])
        assert saver.session_of("monday") in packet.scope and saver.session_of("tuesday") in packet.scope
        assert saver.session_of("monday") in packet.prompt
        with pytest.raises(InvalidRequestError) as caught:
            saver.fabric.checkout("x", scope=["bad/session"])
        assert caught.value.field == "scope[0]"


def test_state_values_of_many_megabytes_round_trip(eventloom: Path) -> None:
    report = "The quick brown fox jumps over the lazy dog. " * 70_000  # ~3 MB

    def write(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(report)]}

    builder = StateGraph(MessagesState)
    builder.add_node("write", write)
    builder.add_edge(START, "write")
    builder.add_edge("write", END)
    with ZaxyCheckpointer.from_path(eventloom) as saver:
        builder.compile(checkpointer=saver).invoke(
            {"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "t"}}
        )
    with ZaxyCheckpointer.from_path(eventloom) as saver:
        state = builder.compile(checkpointer=saver).get_state({"configurable": {"thread_id": "t"}})
        assert state.values["messages"][-1].content == report


def test_another_process_writing_the_same_thread_is_reported(eventloom: Path) -> None:
    """Two real processes: while this one is inside a step of thread t, another process runs a whole turn of t."""
    import subprocess
    import sys

    child = (
        "import sys\n"
        "from langchain_core.messages import HumanMessage\n"
        "from tests.langgraph.test_dropin_checkpointer import echo_graph\n"
        "from zaxy_agents.langgraph import ZaxyCheckpointer\n"
        f"with ZaxyCheckpointer.from_path({str(eventloom)!r}) as saver:\n"
        "    echo_graph(saver).invoke({'messages': [HumanMessage('from the other process')]},"
        " {'configurable': {'thread_id': 't'}}, durability='sync')\n"
    )

    def chat(state: MessagesState) -> dict[str, Any]:
        done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return {"messages": [AIMessage("echo here")]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    with ZaxyCheckpointer.from_path(eventloom) as saver:
        say(echo_graph(saver), "t", "first", durability="sync")
        say(builder.compile(checkpointer=saver), "t", "from this process", durability="sync")
        warnings = [
            e.payload for e in saver.fabric.replay(saver.session_of("t")) if e.type == "checkpoint.concurrent_write"
        ]
        assert len(warnings) == 1
        theirs = saver.get_tuple(
            {"configurable": {"thread_id": "t", "checkpoint_id": warnings[0]["latest_checkpoint_id"]}}
        )
        assert (
            theirs is not None
            and theirs.checkpoint["channel_values"]["messages"][-1].content == "echo from the other process"
        )
