"""The memory nodes in real LangGraph graphs: checkout into state, capture without double-recording, feedback."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer
from zaxy_agents.langgraph.nodes import (
    ZaxyMemoryState,
    capture_node,
    checkout_node,
    feedback_node,
    with_memory,
)
from zaxy_agents.langgraph.scripted import ScriptedChatModel


def build(memory: MemoryFabric, policy, *, checkpointer=None, scope=(), feedback: bool = False, **checkout):
    llm = ScriptedChatModel(policy=policy)

    def model(state: ZaxyMemoryState) -> dict:
        return {"messages": [llm.invoke(with_memory(state, "You are terse."))]}

    builder = StateGraph(ZaxyMemoryState)
    builder.add_node("checkout", checkout_node(memory, scope=scope, max_tokens=600, **checkout))
    builder.add_node("model", model)
    builder.add_node("capture", capture_node(memory))
    builder.add_edge(START, "checkout")
    builder.add_edge("checkout", "model")
    builder.add_edge("model", "capture")
    if feedback:
        builder.add_node("feedback", feedback_node(memory, scope=scope))
        builder.add_edge("capture", "feedback")
        builder.add_edge("feedback", END)
    else:
        builder.add_edge("capture", END)
    return builder.compile(checkpointer=checkpointer), llm


def cite_first(messages: Sequence[BaseMessage]) -> AIMessage:
    """Answer with the first memory line that carries a citation."""
    line = next((line for line in messages[0].text.splitlines() if "eventloom://" in line), "nothing")
    return AIMessage(f"From memory: {line}")


def config(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


def events(memory: MemoryFabric, session: str, kind: str) -> list:
    return [event for event in memory.replay(session) if event.type == kind] if memory.log.has_session(session) else []


def test_checkout_puts_the_packet_in_state_and_the_system_message(fabric: MemoryFabric) -> None:
    fabric.append("proj", "decision.recorded", {"decision": "Use pgbouncer for pooling", "topic": "pooling"})
    fabric.append("proj", "task.created", {"task_id": "T-7", "title": "Migrate billing to Postgres"})
    graph, llm = build(fabric, cite_first, scope=["proj"])
    result = graph.invoke({"messages": [HumanMessage("How do we pool connections?")]}, config("t1"))

    context = result["memory_context"]
    assert context["session"] == "langgraph.t1" and context["query"] == "How do we pool connections?"
    assert context["message_id"] == result["messages"][0].id
    system = llm.calls[0][0]
    assert isinstance(system, SystemMessage) and len(llm.calls[0]) == 2
    assert system.text.startswith("You are terse.\n\n# Memory Checkout\n\n## Stable memory (tier 1")
    assert "Use pgbouncer for pooling" in system.text and system.text == "You are terse.\n\n" + context["prompt"]
    assert context["prompt"].rstrip().splitlines()[-1].startswith("- Memory ")  # the directive closes the packet
    decision = events(fabric, "proj", "decision.recorded")[0].citation
    assert decision in context["citations"] and decision in result["messages"][-1].text
    [audit] = events(fabric, "langgraph.t1", "metacognition.checkout")
    assert audit.payload["answerability"] == context["answerability"]
    assert audit.payload["message_id"] == context["message_id"] and decision in audit.payload["citations"]


def test_empty_memory_sends_only_the_answerability_directive(fabric: MemoryFabric) -> None:
    graph, llm = build(fabric, cite_first)
    result = graph.invoke({"messages": [HumanMessage("Who owns billing?")]}, config("fresh"))
    assert result["memory_context"]["answerability"] == "ask_user"
    assert result["memory_context"]["citations"] == []
    assert llm.calls[0][0].text == (
        "You are terse.\n\n# Memory Checkout\n- Memory holds nothing specific to this request: do not invent "
        "remembered facts; ask the user for what you need.\n"
    )


def test_checkout_runs_once_per_user_message_unless_every_call(fabric: MemoryFabric) -> None:
    for every_call, expected in ((False, 1), (True, 2)):
        node = checkout_node(fabric, every_call=every_call)
        thread = f"loop-{every_call}"
        state: dict = {"messages": [HumanMessage("hello", id="h1")]}
        for _ in range(2):  # two model calls in one user turn (a tool loop)
            state = {**state, **node(state, config(thread))}
            state["messages"] = [*state["messages"], AIMessage("step")]
        assert len(events(fabric, f"langgraph.{thread}", "metacognition.checkout")) == expected


def test_capture_records_turns_and_tool_results_once_and_rerunning_a_step_adds_nothing(fabric: MemoryFabric) -> None:
    def tool_user(messages: Sequence[BaseMessage]) -> AIMessage:
        return AIMessage(
            "", tool_calls=[{"name": "lookup", "args": {"key": "db", "token": "t0k-9f8e7d6c"}, "id": "call-1"}]
        )

    saver = InMemorySaver()
    graph, _ = build(fabric, tool_user, checkpointer=saver)
    result = graph.invoke(
        {
            "messages": [
                HumanMessage("look it up"),
                ToolMessage("db-new.internal", tool_call_id="call-0", name="lookup"),
            ]
        },
        config("cap"),
    )
    session = "langgraph.cap"
    turns = events(fabric, session, "transcript.turn")
    assert [turn.payload["role"] for turn in turns] == ["user", "tool", "assistant"]
    assert [turn.payload["message_id"] for turn in turns] == [m.id for m in result["messages"]]
    assert turns[2].payload["tool_calls"] == [
        {"name": "lookup", "args": {"key": "db", "token": "[REDACTED]"}, "id": "call-1"}
    ]
    [tool] = events(fabric, session, "tool.call.completed")
    assert tool.payload["tool_use_id"] == "call-0" and tool.payload["status"] == "ok"
    assert tool.payload["result_summary"] == "db-new.internal" and tool.payload["client"] == "langgraph"

    # Re-run the capture step from the checkpoint before it (LangGraph replays the node): nothing new.
    before_capture = next(s for s in graph.get_state_history(config("cap")) if s.next == ("capture",))
    count = sum(1 for _ in fabric.replay(session))
    graph.invoke(None, before_capture.config)
    assert sum(1 for _ in fabric.replay(session)) == count


@pytest.mark.parametrize("durability", ["async", "sync", "exit"])
def test_with_zaxy_checkpointer_each_message_is_recorded_once(fabric: MemoryFabric, durability: str) -> None:
    graph, _ = build(
        fabric, lambda messages: AIMessage(f"reply {len(messages)}"), checkpointer=ZaxyCheckpointer(fabric)
    )
    for text in ("first", "second", "third"):
        graph.invoke({"messages": [HumanMessage(text)]}, config("both"), durability=durability)
    turns = events(fabric, "langgraph.both", "transcript.turn")
    counts = Counter(turn.payload["message_id"] for turn in turns)
    assert len(counts) == 6 and set(counts.values()) == {1}
    assert [turn.payload["role"] for turn in turns] == ["user", "assistant"] * 3


def test_capture_applies_the_callers_redaction_too(fabric: MemoryFabric) -> None:
    node = capture_node(fabric, redact=lambda text: text.replace("Ana Lima", "[NAME]"))
    node({"messages": [HumanMessage("Ana Lima asked for a refund", id="m1")]}, config("pii"))
    [turn] = events(fabric, "langgraph.pii", "transcript.turn")
    assert turn.payload["text"] == "[NAME] asked for a refund"


def test_memory_derived_messages_are_never_recorded(fabric: MemoryFabric) -> None:
    injected = HumanMessage(
        "# Zaxy memory ...", id="zaxy-memory-recovery-x", additional_kwargs={"lc_source": "zaxy_memory"}
    )
    tool = ToolMessage("packet", tool_call_id="c9", name="memory_query", artifact={"lc_source": "zaxy_memory"})
    capture_node(fabric)({"messages": [injected, tool, HumanMessage("real", id="m2")]}, config("echo"))
    assert [turn.payload["text"] for turn in events(fabric, "langgraph.echo", "transcript.turn")] == ["real"]
    assert events(fabric, "langgraph.echo", "tool.call.completed") == []

    builder = StateGraph(ZaxyMemoryState)
    builder.add_node("noop", lambda state: {})
    builder.add_edge(START, "noop")
    graph = builder.compile(checkpointer=ZaxyCheckpointer(fabric))
    graph.invoke({"messages": [injected, HumanMessage("kept", id="m3")]}, config("echo2"))
    assert [turn.payload["text"] for turn in events(fabric, "langgraph.echo2", "transcript.turn")] == ["kept"]


def test_feedback_reinforces_cited_memory_once_and_ignores_out_of_scope_or_bogus_citations(
    fabric: MemoryFabric,
) -> None:
    decision = fabric.append("proj", "decision.recorded", {"decision": "Use pgbouncer for pooling", "topic": "pooling"})
    private = fabric.append("other", "fact.asserted", {"fact": "the admin password rotates monthly"})
    bogus = decision.citation[:-4] + "0000"

    def cite_all(messages: Sequence[BaseMessage]) -> AIMessage:
        return AIMessage(f"Pool with pgbouncer ({decision.citation}); also {private.citation} and {bogus}.")

    graph, _ = build(fabric, cite_all, scope=["proj"], feedback=True, checkpointer=InMemorySaver())
    graph.invoke({"messages": [HumanMessage("How do we pool?")]}, config("fb"))
    [reinforced] = events(fabric, "proj", "memory.reinforced")
    assert reinforced.payload["entity_name"] == "pooling" and reinforced.payload["entity_type"] == "decision"
    assert reinforced.payload["citation"] == decision.citation and reinforced.payload["feedback"] == "used"
    assert events(fabric, "other", "memory.reinforced") == []

    before_feedback = next(s for s in graph.get_state_history(config("fb")) if s.next == ("feedback",))
    graph.invoke(None, before_feedback.config)  # the step runs again: still one feedback event
    assert len(events(fabric, "proj", "memory.reinforced")) == 1
    packet = fabric.checkout("pooling", session="proj")
    assert next(f for f in packet.current_facts if f.name == "pooling").salience["reinforcement"] > 1.0


def test_scope_and_session_come_from_config_not_from_the_model(fabric: MemoryFabric) -> None:
    fabric.append("team-notes", "decision.recorded", {"decision": "Deploy on Tuesdays", "topic": "deploys"})
    graph, llm = build(fabric, cite_first)
    graph.invoke({"messages": [HumanMessage("When do we deploy?")]}, config("alone"))
    assert "Deploy on Tuesdays" not in llm.calls[-1][0].text  # default scope: the thread only

    shared = {"configurable": {"thread_id": "alone", "zaxy_scope": ["team-*"], "zaxy_session": "ops-desk"}}
    result = graph.invoke({"messages": [HumanMessage("When do we deploy?")]}, shared)
    assert "Deploy on Tuesdays" in llm.calls[-1][0].text
    assert result["memory_context"]["session"] == "ops-desk"
    assert events(fabric, "ops-desk", "transcript.turn")


def test_a_graph_without_thread_or_session_gets_a_structured_error(fabric: MemoryFabric) -> None:
    from zaxy_agents.errors import InvalidRequestError

    with pytest.raises(InvalidRequestError) as raised:
        capture_node(fabric)({"messages": [HumanMessage("hi")]}, {"configurable": {}})
    assert raised.value.field == "configurable.thread_id"
    capture_node(fabric, session="fixed")({"messages": [HumanMessage("hi", id="x")]}, {"configurable": {}})
    assert len(events(fabric, "fixed", "transcript.turn")) == 1


def test_with_memory_merges_an_existing_system_message_and_accepts_plain_lists() -> None:
    state = {
        "messages": [SystemMessage("Be brief."), HumanMessage("hi")],
        "memory_context": {"prompt": "# Memory Checkout\n- x (eventloom://s/events/1#0123456789ab)\n"},
    }
    merged = with_memory(state, "You are Zaxy.")
    assert [type(m) for m in merged] == [SystemMessage, HumanMessage]
    assert merged[0].text.split("\n\n") == ["You are Zaxy.", "Be brief.", state["memory_context"]["prompt"]]
    assert with_memory([HumanMessage("hi")]) == [HumanMessage("hi")]
