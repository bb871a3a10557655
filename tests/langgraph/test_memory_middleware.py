"""``ZaxyMemoryMiddleware`` in real ``create_agent`` agents: checkout in the system message, capture, feedback,
memory tools, compaction with a cited recovery packet, sync and async."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Sequence

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyMemoryMiddleware, ZaxyStore
from zaxy_agents.langgraph.scripted import ScriptedChatModel

CITATION = re.compile(r"eventloom://[A-Za-z0-9_.-]+/events/\d+#[0-9a-f]{12}")


@tool
def run_linter(path: str) -> str:
    """Lint one file."""
    return f"{path}: 0 problems"


def policy(messages: Sequence[BaseMessage]) -> AIMessage:
    """Record decisions on request, lint on request, otherwise answer from memory with the citation."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(f"Done: {last.text}")
    text = last.text
    if text.startswith("Decide:"):
        payload = {"decision": text.removeprefix("Decide:").strip(), "topic": "formatting"}
        return AIMessage(
            "",
            tool_calls=[
                {"name": "memory_append", "args": {"type": "decision.recorded", "payload": payload}, "id": "c-dec"}
            ],
        )
    if text.startswith("Lint"):
        return AIMessage("", tool_calls=[{"name": "run_linter", "args": {"path": "app.py"}, "id": "c-lint"}])
    system = messages[0].text if isinstance(messages[0], SystemMessage) else ""
    line = next((line for line in system.splitlines() if "ruff" in line and CITATION.search(line)), None)
    return AIMessage(f"We use ruff ({CITATION.search(line).group(0)})." if line else "I don't know yet.")


def agent(fabric: MemoryFabric, llm: ScriptedChatModel, **options):
    return create_agent(
        llm,
        [run_linter],
        system_prompt="You are a coding assistant.",
        middleware=[ZaxyMemoryMiddleware(fabric, scope=["langgraph.*"], **options)],
        checkpointer=ZaxyCheckpointer(fabric),
        store=ZaxyStore(fabric),
    )


def ask(graph, thread: str, text: str) -> dict:
    return graph.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}})


def test_memory_carries_across_threads_with_citations_and_feedback(fabric: MemoryFabric) -> None:
    llm = ScriptedChatModel(policy=policy)
    graph = agent(fabric, llm)
    tool_names = {t.name for t in graph.get_graph().nodes["tools"].data.tools_by_name.values()}
    assert {"memory_append", "memory_query", "memory_checkout", "run_linter"} <= tool_names

    ask(graph, "mon", "Decide: format Python with ruff, line length 120")
    [decision] = [e for e in fabric.replay("langgraph.mon") if e.type == "decision.recorded"]
    assert decision.actor == "agent"
    ask(graph, "mon", "Lint the app")

    answer = ask(graph, "tue", "Which formatter do we use?")
    assert answer["messages"][-1].text == f"We use ruff ({decision.citation})."
    system = llm.calls[-1][0]
    assert system.text.startswith("You are a coding assistant.\n\n# Memory Checkout")
    assert "memory_context" not in answer  # private state: not in the agent's output
    assert [m.type for m in answer["messages"]] == ["human", "ai"]  # the packet never became a message

    [reinforced] = [e for e in fabric.replay("langgraph.mon") if e.type == "memory.reinforced"]
    assert reinforced.payload["citation"] == decision.citation and reinforced.payload["entity_name"] == "formatting"

    # The tool call is typed memory; memory tool results are not echoed into the transcript.
    [lint] = [e for e in fabric.replay("langgraph.mon") if e.type == "tool.call.completed"]
    assert lint.payload["tool"] == "run_linter" and lint.payload["argument_keys"] == ["path"]
    turns = [e.payload for e in fabric.replay("langgraph.mon") if e.type == "transcript.turn"]
    assert not any(t["role"] == "tool" and t.get("name") == "memory_append" for t in turns)
    assert set(Counter(t["message_id"] for t in turns).values()) == {1}


def test_async_agents_get_the_same_memory(fabric: MemoryFabric) -> None:
    fabric.append("langgraph.seed", "decision.recorded", {"decision": "Format with ruff", "topic": "formatting"})
    llm = ScriptedChatModel(policy=policy)
    graph = agent(fabric, llm)
    result = asyncio.run(
        graph.ainvoke({"messages": [HumanMessage("Which formatter do we use?")]}, {"configurable": {"thread_id": "as"}})
    )
    assert result["messages"][-1].text.startswith("We use ruff (eventloom://langgraph.seed/events/1#")
    assert [e.type for e in fabric.replay("langgraph.as") if e.type == "metacognition.checkout"]

    decided = asyncio.run(  # the memory tools run on the async path too
        graph.ainvoke({"messages": [HumanMessage("Decide: wrap at 100")]}, {"configurable": {"thread_id": "as"}})
    )
    [tool_result] = [m for m in decided["messages"] if isinstance(m, ToolMessage)]
    assert tool_result.status == "success" and json.loads(tool_result.text)["type"] == "decision.recorded"
    assert [e.payload["decision"] for e in fabric.replay("langgraph.as") if e.type == "decision.recorded"] == [
        "wrap at 100"
    ]


