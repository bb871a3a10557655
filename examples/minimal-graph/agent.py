"""Add memory to an existing LangGraph graph: two nodes, and ``with_memory`` in your model node."""

import os

from langchain.chat_models import init_chat_model
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, StateGraph

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph.nodes import ZaxyMemoryState, capture_node, checkout_node, with_memory
from zaxy_agents.langgraph.scripted import ScriptedChatModel


def offline(messages):  # stand-in model (no key, no network): replies with the first cited memory line
    return AIMessage(next((line for line in messages[0].text.splitlines() if "eventloom://" in line), "Noted."))


name = os.environ.get("ZAXY_EXAMPLE_MODEL")  # e.g. openai:gpt-4o-mini
llm = init_chat_model(name) if name else ScriptedChatModel(policy=offline)
memory = MemoryFabric.from_path()  # ZAXY_EVENTLOOM_PATH, else ./.eventloom


def model(state: ZaxyMemoryState) -> dict:  # your model node: the one change is with_memory(...)
    return {"messages": [llm.invoke(with_memory(state, "You are a helpful ops assistant."))]}


builder = StateGraph(ZaxyMemoryState)  # MessagesState + memory_context
builder.add_node("checkout", checkout_node(memory, scope=["langgraph.*"]))  # recall from every thread
builder.add_node("model", model)
builder.add_node("capture", capture_node(memory))  # record the turns as cited memory
graph = builder.add_edge(START, "checkout").add_edge("checkout", "model").add_edge("model", "capture").compile()

for thread, text in [("a", "Our staging database is db-staging-2."), ("b", "Which host is the staging database?")]:
    reply = graph.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}})
print(reply["messages"][-1].text)
memory.close()
