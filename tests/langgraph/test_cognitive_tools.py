"""The causal and consolidation memory tools through a real LangGraph graph (ToolNode): opt-in, scoped by the
run's config, structured errors, the review gate."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import memory_tools
from zaxy_agents.langgraph.cognitive import COGNITIVE_TOOLS, cognitive_tools

THREAD = {"thread_id": "incident"}
SESSION = "langgraph.incident"
STEPS = [
    ("tool.call.completed", {"tool": "read_file"}),
    ("file.edit.applied", {"path": "x.py"}),
    ("command.completed", {"command": "pytest -q", "exit_code": 0}),
    ("task.completed", {"task_id": "T"}),
]


def call(fabric: MemoryFabric, name: str, args: dict[str, Any], configurable: dict[str, Any] = THREAD) -> ToolMessage:
    builder = StateGraph(MessagesState)
    tools = memory_tools(fabric, include=["memory_append", "memory_checkout", *COGNITIVE_TOOLS])
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "tools")
    request = AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])
    [_, message] = builder.compile().invoke({"messages": [request]}, {"configurable": configurable})["messages"]
    return message


def body(message: ToolMessage) -> dict[str, Any]:
    return json.loads(str(message.content))


def test_the_tools_are_opt_in_and_take_no_session(fabric: MemoryFabric) -> None:
    assert not set(COGNITIVE_TOOLS) & {tool.name for tool in memory_tools(fabric)}
    tools = cognitive_tools(fabric)
    assert [tool.name for tool in tools] == list(COGNITIVE_TOOLS)
    for tool in tools:
        properties = tool.tool_call_schema.model_json_schema()["properties"]
        assert not {"session", "session_id", "scope"} & set(properties), tool.name


def _explain_a_failure(fabric: MemoryFabric) -> dict[str, Any]:
    """A failed ``make`` and the agent's explanation of it ("expired token" caused "make #1"); the failure's body."""
    failure = body(
        call(fabric, "memory_append", {"type": "command.completed", "payload": {"command": "make", "exit_code": 2}})
    )
    explanation = {
        "cause": {"name": "expired token", "entity_type": "fact"},
        "effect": {"name": "make #1", "entity_type": "command_run"},
        "relation": "caused",
        "confidence": 0.8,
        "evidence": failure["citation"],
    }
    assert call(fabric, "memory_append", {"type": "outcome.explained", "payload": explanation}).status == "success"
    return failure


def test_explain_then_walk_causal_memory(fabric: MemoryFabric) -> None:
    failure = _explain_a_failure(fabric)
    why = call(fabric, "memory_causal_predecessors", {"entity_name": "make #1", "entity_type": "command_run"})
    assert why.status == "success" and why.artifact["recall"] is True
    hits = body(why)["results"]
    assert [(h["source"]["name"], h["relation_type"], h["evidence"]["citation"]) for h in hits] == [
        ("expired token", "caused", failure["citation"])
    ]
    what = body(call(fabric, "memory_causal_successors", {"entity_name": "expired token", "relation_type": "caused"}))
    assert what["results"][0]["target"]["name"] == "make #1" and what["session"] == SESSION
    bad = call(fabric, "memory_causal_successors", {"entity_name": "expired token", "relation_type": ["vibes"]})
    assert bad.status == "error" and body(bad)["error"]["code"] == "invalid_request"
    missing = call(fabric, "memory_causal_predecessors", {"entity_name": "nobody"})
    assert missing.status == "error" and body(missing)["error"]["code"] == "not_found"


def test_causal_reads_follow_a_citation_only_into_the_recall_scope(fabric: MemoryFabric) -> None:
    failure = fabric.append("ops", "command.completed", {"command": "make", "exit_code": 2})
    fabric.explain_outcome(
        "ops",
        cause={"name": "expired token", "entity_type": "fact"},
        effect={"name": "make #1", "entity_type": "command_run"},
        relation="caused",
        confidence=0.8,
        evidence=failure.citation,
    )
    args = {"entity_name": "make #1", "citation": failure.citation}
    denied = call(fabric, "memory_causal_predecessors", args)
    assert denied.status == "error" and body(denied)["error"]["code"] == "unauthorized"
    allowed = body(call(fabric, "memory_causal_predecessors", args, {**THREAD, "zaxy_scope": ["ops"]}))
    assert allowed["session"] == "ops" and allowed["results"][0]["source"]["name"] == "expired token"


def test_consolidation_through_the_tools_and_the_review_gate(fabric: MemoryFabric) -> None:
    for kind, payload in STEPS:
        call(fabric, "memory_append", {"type": kind, "payload": payload})
    proposed = body(call(fabric, "memory_consolidation_propose_from_log", {}))
    assert [p["candidate_type"] for p in proposed["proposals"]] == ["episode", "procedure"]
    procedure = proposed["proposals"][1]["candidate_id"]
    forged = call(
        fabric, "memory_append", {"type": "consolidation.candidate.reviewed", "payload": {"candidate_id": procedure}}
    )
    assert forged.status == "error" and body(forged)["error"]["field"] == "type"  # LangGraph's memory_append
    packet = call(fabric, "memory_checkout", {"query": "how do we ship a fix?"})
    assert "accepted, non-authoritative" not in str(packet.content)
    review = {"operation": "review", "candidate_id": procedure, "status": "accepted", "rationale": "our loop"}
    reviewed = body(call(fabric, "memory_consolidation", review))
    assert reviewed["operation"] == "review" and reviewed["authority_status"] == "non_authoritative"
    packet = call(fabric, "memory_checkout", {"query": "how do we ship a fix?"})
    assert "[procedure, accepted, non-authoritative] Procedure: read_file → edit .py → $ pytest" in str(packet.content)
    twice = call(fabric, "memory_consolidation_review", {k: v for k, v in review.items() if k != "operation"})
    assert twice.status == "error" and body(twice)["error"]["code"] == "conflict"
    status = body(call(fabric, "memory_consolidation_status", {"include_candidates": False}))
    assert (status["total"], status["pending"], status["accepted"]) == (2, 1, 1) and "candidates" not in status
    claim = body(
        call(
            fabric,
            "memory_consolidation_candidate",
            {
                "candidate_type": "claim",
                "title": "pytest passes",
                "summary": "green",
                "source_events": [_first_citation(fabric)],
                "confidence": 0.6,
            },
        )
    )
    assert claim["created"] and claim["candidate"]["review_status"] == "pending"
    foreign = call(fabric, "memory_consolidation", {"operation": "status", "status": "accepted"})
    assert foreign.status == "error" and "do not apply" in body(foreign)["error"]["message"]
    incomplete = call(fabric, "memory_consolidation", {"operation": "candidate", "title": "x"})
    assert incomplete.status == "error" and "needs" in body(incomplete)["error"]["message"]
    uncited = call(
        fabric,
        "memory_consolidation_candidate",
        {"candidate_type": "claim", "title": "t", "summary": "s", "source_events": [], "confidence": 0.5},
    )
    assert uncited.status == "error" and body(uncited)["error"]["field"] == "source_events"


def _first_citation(fabric: MemoryFabric) -> str:
    return next(iter(fabric.replay(SESSION))).citation


def test_as_of_reads_memory_as_it_was(fabric: MemoryFabric) -> None:
    failure = _explain_a_failure(fabric)
    before = fabric.log.get(SESSION, failure["seq"]).timestamp  # the failure, before its explanation
    now = body(call(fabric, "memory_causal_successors", {"entity_name": "expired token"}))
    assert [hit["target"]["name"] for hit in now["results"]] == ["make #1"]
    then = body(call(fabric, "memory_causal_successors", {"entity_name": "expired token", "as_of": before}))
    assert (then["as_of"], then["results"], then["start"]) == (before, [], [])  # the edge did not exist yet
    for kind, payload in STEPS:
        call(fabric, "memory_append", {"type": kind, "payload": payload})
    call(fabric, "memory_consolidation_propose_from_log", {})
    assert body(call(fabric, "memory_consolidation_status", {}))["total"] == 2
    earlier = body(call(fabric, "memory_consolidation", {"operation": "status", "as_of": before}))
    assert earlier["operation"] == "status" and earlier["total"] == 0


def test_the_mcp_and_langgraph_tools_take_the_same_arguments() -> None:
    """Both surfaces build their argument models from zaxy_agents.tool_arguments: same fields, same bounds."""
    from zaxy_agents.langgraph import cognitive as lg
    from zaxy_agents.mcp.tools import causal, consolidation

    pairs = [
        (lg.CausalArgs, causal.CausalArgs),
        (lg.CandidateArgs, consolidation.CandidateArgs),
        (lg.ProposeArgs, consolidation.ProposeArgs),
        (lg.ReviewArgs, consolidation.ReviewArgs),
        (lg.StatusArgs, consolidation.StatusArgs),
        (lg.ConsolidationArgs, consolidation.ConsolidationArgs),
    ]
    for ours, theirs in pairs:
        left = ours.model_json_schema()["properties"]
        right = theirs.model_json_schema()["properties"]
        left.pop("citation", None)  # LangGraph only: follow an entity's citation into another session
        right.pop("session_id")  # MCP only: LangGraph tools use the run's session
        assert left == right, ours.__name__
