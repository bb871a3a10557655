"""Compaction: a scripted compact-then-continue run keeps open tasks and decisions; planning never splits a tool
exchange; the recovery packet stays in budget and cites only Eventloom events."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph import END, START, StateGraph

from zaxy_agents.checkout.recovery import build_recovery_packet
from zaxy_agents.checkout.tokens import count_tokens, get_encoding
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer
from zaxy_agents.langgraph.compaction import MessageTokenCounter, plan_compaction
from zaxy_agents.langgraph.nodes import ZaxyMemoryState, capture_node, compaction_node, with_memory
from zaxy_agents.langgraph.scripted import ScriptedChatModel

CITED_LINE = re.compile(r"^- .+ \[eventloom://[A-Za-z0-9_.-]+/events/\d+#[0-9a-f]{12}\]$")


def chatty(messages: Sequence[BaseMessage]) -> AIMessage:
    return AIMessage(f"Looked at it ({len(messages)} messages in view). " + "Details follow. " * 40)


def compacting_graph(memory: MemoryFabric, llm: ScriptedChatModel, **budget):
    def model(state: ZaxyMemoryState) -> dict:
        return {"messages": [llm.invoke(with_memory(state, "You are a coding assistant."))]}

    builder = StateGraph(ZaxyMemoryState)
    builder.add_node("compact", compaction_node(memory, **budget))
    builder.add_node("model", model)
    builder.add_node("capture", capture_node(memory))
    builder.add_edge(START, "compact")
    builder.add_edge("compact", "model")
    builder.add_edge("model", "capture")
    builder.add_edge("capture", END)
    return builder.compile(checkpointer=ZaxyCheckpointer(memory))


@pytest.fixture
def any_fabric(backend, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A fabric on each Eventloom backend (PostgreSQL skips unless ZAXY_TEST_POSTGRES_DSN names a server)."""
    for name, value in backend.env().items():
        monkeypatch.setenv(name, value)
    with MemoryFabric.from_path(tmp_path / "derived") as memory:
        yield memory


def test_compact_then_continue_keeps_open_tasks_and_decisions(any_fabric: MemoryFabric) -> None:
    fabric = any_fabric
    session = "langgraph.long"
    task = fabric.append(session, "task.created", {"task_id": "T-1", "title": "Add retries to the HTTP client"})
    done = fabric.append(session, "task.created", {"task_id": "T-0", "title": "Set up CI"})
    fabric.append(session, "task.completed", {"task_id": "T-0"})
    decision = fabric.append(
        session, "decision.recorded", {"decision": "Use exponential backoff with jitter", "topic": "retries"}
    )
    fabric.append(session, "file.edit.applied", {"path": "http/retry.py", "operation": "edit", "lines_added": 12})
    fabric.append(session, "command.completed", {"command": "pytest -q tests/http", "exit_code": 0})
    llm = ScriptedChatModel(policy=chatty)
    graph = compacting_graph(fabric, llm, max_tokens=1500, keep_tokens=400, recovery_tokens=600)
    config = {"configurable": {"thread_id": "long"}}

    for turn in range(8):
        result = graph.invoke({"messages": [HumanMessage(f"Turn {turn}: here is more log output. " * 12)]}, config)
    [compaction, *more] = [e for e in fabric.replay(session) if e.type == "transcript.compacted"]
    assert not more
    payload = compaction.payload
    assert payload["tokens_before"] > 1500 >= payload["tokens_after"] and payload["messages_removed"] > 0
    assert payload["recovery"]["tokens"] <= 600 and payload["thread_id"] == "long"

    # Continue after the compaction: the model still has the open task and the decision, cited.
    result = graph.invoke({"messages": [HumanMessage("Where were we? What is still open?")]}, config)
    seen = llm.calls[-1]
    recovery = next(m for m in seen if m.additional_kwargs.get("lc_source") == "zaxy_memory")
    assert recovery.id.startswith("zaxy-memory-recovery-") and isinstance(seen[0], SystemMessage)
    assert f"Add retries to the HTTP client (T-1) [{task.citation}]" in recovery.text
    assert f"Use exponential backoff with jitter [{decision.citation}]" in recovery.text
    assert "http/retry.py" in recovery.text and "`pytest -q tests/http` → exit 0" in recovery.text
    assert "Set up CI" not in recovery.text and done.citation not in recovery.text  # completed: not open
    assert count_tokens(recovery.text) <= 600
    item_lines = [line for line in recovery.text.splitlines() if line.startswith("- ")]
    assert item_lines and all(CITED_LINE.match(line) for line in item_lines)
    for citation in payload["recovery"]["citations"]:
        assert fabric.resolve(citation).session == session  # every citation resolves to an Eventloom event
    assert len(result["messages"]) < 18  # the conversation really was trimmed
    assert MessageTokenCounter()(result["messages"]) <= 1500

    # The removed messages are still memory: every turn of the run is in the log exactly once.
    turns = [e.payload["message_id"] for e in fabric.replay(session) if e.type == "transcript.turn"]
    assert len(turns) == len(set(turns)) == 18


