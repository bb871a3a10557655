"""An assistant for LangGraph's Agent Server whose threads, checkpoints and store items are Zaxy memory.

`langgraph dev` serves ``graph`` with the checkpointer and store named in langgraph.json. The assistant
remembers what a user asks it to ("Remember ..."), answers from those memories, and asks a human before it
deploys anything ("Deploy ..." pauses the run with an interrupt until the client resumes it).
"""

import os
import uuid

from langchain.chat_models import init_chat_model
from langchain_core.messages import AIMessage, SystemMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore
from langgraph.types import interrupt

from zaxy_agents.langgraph.scripted import ScriptedChatModel


def offline(messages):  # stand-in model (no key, no network): answers with the remembered lines
    remembered = [line[2:] for line in messages[0].text.splitlines() if line.startswith("- ")]
    return AIMessage("From memory: " + "; ".join(remembered) if remembered else "I don't know yet.")


name = os.environ.get("ZAXY_EXAMPLE_MODEL")  # e.g. openai:gpt-4o-mini
llm = init_chat_model(name) if name else ScriptedChatModel(policy=offline)


def assistant(state: MessagesState, config, *, store: BaseStore) -> dict:
    text = state["messages"][-1].text
    user = config["configurable"].get("user_id", "anonymous")
    if text.startswith("Remember "):
        store.put(("memories", user), str(uuid.uuid4()), {"content": text.removeprefix("Remember ")})
        return {"messages": [AIMessage("Noted.")]}
    if text.startswith("Deploy "):
        decision = interrupt({"action": text, "question": "Approve this deploy? (yes/no)"})
        done = f"Deployed {text.removeprefix('Deploy ')}." if decision == "yes" else "Deploy cancelled."
        return {"messages": [AIMessage(done)]}
    memories = "\n".join(f"- {item.value['content']}" for item in store.search(("memories", user), limit=20))
    system = SystemMessage(f"You are a helpful assistant. What you remember about the user:\n{memories}")
    return {"messages": [llm.invoke([system, *state["messages"]])]}


graph = StateGraph(MessagesState).add_node(assistant).add_edge(START, "assistant").compile()


if __name__ == "__main__":  # one offline turn without the server: python agent.py
    from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore

    with ZaxyCheckpointer.from_path() as saver, ZaxyStore.from_path() as items:
        local = StateGraph(MessagesState).add_node(assistant).add_edge(START, "assistant")
        app = local.compile(checkpointer=saver, store=items)
        config = {"configurable": {"thread_id": "local", "user_id": "ana"}}
        app.invoke({"messages": [("user", "Remember I deploy on Tuesdays")]}, config)
        print(app.invoke({"messages": [("user", "When do I deploy?")]}, config)["messages"][-1].text)
