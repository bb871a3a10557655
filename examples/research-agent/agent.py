"""A research agent that is honest about what memory knows: it flags a contradiction between two sources, records
what it does not know, proposes a belief update for review, and answers a numeric question from a cited,
recorded synthesis.

``create_agent`` with Zaxy's memory tools (checkout, metacognition, belief updates, synthesis) on a session
``research`` whose recall scope also covers ``source-b``. Two sources disagree on the launch date; budget lines
are spread over several notes (one restated). The agent:

1. reads the claim's confidence (``memory_claim_confidence``): an unresolved conflict cluster;
2. records the question as a known unknown citing both sources (``memory_record_known_unknown``);
3. proposes the newer date as a belief update (``memory_propose_belief_update``): pending, non-authoritative;
4. checks memory out for the budget question (``memory_checkout``): the answer candidates come with their ids;
5. records the candidate it uses (``memory_synthesis_artifact``).

Then a reviewer disposes of the proposal (a disposition, never a promotion: the current facts do not change) and
a last checkout shows the reasoning primitives the agent called. Every call above is itself a
``reasoning.primitive.called`` observation.

Run it: ``python agent.py`` (offline, scripted model) or ``ZAXY_EXAMPLE_MODEL=openai:gpt-4o-mini python agent.py``.
"""

from __future__ import annotations

import json
import os
import re

from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import memory_tools
from zaxy_agents.langgraph.beliefs import BELIEF_TOOLS
from zaxy_agents.langgraph.metacognition import METACOGNITION_TOOLS
from zaxy_agents.langgraph.scripted import ScriptedChatModel
from zaxy_agents.langgraph.synthesis import SYNTHESIS_TOOLS

SESSION = "research"
OTHER = "source-b"
BUDGET = "How much is the launch budget in total?"
QUESTION = f"When is the launch? {BUDGET}"
SYSTEM_PROMPT = (
    "You are a careful researcher. Check the confidence of claims you rely on; when sources disagree, record a "
    "known unknown citing them and propose a belief update instead of picking one silently. For numbers, use the "
    "answer candidates memory_checkout composes and record the one you use with memory_synthesis_artifact."
)


def seed(memory: MemoryFabric) -> None:
    """What the sources said: two launch dates, and the budget lines (the venue line is restated)."""
    if memory.head(SESSION) is not None:
        return
    memory.append(SESSION, "fact.asserted", {"key": "launch date", "fact": "Launch is on March 3"})
    memory.append(OTHER, "fact.asserted", {"key": "launch date", "fact": "Launch is on April 9"})
    for text in (
        "Launch budget: the venue costs $12,000.",
        "Launch budget: catering costs $4,500.",
        "Launch budget: the venue costs $12,000, as agreed.",
        "Launch budget: printed banners cost $800.",
    ):
        memory.append(SESSION, "note.recorded", {"text": text})


def offline(messages):  # stand-in model (no key, no network): reads the tool results so far, picks the next call
    results = [m.text for m in messages if isinstance(m, ToolMessage)]
    step = len(results)
    if step == 0:
        return call("memory_claim_confidence", {"claim_key": "fact:launch date"})
    claim = json.loads(results[0])
    members = claim["conflict_cluster"]["members"]
    if step == 1:
        return call(
            "memory_record_known_unknown",
            {
                "question": "Is the launch on March 3 or on April 9?",
                "reason": "the two sources disagree and neither cites the other",
                "source_events": [member["citation"] for member in members],
                "claim_key": "fact:launch date",
                "priority": "high",
            },
        )
    newest = max(members, key=lambda member: member["valid_from"])
    if step == 2:
        return call(
            "memory_propose_belief_update",
            {
                "claim": newest["content"],
                "rationale": "source B is the more recent statement of the launch date",
                "confidence": 0.6,
                "citations": [newest["citation"]],
                "claim_key": "fact:launch date",
            },
        )
    if step == 3:
        return call("memory_checkout", {"query": BUDGET})
    candidate = re.search(r"(ans_[0-9a-f]{16}) rank 1 (\w+) = (\S+)", results[3])
    if step == 4:
        return call("memory_synthesis_artifact", {"query": BUDGET, "candidate": candidate.group(1), "outcome": "used"})
    proposal, artifact = json.loads(results[2]), json.loads(results[4])
    return AIMessage(
        f"The launch budget totals {candidate.group(3)} ({candidate.group(2)} of cited lines, the restated venue "
        f"line counted once; synthesis artifact {artifact['artifact_id']}). The launch date is a known unknown: "
        f"the sources disagree ({', '.join(m['content'] for m in members)}); I proposed "
        f"{proposal['proposal_id']} ({newest['content']!r}) for review rather than deciding."
    )


def call(name: str, args: dict) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


def main() -> None:
    name = os.environ.get("ZAXY_EXAMPLE_MODEL")  # e.g. openai:gpt-4o-mini
    llm = init_chat_model(name) if name else ScriptedChatModel(policy=offline)
    with MemoryFabric.from_path() as memory:  # ZAXY_EVENTLOOM_PATH, else ./.eventloom
        seed(memory)
        include = ["memory_checkout", *METACOGNITION_TOOLS, *BELIEF_TOOLS, *SYNTHESIS_TOOLS]
        tools = memory_tools(memory, session=SESSION, scope=[SESSION, OTHER], include=include)
        agent = create_agent(llm, tools, system_prompt=SYSTEM_PROMPT)
        state = agent.invoke({"messages": [HumanMessage(QUESTION)]})
        print("tools:", ", ".join(m.name for m in state["messages"] if isinstance(m, ToolMessage)))
        print("answer:", state["messages"][-1].text)
        for proposal in memory.belief_proposals(SESSION, status="pending")["items"]:
            review = memory.review_belief_update(
                SESSION, proposal["proposal_id"], status="deferred", rationale="ask the launch owner first"
            )
            print(f"review: {proposal['proposal_id']} {review['status']} (promoted: {review['promoted']})")
        packet = memory.checkout("When is the launch?", session=SESSION, scope=[SESSION, OTHER])
        print("current facts:", sorted(fact.summary for fact in packet.current_facts))
        print("answerability:", packet.quality.answerability)
        primitives = packet.diagnostics.model_dump()["reasoning_primitives"]
        print(
            "reasoning primitives:", json.dumps(primitives["phase_counts"]), json.dumps(primitives["primitive_counts"])
        )


if __name__ == "__main__":
    main()
