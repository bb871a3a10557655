"""Coordinate inside the multi-agent patterns LangGraph users already write: a swarm (``langgraph-swarm``, agents
hand control to each other) and a supervisor with handoff tools (``langgraph-supervisor``). Real packages, real
``create_agent`` agents, scripted offline models; every agent gets ``coordination_tools`` bound to its own identity,
so a worker's finding stays pending until the reviewer's agent accepts and promotes it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph.coordinate import coordination_tools
from zaxy_agents.langgraph.scripted import ScriptedChatModel

swarm = pytest.importorskip("langgraph_swarm", reason="pip install -e '.[dev]' (langgraph-swarm)")
supervisor = pytest.importorskip("langgraph_supervisor", reason="pip install -e '.[dev]' (langgraph-supervisor)")

MISSION = "pool-outage"
# langgraph-supervisor 0.0.31 builds its supervisor with the deprecated create_react_agent; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")


def _call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


def _results(messages: Sequence[BaseMessage], *, refused: bool = False) -> dict[str, Any]:
    """The latest successful result of each tool called so far (tool name -> parsed JSON, or the raw text);
    ``refused=True`` also counts calls that came back as errors."""
    seen: dict[str, Any] = {}
    for message in messages:
        if isinstance(message, ToolMessage) and message.name and (refused or message.status != "error"):
            try:
                seen[message.name] = json.loads(message.text)
            except ValueError:
                seen[message.name] = message.text
    return seen


@pytest.fixture
def memory(tmp_path: Path):
    with MemoryFabric.from_path(tmp_path / ".eventloom") as fabric:
        yield fabric


def _mission(memory: MemoryFabric) -> str:
    """An on-call log with a passing pool test, and a mission with worker ``inv`` and reviewer ``sre``."""
    evidence = memory.append(
        "ops", "command.completed", {"command": "pytest -k pool_limit", "exit_code": 0, "output": "1 passed"}
    )
    memory.coordination.start(
        "Pool outage", "Find why checkout fails", mission_id=MISSION, coordinator="lead", reviewers=["sre"]
    )
    memory.coordination.worker_create(MISSION, "inv", actor="lead")
    return evidence.citation


def _worker_policy(evidence: str, hand_to: str | None):
    """Report one finding citing the log, try to review it (a worker has no such tool), then hand control on."""

    def policy(messages: Sequence[BaseMessage]) -> AIMessage:
        done = _results(messages, refused=True)
        if "coordination_report_finding" not in done:
            return _call(
                "coordination_report_finding",
                {
                    "subject": "root cause",
                    "claim": "The DB pool is exhausted",
                    "evidence": [evidence],
                    "confidence": 0.8,
                    "test_backed": True,
                },
            )
        if "coordination_review_finding" not in done:
            finding = done["coordination_report_finding"]["finding_id"]
            return _call(
                "coordination_review_finding", {"finding_id": finding, "status": "accepted", "rationale": "I am sure"}
            )
        if hand_to and f"transfer_to_{hand_to}" not in done:
            return _call(f"transfer_to_{hand_to}", {})
        return AIMessage("Reported the pool finding; it waits for review.")

    return policy


def _reviewer_policy(messages: Sequence[BaseMessage]) -> AIMessage:
    """Read the merge brief, accept and promote the pending test-backed finding, hand off to the next shift."""
    done = _results(messages)
    if "coordination_merge_brief" not in done:
        return _call("coordination_merge_brief", {})
    pending = done["coordination_merge_brief"]["findings"]["pending"]
    if "coordination_review_finding" not in done:
        return _call(
            "coordination_review_finding",
            {
                "finding_id": pending[0]["finding_id"],
                "status": "accepted",
                "rationale": "A passing pool test backs it.",
            },
        )
    if "coordination_promote" not in done:
        return _call("coordination_promote", {"finding_id": done["coordination_review_finding"]["finding_id"]})
    if "coordination_handoff" not in done:
        return _call("coordination_handoff", {"summary": "Pool exhausted; raise max size", "next_steps": ["resize"]})
    return AIMessage("Promoted the pool finding and handed off.")


def _cites(ref: dict[str, Any], citation: str) -> bool:
    return citation == f"eventloom://{ref['session']}/events/{ref['seq']}#{ref['hash'][:12]}"


def _assert_promoted_by_reviewer_only(memory: MemoryFabric, evidence: str) -> None:
    brief = memory.coordination.merge_brief(MISSION)
    (promoted,) = brief["findings"]["promoted"]
    assert promoted["worker_id"] == "inv" and _cites(promoted["evidence"][0], evidence)
    assert [review["reviewer"] for review in promoted["reviews"]] == ["sre"]
    accepted = memory.coordination.checkout(MISSION)
    assert [item["claim"] for item in accepted["accepted_state"]] == ["The DB pool is exhausted"]
    trace = memory.coordination.proof_trace(MISSION, handoff_id=accepted["latest_handoff"]["handoff_id"])
    assert trace["verified"] and [claim["finding_id"] for claim in trace["claims"]] == [promoted["finding_id"]]


def test_a_swarm_worker_reports_and_the_reviewer_agent_promotes(memory: MemoryFabric) -> None:
    evidence = _mission(memory)
    investigator = create_agent(
        ScriptedChatModel(policy=_worker_policy(evidence, hand_to="sre")),
        tools=[*coordination_tools(memory, MISSION, "inv", "worker"), swarm.create_handoff_tool(agent_name="sre")],
        name="inv",
    )
    reviewer = create_agent(
        ScriptedChatModel(policy=_reviewer_policy),
        tools=coordination_tools(memory, MISSION, "sre", "reviewer"),
        name="sre",
    )
    app = swarm.create_swarm([investigator, reviewer], default_active_agent="inv").compile(checkpointer=InMemorySaver())
    out = app.invoke({"messages": [HumanMessage("Why does checkout fail?")]}, {"configurable": {"thread_id": "t"}})

    refused = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.name == "coordination_review_finding"]
    assert refused[0].status == "error" and "not a valid tool" in refused[0].text  # the worker cannot review
    assert out["active_agent"] == "sre"
    _assert_promoted_by_reviewer_only(memory, evidence)


def test_a_supervisor_delegates_with_handoff_tools_and_promotes(memory: MemoryFabric) -> None:
    evidence = _mission(memory)
    worker = create_agent(
        ScriptedChatModel(policy=_worker_policy(evidence, hand_to=None)),
        tools=coordination_tools(memory, MISSION, "inv", "worker"),
        name="inv",
    )

    def lead_policy(messages: Sequence[BaseMessage]) -> AIMessage:  # assign, delegate, then act as reviewer
        done = _results(messages)
        if "coordination_assign" not in done:
            return _call("coordination_assign", {"worker_id": "inv", "task": "Check the DB pool"})
        if "transfer_to_inv" not in done:
            return _call("transfer_to_inv", {})
        return _reviewer_policy(messages)

    lead = supervisor.create_supervisor(
        [worker],
        model=ScriptedChatModel(policy=lead_policy),
        tools=coordination_tools(memory, MISSION, "lead", "coordinator"),
        output_mode="full_history",
    ).compile(checkpointer=InMemorySaver())
    lead.invoke({"messages": [HumanMessage("Why does checkout fail?")]}, {"configurable": {"thread_id": "t"}})

    checkout = memory.coordination.checkout(MISSION, worker_id="inv", actor="inv")
    assert [a["task"] for a in checkout["assignments"]] == ["Check the DB pool"]
    assert memory.coordination.merge_brief(MISSION)["findings"]["promoted"][0]["reviews"][0]["reviewer"] == "lead"
    brief = memory.coordination.merge_brief(MISSION)
    (promoted,) = brief["findings"]["promoted"]
    assert promoted["worker_id"] == "inv" and _cites(promoted["evidence"][0], evidence)


def test_a_reviewer_agent_binds_a_synthesis_answer_to_the_merge_brief(memory: MemoryFabric) -> None:
    """coordination_record_synthesis_artifact in a create_agent graph: the model names the query it checked out
    and the candidate's rank; the tool checks the query out again, records the artifact and the proof packet."""
    evidence = _mission(memory)
    memory.append("ops", "transcript.turn", {"role": "user", "text": "The pool outage cost $300 in refunds."})
    memory.append("ops", "transcript.turn", {"role": "user", "text": "Pool outage refunds were $200 more."})
    c = memory.coordination
    finding = c.report_finding(MISSION, "inv", "root cause", "The DB pool is exhausted", evidence=[evidence])
    c.review_finding(MISSION, finding["finding_id"], "accepted", "the test backs it", reviewer="sre")
    c.promote(MISSION, finding["finding_id"], promoted_by="sre")
    question = "How much did the pool outage cost in refunds in total?"

    def policy(messages: Sequence[BaseMessage]) -> AIMessage:
        done = _results(messages, refused=True)
        if "coordination_record_synthesis_artifact" not in done:
            return _call(
                "coordination_record_synthesis_artifact",
                {"query": question, "candidate": 1, "outcome": "used", "decision_scope": "merge_brief"},
            )
        return AIMessage(f"Refunds total {done['coordination_record_synthesis_artifact']['outcome']}")

    tools = coordination_tools(memory, MISSION, "sre", "reviewer", session="ops")
    schema = next(t for t in tools if t.name == "coordination_record_synthesis_artifact").args_schema
    assert {"mission_id", "actor"}.isdisjoint(schema.model_json_schema()["properties"])  # the graph binds them
    agent = create_agent(ScriptedChatModel(policy=policy), tools=tools)
    out = agent.invoke({"messages": [HumanMessage(question)]})
    bound = _results(out["messages"])["coordination_record_synthesis_artifact"]
    assert bound["outcome"]["candidate"]["answer_text"] == "$500"
    assert bound["accepted_finding_ids"] == [finding["finding_id"]]
    trace = c.proof_trace(MISSION, artifact_id=bound["artifact_id"])
    assert trace["verified"] and trace["proof_packets"][0]["created_by"] == "sre"
