"""Child process for the checkpointer crash test: run a graph turn after turn, printing each finished turn.

Writes are split into tiny pieces with pauses (``--chunked``), so a SIGKILL usually lands mid-event.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Annotated, Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from zaxy_agents.langgraph import ZaxyCheckpointer
from zaxy_agents.storage.files import jsonl_file


class State(TypedDict):
    messages: Annotated[list, add_messages]
    turns: int
    ballast: str


def reply(state: State) -> dict[str, Any]:
    turns = state.get("turns", 0) + 1
    return {"messages": [AIMessage(f"reply {turns}")], "turns": turns, "ballast": "b" * (2000 + turns)}


def build(saver: ZaxyCheckpointer) -> Any:
    builder = StateGraph(State)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=saver)


def _chunked_write(fd: int, data: bytes) -> None:
    for start in range(0, len(data), 64):
        os.write(fd, data[start : start + 64])
        time.sleep(0.00005)


def main() -> None:
    root = sys.argv[1]
    if "--chunked" in sys.argv:
        jsonl_file._write_all = _chunked_write
    graph = build(ZaxyCheckpointer.from_path(root))
    config = {"configurable": {"thread_id": "crash"}}
    while True:
        result = graph.invoke({"messages": [HumanMessage("next")]}, config)
        sys.stdout.write(f"{result['turns']}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
