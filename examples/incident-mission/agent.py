"""An incident mission: a supervisor fans out three worker agents, a reviewer promotes what is backed by
evidence, and the next shift's checkout shows only promoted state.

A LangGraph ``StateGraph``: the ``supervisor`` node starts a Coordinate mission, creates the workers and assigns
each a task, then ``Send``s one ``worker`` run per assignment. Each worker is a ``create_agent`` agent with
``memory_query`` and the coordination tools bound to *its own* worker id (the graph fixes who it is, not the
model); it reports a finding citing the log events it relies on. The ``reviewer`` agent (bound to the reviewer
``sre``) reads the merge brief, rejects the finding without evidence, accepts and promotes the one backed by the
log and a test, defers the rest, and hands off to the next shift.

Run it: ``python agent.py`` (offline, scripted models) or ``ZAXY_EXAMPLE_MODEL=openai:gpt-4o-mini python agent.py``.
"""

from __future__ import annotations

import json
import operator
import os
from typing import Annotated, Any, TypedDict

from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import memory_tools
from zaxy_agents.langgraph.coordinate import coordination_tools
from zaxy_agents.langgraph.scripted import ScriptedChatModel

OPS = "ops"
MISSION = "checkout-500s"
TASKS = {
    "db": ("Check the database connection pool", "pool"),
    "net": ("Check DNS and the network path", None),
    "cache": ("Check the cache hit rate", "cache hit rate"),
}
CLAIMS = {
    "db": ("root cause", "The DB connection pool (max 10) is exhausted since the deploy", True),
    "net": ("root cause", "DNS flaps between the pods", False),
    "cache": ("cache", "The cache hit rate is normal (97%)", False),
}


class MissionState(TypedDict, total=False):
    reports: Annotated[list[str], operator.add]
    handoff: str


def seed(memory: MemoryFabric) -> None:
    """What the on-call shift left in memory: the errors, a pool test, the cache dashboard."""
    if memory.head(OPS) is not None:
        return
    memory.append(OPS, "command.completed", {"command": "grep 500 app.log", "output": "pool timeout after 30s (x412)"})
    memory.append(OPS, "command.completed", {"command": "pytest -k pool_limit", "exit_code": 0, "output": "1 passed"})
    memory.append(OPS, "observation.recorded", {"text": "cache hit rate 97% on the dashboard"})


def model(policy: Any) -> Any:
    name = os.environ.get("ZAXY_EXAMPLE_MODEL")  # e.g. openai:gpt-4o-mini
    return init_chat_model(name) if name else ScriptedChatModel(policy=policy)


def results(messages: list[Any]) -> list[dict[str, Any]]:
    return [json.loads(m.text) for m in messages if isinstance(m, ToolMessage)]


def call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}-{len(str(args))}"}])


def worker_policy(worker: str):  # stand-in model: query the log for evidence, then report one finding
    def policy(messages: list[Any]) -> AIMessage:
        done = results(messages)
        query = TASKS[worker][1]
        if query and not done:
            return call("memory_query", {"query": query, "k": 3})
        if len(done) == (1 if query else 0):
            subject, claim, test_backed = CLAIMS[worker]
            hits = done[0]["hits"] if query else []
            mine = [h["citation"] for h in hits if h["citation"].startswith(f"eventloom://{OPS}/")]
            evidence = mine[: 2 if test_backed else 1]
            return call(
                "coordination_report_finding",
                {"subject": subject, "claim": claim, "evidence": evidence, "test_backed": test_backed},
            )
        return AIMessage(f"reported {done[-1]['finding_id']}")

    return policy


def reviewer_policy(messages: list[Any]) -> AIMessage:  # stand-in model: evidence decides
    done = results(messages)
    if not done:
        return call("coordination_merge_brief", {})
    brief = done[0]
    pending = brief["findings"]["pending"]
    decided = len(done) - 1
    decisions = []
    for finding in pending:
        if not finding["evidence"]:
            decisions.append(("rejected", "no evidence cited", False))
        elif finding["subject"] == "root cause" and finding["test_backed"]:
            decisions.append(("accepted", "the log and a passing pool test back it", True))
        else:
            decisions.append(("deferred", "not about the root cause; keep it for later", False))
    steps = []
    for finding, (status, rationale, promote) in zip(pending, decisions, strict=True):
        steps.append(
            (
                "coordination_review_finding",
                {"finding_id": finding["finding_id"], "status": status, "rationale": rationale},
            )
        )
        if promote:
            steps.append(("coordination_promote", {"finding_id": finding["finding_id"]}))
    steps.append(
        (
            "coordination_handoff",
            {
                "summary": "Root cause: DB pool exhausted; raise it to 50",
                "next_steps": ["raise the pool to 50", "watch p99 for an hour"],
            },
        )
    )
    if decided < len(steps):
        return call(*steps[decided])
    return AIMessage(f"handed off {done[-1]['handoff_id']}")


def build(memory: MemoryFabric):
    coordination = memory.coordination

    def supervisor(state: MissionState) -> MissionState:
        coordination.start(
            "Checkout returns 500",
            "Find why checkout fails since the deploy",
            mission_id=MISSION,
            coordinator="lead",
            reviewers=["sre"],
        )
        for worker, (task, _) in TASKS.items():
            coordination.worker_create(MISSION, worker, purpose=task, actor="lead")
            coordination.assign(MISSION, worker, task, actor="lead")
        return {}

    def fan_out(state: MissionState) -> list[Send]:
        return [Send("worker", {"worker": worker}) for worker in TASKS]

    def worker(state: dict[str, Any]) -> MissionState:
        name = state["worker"]
        tools = memory_tools(memory, session=OPS, include=["memory_query"])
        tools += coordination_tools(memory, MISSION, name, "worker")
        agent = create_agent(model(worker_policy(name)), tools, system_prompt=f"You are worker {name}.")
        out = agent.invoke({"messages": [HumanMessage(f"{TASKS[name][0]}; report one finding with citations.")]})
        return {"reports": [out["messages"][-1].text]}

    def reviewer(state: MissionState) -> MissionState:
        tools = coordination_tools(memory, MISSION, "sre", "reviewer")
        agent = create_agent(model(reviewer_policy), tools, system_prompt="You review the workers' findings.")
        out = agent.invoke(
            {
                "messages": [
                    HumanMessage(
                        "Review every pending finding, promote what the evidence "
                        "backs, then hand off to the next shift."
                    )
                ]
            }
        )
        return {"handoff": out["messages"][-1].text}

    graph = StateGraph(MissionState)
    graph.add_node("supervisor", supervisor)
    graph.add_node("worker", worker)
    graph.add_node("reviewer", reviewer)
    graph.add_edge(START, "supervisor")
    graph.add_conditional_edges("supervisor", fan_out, ["worker"])
    graph.add_edge("worker", "reviewer")
    graph.add_edge("reviewer", END)
    return graph.compile()


def main() -> None:
    with MemoryFabric.from_path() as memory:  # ZAXY_EVENTLOOM_PATH, else ./.eventloom
        seed(memory)
        final = build(memory).invoke({})
        print("workers:", "; ".join(sorted(final["reports"])))
        print("reviewer:", final["handoff"])
        brief = memory.coordination.merge_brief(MISSION)
        print("review:", ", ".join(f"{status}={count}" for status, count in brief["counts"].items() if count))
        next_shift = memory.coordination.checkout(MISSION)  # the next shift: promoted state only
        print(next_shift["prompt"])


if __name__ == "__main__":
    main()
