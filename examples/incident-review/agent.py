"""An incident-review agent: explains a failure causally and proposes the fix as a procedure for review.

``create_agent`` with Zaxy's memory tools — ``memory_query`` and ``memory_append`` plus the causal and consolidation
tools — on a session where a deploy failed and was later fixed. The agent finds the failure, records *why* it
happened as an ``outcome.explained`` event citing it (Zaxy turns that into a proposed, non-authoritative causal
edge), checks the explanation is in causal memory, and proposes the fix as a procedure candidate citing the
failure and the fix. The candidate is not memory until someone reviews it:
``zaxy memory consolidation review <id> -s ops --status accepted --rationale "..."``.

Run it: ``python agent.py`` (offline, scripted model) or ``ZAXY_EXAMPLE_MODEL=openai:gpt-4o-mini python agent.py``.
"""

from __future__ import annotations

import json
import os

from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import memory_tools
from zaxy_agents.langgraph.cognitive import COGNITIVE_TOOLS
from zaxy_agents.langgraph.scripted import ScriptedChatModel

SESSION = "ops"
QUESTION = "The deploy failed. Why, and how do we avoid it next time?"
SYSTEM_PROMPT = (
    "You review incidents. Find the failure in memory, record why it happened as an outcome.explained event "
    "(cause, effect, relation, confidence, evidence = the failure's citation), check it with "
    "memory_causal_predecessors, and propose the fix as a procedure candidate citing the events it is based on."
)


def seed(memory: MemoryFabric) -> None:
    """Earlier work: the CI token expired, a deploy failed, the token was rotated, the deploy worked."""
    if memory.head(SESSION) is not None:
        return
    memory.append(SESSION, "fact.asserted", {"key": "ci token expired", "fact": "the CI deploy token expired"})
    memory.append(
        SESSION, "command.completed", {"command": "make deploy", "exit_code": 1, "output": "401 from registry"}
    )
    memory.append(SESSION, "command.completed", {"command": "vault rotate ci-token", "exit_code": 0})
    memory.append(SESSION, "command.completed", {"command": "make deploy", "exit_code": 0, "output": "deployed"})


def offline(messages):  # stand-in model (no key, no network): reads the tool results so far, picks the next call
    results = [json.loads(m.text) for m in messages if isinstance(m, ToolMessage)]
    if not results:
        return call("memory_query", {"query": "make deploy failed exit", "k": 10})
    commands = sorted((h for h in results[0]["hits"] if h["type"] == "command.completed"), key=seq)
    failure = next(h for h in commands if " exit " in h["text"])
    fixes = [h for h in commands if seq(h) > seq(failure) and " ok" in h["text"]]
    cause = next(h for h in results[0]["hits"] if h["type"] == "fact.asserted")
    if len(results) == 1:
        explanation = {
            "cause": {"name": cause["entity"], "entity_type": cause["entity_type"]},
            "effect": {"name": failure["entity"], "entity_type": failure["entity_type"]},
            "relation_type": "caused",
            "confidence": 0.85,
            "evidence": failure["citation"],
            "explanation": "the registry answered 401 while the CI token was expired",
        }
        return call("memory_append", {"type": "outcome.explained", "payload": explanation})
    if len(results) == 2:
        return call("memory_causal_predecessors", {"entity_name": failure["entity"], "entity_type": "command_run"})
    if len(results) == 3:
        steps = " then ".join(fix["text"].split(" ok")[0] for fix in fixes)
        procedure = {
            "candidate_type": "procedure",
            "title": "Recover a deploy rejected with 401",
            "summary": f"When make deploy gets a 401 from the registry the CI token has expired: {steps}.",
            "source_events": [failure["citation"], *(fix["citation"] for fix in fixes)],
            "confidence": 0.7,
            "method": "agent_incident_review",
        }
        return call("memory_consolidation_candidate", procedure)
    edge, candidate = results[2]["results"][0], results[3]
    return AIMessage(
        f"The deploy failed because {edge['source']['name']} ({edge['relation_type']}, confidence "
        f"{edge['confidence']}, evidence {edge['evidence']['citation']}); a proposed, non-authoritative explanation. "
        f"I proposed procedure {candidate['candidate_id']} for review."
    )


def seq(hit: dict) -> int:  # eventloom://<session>/events/<seq>#<hash12>
    return int(hit["citation"].split("/events/")[1].split("#")[0])


def call(name: str, args: dict) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


def main() -> None:
    name = os.environ.get("ZAXY_EXAMPLE_MODEL")  # e.g. openai:gpt-4o-mini
    llm = init_chat_model(name) if name else ScriptedChatModel(policy=offline)
    with MemoryFabric.from_path() as memory:  # ZAXY_EVENTLOOM_PATH, else ./.eventloom
        seed(memory)
        tools = memory_tools(memory, session=SESSION, include=["memory_query", "memory_append", *COGNITIVE_TOOLS])
        agent = create_agent(llm, tools, system_prompt=SYSTEM_PROMPT)
        state = agent.invoke({"messages": [HumanMessage(QUESTION)]})
        print("tools:", ", ".join(m.name for m in state["messages"] if isinstance(m, ToolMessage)))
        print("answer:", state["messages"][-1].text)
        why = memory.causal_predecessors(SESSION, "make deploy #2", entity_type="command_run")
        for hit in why["results"]:
            print(
                f"causal edge: {hit['source']['name']} -[{hit['relation_type']}]-> {hit['target']['name']} "
                f"(evidence {hit['evidence']['citation']}, {hit['review_status']}, {hit['authority_status']})"
            )
        for candidate in memory.consolidation_status(SESSION)["candidates"]:
            print(f"candidate: {candidate['candidate_id']} {candidate['title']!r} ({candidate['review_status']})")
            print(
                f"  review it: zaxy memory consolidation review {candidate['candidate_id']} -s {SESSION} "
                '--status accepted --rationale "matches the runbook"'
            )


if __name__ == "__main__":
    main()
