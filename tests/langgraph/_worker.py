"""Child process for the multi-worker test: one agent worker on the backend the environment names.

Phase 1 (runs at once): ``turns`` turns of a chat graph on its own thread and on the shared ``team`` thread
(several workers append checkpoints to that thread concurrently), one store item per turn in a shared
namespace. Then it prints ``written`` and waits for a line on stdin; phase 2 reports, as one JSON line, what it
sees now without reopening anything: every worker's items, the team thread's checkpoints, and a checkout.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore


def build(saver: ZaxyCheckpointer) -> Any:
    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"noted: {state['messages'][-1].content}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=saver)


def main(name: str, turns: int) -> None:
    with MemoryFabric.from_path() as fabric:
        saver, store = ZaxyCheckpointer(fabric), ZaxyStore(fabric)
        graph = build(saver)
        for turn in range(turns):
            for thread in (name, "team"):
                graph.invoke(
                    {"messages": [HumanMessage(f"{name} turn {turn}")]}, {"configurable": {"thread_id": thread}}
                )
            store.put(("team", "notes"), f"{name}-{turn}", {"text": f"{name} deployed build {turn} to staging"})
        print("written", flush=True)
        sys.stdin.readline()
        team = list(saver.list({"configurable": {"thread_id": "team"}}))
        own = saver.get_tuple({"configurable": {"thread_id": name}})
        packet = fabric.checkout("which builds were deployed to staging?", session=store.session, max_tokens=1500)
        report = {
            "items": sorted(item.key for item in store.search(("team", "notes"), limit=1000)),
            "team_checkpoints": len(team),
            "team_parents_known": all(
                t.parent_config is None
                or t.parent_config["configurable"]["checkpoint_id"]
                in {x.config["configurable"]["checkpoint_id"] for x in team}
                for t in team
            ),
            "own_messages": len(own.checkpoint["channel_values"]["messages"]) if own else 0,
            "checkout_mentions": sum(packet.prompt.count(f"w{n} deployed") for n in range(10)),
        }
        saver.close()
        store.close()
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
