"""What a LangGraph app stores and says becomes cited memory: retrieval and Memory Checkout surface it."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore


def test_store_items_and_transcript_turns_are_retrievable(fabric: MemoryFabric) -> None:
    store, saver = ZaxyStore(fabric), ZaxyCheckpointer(fabric)

    def chat(state: MessagesState) -> dict:
        return {"messages": [AIMessage("Noted: the deploy window is Tuesday 14:00 UTC.")]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    graph = builder.compile(checkpointer=saver, store=store)
    graph.invoke({"messages": [HumanMessage("When is the deploy window?")]}, {"configurable": {"thread_id": "ops"}})
    store.put(("prefs", "ana"), "colour", {"content": "Ana's favourite colour is teal"})
    put_citation = next(iter(fabric.replay(store.session))).citation

    assert put_citation in [hit.citation for hit in fabric.query("favourite colour teal", k=5).hits]

    packet = fabric.checkout("when is the deploy window?", session=saver.session_of("ops"))
    evidence = {item.text: item for item in packet.evidence}
    answer = evidence["Noted: the deploy window is Tuesday 14:00 UTC."]
    assert answer.event_type == "transcript.turn" and fabric.resolve(answer.citation).payload["thread_id"] == "ops"

    store.delete(("prefs", "ana"), "colour")  # deleted from the store: erased, not even in the history
    assert put_citation not in [hit.citation for hit in fabric.query("favourite colour teal", k=5).hits]
    superseded = fabric.query("favourite colour teal", k=5, include_superseded=True).hits
    assert put_citation not in [hit.citation for hit in superseded]
