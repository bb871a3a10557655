"""The projection of a LangGraph thread's log, one append at a time: what each middleware turn projects.

A ``create_agent`` with ``ZaxyCheckpointer`` and ``ZaxyMemoryMiddleware`` runs ``--turns`` turns over a seeded
memory; its thread's log (per turn: 3 ``checkpoint.saved``, 2 ``checkpoint.writes``, 1 ``metacognition.checkout``,
2 ``transcript.turn``) is then written into a fresh memory append by append (a multi-event append as one), and
each ``project([thread])`` is timed in thread CPU. Most of those events produce nothing but their Event rows (see
``ExtractorTable.produces_nothing``). Compare two builds by running this file from each tree, alternated.

Usage: python benchmarks/turn_projection_bench.py [--turns 150] [--seed-events 2000] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage

from benchmarks.agent_memory_bench import _seed
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyMemoryMiddleware
from zaxy_agents.langgraph.scripted import ScriptedChatModel

THREAD = "langgraph.bench"


def _thread_appends(turns: int, seed_events: int) -> list[bytes]:
    """The thread's log as the appends that wrote it (a multi-event append carries ``batch: [position, size]``)."""
    model = ScriptedChatModel(policy=lambda messages: AIMessage("Noted; continuing with the plan."))
    root = Path(tempfile.mkdtemp())
    with MemoryFabric.from_path(root) as memory:
        _seed(memory, seed_events)
        agent = create_agent(
            model,
            [],
            middleware=[ZaxyMemoryMiddleware(memory, scope=["project"])],
            checkpointer=ZaxyCheckpointer(memory),
        )
        for turn in range(turns):
            text = f"Which option did we pick for area {turn % 97}?"
            agent.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": "bench"}})
    appends: list[bytes] = []
    pending: list[bytes] = []
    for line in (root / f"{THREAD}.jsonl").read_bytes().splitlines(keepends=True):
        pending.append(line)
        marker = json.loads(line).get("batch")
        if marker is None or marker[0] >= marker[1]:
            appends.append(b"".join(pending))
            pending = []
    return appends


def bench(turns: int, seed_events: int) -> dict[str, float]:
    appends = _thread_appends(turns, seed_events)
    events = sum(chunk.count(b"\n") for chunk in appends)
    root = Path(tempfile.mkdtemp())
    spent = 0.0
    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as memory:
        path = root / f"{THREAD}.jsonl"
        for chunk in appends:
            with open(path, "ab") as handle:  # the writer's append, seen by this reader
                handle.write(chunk)
            started = time.thread_time()
            memory.project([THREAD])
            spent += time.thread_time() - started
    return {
        "events": events,
        "appends": len(appends),
        "thread_cpu_ms_per_event": spent / events * 1e3,
        "thread_cpu_ms_per_8_events": spent / events * 8e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=150)
    parser.add_argument("--seed-events", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = bench(args.turns, args.seed_events)
    if args.json:
        print(json.dumps(report))
        return
    print(
        f"{report['events']} thread events in {report['appends']} appends: projection thread CPU "
        f"{report['thread_cpu_ms_per_event']:.3f} ms per event ({report['thread_cpu_ms_per_8_events']:.2f} ms per 8)"
    )


if __name__ == "__main__":
    main()