def test_middleware_compacts_with_a_cited_recovery_packet_instead_of_a_summary(fabric: MemoryFabric) -> None:
    fabric.append("langgraph.big", "task.created", {"task_id": "T-9", "title": "Ship the linter config"})
    seen: list[list[BaseMessage]] = []

    def verbose(messages: Sequence[BaseMessage]) -> AIMessage:
        seen.append(list(messages))
        return AIMessage("Reviewed. " + "Notes on the diff. " * 30)

    graph = agent(fabric, ScriptedChatModel(policy=verbose), compact_at=1200, keep_tokens=300, recovery_tokens=500)
    for n in range(6):
        result = ask(graph, "big", f"Review chunk {n}: " + "diff line " * 60)
    compactions = [e for e in fabric.replay("langgraph.big") if e.type == "transcript.compacted"]
    assert compactions and all(e.payload["tokens_after"] <= 1200 for e in compactions)
    recovery = [m for m in result["messages"] if m.additional_kwargs.get("lc_source") == "zaxy_memory"]
    assert len(recovery) == 1 and "Ship the linter config (T-9)" in recovery[0].text
    assert recovery[0] in seen[-1]  # the model call after compaction saw the packet
    assert all(isinstance(m, HumanMessage | AIMessage) for m in result["messages"])
    compacted_ids = set(compactions[-1].payload["recovery"]["citations"])
    assert compacted_ids and all(fabric.resolve(c) for c in compacted_ids)


def test_tools_can_be_left_out_and_turns_are_captured_without_a_checkpointer(fabric: MemoryFabric) -> None:
    graph = create_agent(
        ScriptedChatModel(policy=lambda messages: AIMessage("ok")),
        [],
        middleware=[ZaxyMemoryMiddleware(fabric, tools=False, feedback=False)],
    )
    graph.invoke({"messages": [HumanMessage("hello there")]}, {"configurable": {"thread_id": "bare"}})
    turns = [e.payload for e in fabric.replay("langgraph.bare") if e.type == "transcript.turn"]
    assert [(t["role"], t["text"]) for t in turns] == [("user", "hello there"), ("assistant", "ok")]
    assert json.dumps(turns)  # plain JSON payloads


def test_the_middleware_adds_no_graph_steps_and_keeps_its_context_for_the_run_only(fabric: MemoryFabric) -> None:
    """Checkout, capture and feedback run inside the model's own step: a turn saves as many checkpoints as the
    same agent without the middleware. memory_context lives for the run (one checkout per user message, reused by
    the tool loop's second model call) and is never checkpointed: the metacognition.checkout event is its record."""
    llm = ScriptedChatModel(policy=policy)
    plain = create_agent(llm, [run_linter], checkpointer=ZaxyCheckpointer(fabric, session_prefix="plain"))
    remembering = agent(fabric, llm)
    for graph in (plain, remembering):
        ask(graph, "steps", "Lint the app please")
        ask(graph, "steps", "What do we use?")
    saved = {
        prefix: sum(1 for e in fabric.replay(f"{prefix}.steps") if e.type == "checkpoint.saved")
        for prefix in ("plain", "langgraph")
    }
    assert saved["langgraph"] == saved["plain"] > 0
    state = remembering.get_state({"configurable": {"thread_id": "steps"}}).values
    assert "memory_context" not in state and state["messages"]
    checkouts = [e for e in fabric.replay("langgraph.steps") if e.type == "metacognition.checkout"]
    assert [e.payload["query"] for e in checkouts] == ["Lint the app please", "What do we use?"]
    assert all(e.payload["message_id"] for e in checkouts)  # the durable record of each checkout
    events = list(fabric.replay("langgraph.steps"))
    written = [w["channel"] for e in events if e.type == "checkpoint.writes" for w in e.payload["writes"]]
    channels = [c for e in events if e.type == "checkpoint.saved" for c in e.payload["channels"]]
    stored = [c for c in channels if c.get("blob") or "inline" in c]  # a value, not only a version bump
    assert "messages" in written and "memory_context" not in written
    assert stored and "memory_context" not in {c["channel"] for c in stored}


def test_only_compaction_adds_a_node_and_subclasses_keep_it(fabric: MemoryFabric) -> None:
    class TeamMemory(ZaxyMemoryMiddleware):
        """A user's subclass: compact_at must still compact."""

    llm = ScriptedChatModel(policy=lambda messages: AIMessage("ok"))
    nodes = {
        label: set(create_agent(llm, [], middleware=[middleware]).get_graph().nodes)
        for label, middleware in (
            ("plain", ZaxyMemoryMiddleware(fabric, tools=False)),
            ("compacting", ZaxyMemoryMiddleware(fabric, tools=False, compact_at=8000)),
            ("subclass", TeamMemory(fabric, tools=False, compact_at=8000)),
        )
    }
    assert not any(name.endswith(".before_model") or name.endswith(".after_model") for name in nodes["plain"])
    assert "ZaxyMemoryMiddleware.before_model" in nodes["compacting"]
    assert "TeamMemory.before_model" in nodes["subclass"]
    assert isinstance(TeamMemory(fabric, tools=False, compact_at=8000), TeamMemory)
