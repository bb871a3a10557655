"""A coding assistant with memory (create_agent + ZaxyMemoryMiddleware + ZaxyCheckpointer + ZaxyStore).

Run it: ``python agent.py`` (offline, scripted model) or ``ZAXY_EXAMPLE_MODEL=openai:gpt-4o-mini python agent.py``.
It shows: a decision and a task recorded as cited memory; files and test runs recorded by the tools; a long
session compacted with a cited recovery packet instead of a lossy summary; a new thread that still knows
what was decided and what is open, and cites it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from model import chat_model
from workspace_tools import workspace_tools

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyMemoryMiddleware, ZaxyStore

SYSTEM_PROMPT = (
    "You are a careful coding assistant. Record decisions and tasks with memory_append. When you rely on "
    "memory, cite its eventloom:// links."
)
COMPACT_AT = int(os.environ.get("ZAXY_EXAMPLE_COMPACT_AT", "2000"))  # tokens; real agents use far more


def build_agent(memory: MemoryFabric, workspace: Path):
    return create_agent(
        chat_model(),
        workspace_tools(memory, workspace),
        system_prompt=SYSTEM_PROMPT,
        middleware=[
            ZaxyMemoryMiddleware(
                memory,
                purpose="coding",
                scope=["langgraph.*", "langgraph-store"],  # every thread of this project, and the store
                compact_at=COMPACT_AT,
                keep_tokens=COMPACT_AT // 4,
                recovery_tokens=COMPACT_AT // 2,
            )
        ],
        checkpointer=ZaxyCheckpointer(memory),
        store=ZaxyStore(memory),
    )


def ask(agent, thread: str, text: str) -> dict:
    result = agent.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}})
    print(f"[{thread}] user: {text[:100]}")
    print(f"[{thread}] assistant: {result['messages'][-1].text}\n")
    return result


def main() -> None:
    workspace = Path(os.environ.get("CODING_WORKSPACE") or tempfile.mkdtemp(prefix="workspace-"))
    with MemoryFabric.from_path() as memory:  # ZAXY_EVENTLOOM_PATH, else ./.eventloom
        agent = build_agent(memory, workspace)

        ask(
            agent,
            "monday",
            "We are adding retries to the HTTP client. Track it as task T-1, and record the decision: "
            "exponential backoff with full jitter, at most 5 attempts.",
        )
        ask(agent, "monday", "Write the retry helper and its test, then run the tests.")
        ask(agent, "monday", "Remember that I prefer small pull requests.")
        for run in range(1, 6):  # a long session: pasted CI logs push the conversation over COMPACT_AT
            log = " ".join(f"step{n}: ok" for n in range(run * 100, run * 100 + 90))
            ask(agent, "monday", f"CI log of run {run}: {log}")
        result = ask(agent, "monday", "Where are we? List the open tasks, decisions, files and commands.")

        recovery = [m for m in result["messages"] if m.additional_kwargs.get("lc_source") == "zaxy_memory"]
        print("== after compaction the conversation holds", len(result["messages"]), "messages; recovery packet:")
        print(recovery[0].text if recovery else "(no compaction happened)")
        session = agent.checkpointer.session_of("monday")
        for event in memory.replay(session):
            if event.type == "transcript.compacted":
                print(
                    f"compaction recorded: {event.citation} ({event.payload['tokens_before']} -> "
                    f"{event.payload['tokens_after']} tokens)"
                )

        print("\n== a new thread")
        ask(
            agent,
            "tuesday",
            "What did we decide about retries, what is still open, and how do I like my pull requests?",
        )


if __name__ == "__main__":
    main()
