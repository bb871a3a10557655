"""Drive the running server with the LangGraph SDK: `langgraph dev` in one terminal, `python client.py` in another."""

import os

from langgraph_sdk import get_sync_client

client = get_sync_client(url=os.environ.get("LANGGRAPH_URL", "http://127.0.0.1:2024"))
thread = client.threads.create()
config = {"configurable": {"user_id": "ana"}}


def say(text: str) -> dict:
    return client.runs.wait(thread["thread_id"], "assistant", input={"messages": [("user", text)]}, config=config)


say("Remember I deploy on Tuesdays")
print(say("When do I deploy?")["messages"][-1]["content"])  # From memory: I deploy on Tuesdays
paused = say("Deploy the billing service")  # stops at the interrupt: a human must approve
print(client.threads.get_state(thread["thread_id"])["tasks"][0]["interrupts"][0]["value"]["question"])
resumed = client.runs.wait(thread["thread_id"], "assistant", command={"resume": "yes"}, config=config)
print(resumed["messages"][-1]["content"])  # Deployed the billing service.
print([item["value"] for item in client.store.search_items(["memories", "ana"])["items"]])
