"""A research / notes agent: answers from ingested documents with citations and records which sources helped.

A plain LangGraph ``StateGraph`` with the memory nodes: checkout -> model -> capture -> feedback. Run it:
``python agent.py`` (offline, scripted model) or ``ZAXY_EXAMPLE_MODEL=openai:gpt-4o-mini python agent.py``.
"""

from __future__ import annotations

from pathlib import Path

from ingest import ingest
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, StateGraph
from model import chat_model

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer
from zaxy_agents.langgraph.nodes import (
    ZaxyMemoryState,
    capture_node,
    checkout_node,
    feedback_node,
    with_memory,
)

LIBRARY = "research-library"  # the session holding the document chunks
SYSTEM_PROMPT = "Answer only from the notes in memory and cite the eventloom:// link of every section you use."


def build_graph(memory: MemoryFabric):
    llm = chat_model()

    def answer(state: ZaxyMemoryState) -> dict:
        return {"messages": [llm.invoke(with_memory(state, SYSTEM_PROMPT))]}

    builder = StateGraph(ZaxyMemoryState)
    builder.add_node("checkout", checkout_node(memory, purpose="research", scope=[LIBRARY], max_tokens=900))
    builder.add_node("answer", answer)
    builder.add_node("capture", capture_node(memory))
    builder.add_node("feedback", feedback_node(memory, scope=[LIBRARY]))
    builder.add_edge(START, "checkout")
    builder.add_edge("checkout", "answer")
    builder.add_edge("answer", "capture")
    builder.add_edge("capture", "feedback")
    builder.add_edge("feedback", END)
    return builder.compile(checkpointer=ZaxyCheckpointer(memory))


def main() -> None:
    with MemoryFabric.from_path() as memory:  # ZAXY_EVENTLOOM_PATH, else ./.eventloom
        added = ingest(memory, Path(__file__).parent / "notes", LIBRARY)
        print(f"ingested {added} new sections into session {LIBRARY}\n")
        graph = build_graph(memory)
        config = {"configurable": {"thread_id": "research"}}
        for question in (
            "What backoff strategy does the retry guide recommend?",
            "How long are audit logs kept?",
            "Who is on call for the billing service this week?",
        ):
            result = graph.invoke({"messages": [HumanMessage(question)]}, config)
            print(f"Q: {question}")
            print(f"A: {result['messages'][-1].text}")
            print(f"   (memory answerability: {result['memory_context']['answerability']})\n")

        print("feedback recorded (sources that were used):")
        for event in memory.replay(LIBRARY):
            if event.type == "memory.reinforced":
                print(f"  {event.payload['entity_name']} <- {event.payload['citation']}")


if __name__ == "__main__":
    main()