def test_the_same_compaction_rerun_is_recorded_once(fabric: MemoryFabric) -> None:
    node = compaction_node(fabric, max_tokens=300, keep_tokens=60, recovery_tokens=200)
    messages = [HumanMessage(f"message {i} " + "words " * 60, id=f"m{i}") for i in range(6)]
    config = {"configurable": {"thread_id": "rerun"}}
    first, second = node({"messages": messages}, config), node({"messages": messages}, config)
    assert first["messages"][2:] == second["messages"][2:] and first["messages"][1].id == second["messages"][1].id
    assert len([e for e in fabric.replay("langgraph.rerun") if e.type == "transcript.compacted"]) == 1
    assert node({"messages": messages[:1]}, config) == {}  # under budget: nothing happens


def unit(text: str, call_id: str) -> list[BaseMessage]:
    call = AIMessage("", tool_calls=[{"name": "grep", "args": {"q": text}, "id": call_id}])
    return [call, ToolMessage(text * 40, tool_call_id=call_id, name="grep")]


def test_planning_never_splits_a_tool_exchange_and_keeps_the_current_request() -> None:
    count = MessageTokenCounter()
    old_recovery = HumanMessage(
        "old packet", id="zaxy-memory-recovery-old", additional_kwargs={"lc_source": "zaxy_memory"}
    )
    system = SystemMessage("rules")
    request = HumanMessage("fix the flaky test")
    history = [system, old_recovery, HumanMessage("earlier"), AIMessage("ok"), request]
    history += unit("alpha ", "c1") + unit("beta ", "c2") + unit("gamma ", "c3")
    plan = plan_compaction(history, keep_tokens=count(unit("gamma ", "c3")) + count([request]) + 5, count=count)

    assert plan.pinned == [system]
    assert plan.kept[0] is request  # the current task survives even though its turn does not fit
    assert [m.tool_call_id for m in plan.kept if isinstance(m, ToolMessage)] == ["c3"]
    assert isinstance(plan.kept[1], AIMessage) and plan.kept[1].tool_calls[0]["id"] == "c3"
    assert old_recovery not in plan.kept and old_recovery not in plan.removed
    removed_ids = {m.tool_call_id for m in plan.removed if isinstance(m, ToolMessage)}
    removed_calls = {m.tool_calls[0]["id"] for m in plan.removed if isinstance(m, AIMessage) and m.tool_calls}
    assert removed_ids == removed_calls == {"c1", "c2"}

    huge = [HumanMessage("x " * 2000)]
    assert plan_compaction(huge, keep_tokens=10, count=count).kept == huge  # a message is never cut


def test_compaction_budgets_are_checked_up_front(fabric: MemoryFabric) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        compaction_node(fabric, max_tokens=1000, keep_tokens=600, recovery_tokens=500)
    assert raised.value.field == "max_tokens"


def test_recovery_packet_packs_by_priority_under_its_token_budget(fabric: MemoryFabric) -> None:
    for n in range(40):
        fabric.append("busy", "task.created", {"task_id": f"T-{n}", "title": f"Task number {n} " + "detail " * 10})
        fabric.append("busy", "decision.recorded", {"decision": f"Decision {n} " + "because " * 10, "topic": f"d{n}"})
    working = fabric.working_set("busy")
    encoder = get_encoding()
    for budget in (400, 600, 1000):  # citations tokenise to a varying number of tokens: keep margins
        packet = build_recovery_packet(working, None, max_tokens=budget, encoder=encoder)
        assert packet.tokens <= budget and len(encoder.encode(packet.text)) == packet.tokens
        assert packet.omitted > 0 and "more items not shown" in packet.text
        assert packet.sections["open_tasks"] >= 3 and packet.sections["decisions"] >= 3  # every section first
    assert build_recovery_packet(None, None, max_tokens=300, encoder=encoder).text == ""
