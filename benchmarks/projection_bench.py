"""Projection throughput on a realistic mixed event stream, against the log-append baseline of the same run.

Measures: (1) the baseline — appending the stream to the log in batches; (2) batched projection — catch-up of
the whole stream into the catalog and the Kuzu graph (time until the graph writer has committed everything);
(3) one-by-one — append one event, project it, wait for the graph commit, repeat; (4) a full rebuild
(`zaxy reproject`) of the stream.

Usage: python benchmarks/projection_bench.py [--events 100000] [--one-by-one 200] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from zaxy_agents.fabric import MemoryFabric


def mixed_stream(count: int, seed: int = 11) -> list[dict]:
    """Tasks, decisions, facts (with supersession), commands, file edits, turns, tool calls, unknown types."""
    rng = random.Random(seed)
    drafts = []
    for i in range(count):
        task = f"T-{rng.randrange(500)}"
        roll = rng.random()
        if roll < 0.25:
            drafts.append(
                {
                    "type": "transcript.turn",
                    "payload": {
                        "role": rng.choice(["user", "assistant"]),
                        "text": f"message {i} about {task} and retries",
                    },
                }
            )
        elif roll < 0.35:
            drafts.append({"type": "task.created", "payload": {"task_id": task, "title": f"work item {i}"}})
        elif roll < 0.42:
            drafts.append({"type": "task.completed", "payload": {"task_id": task}})
        elif roll < 0.50:
            drafts.append(
                {
                    "type": "decision.recorded",
                    "payload": {"decision": f"decision {i}", "topic": f"topic {i % 300}", "task_id": task},
                }
            )
        elif roll < 0.62:
            drafts.append(
                {
                    "type": "fact.asserted",
                    "payload": {"subject": f"service {i % 400}", "predicate": "port", "object": str(8000 + i)},
                }
            )
        elif roll < 0.74:
            drafts.append(
                {
                    "type": "command.completed",
                    "payload": {"command": f"pytest -k case{i}", "exit_code": i % 3 == 0, "task_id": task},
                }
            )
        elif roll < 0.84:
            drafts.append(
                {
                    "type": "file.edit.applied",
                    "payload": {"path": f"src/pkg/m{i % 800}.py", "operation": "edit", "task_id": task},
                }
            )
        elif roll < 0.94:
            drafts.append(
                {
                    "type": "tool.call.completed",
                    "payload": {
                        "tool": rng.choice(["grep", "read", "edit"]),
                        "argument_keys": ["path"],
                        "task_id": task,
                    },
                }
            )
        else:
            drafts.append({"type": "custom.metric", "payload": {"name": "latency", "value": i}})
    return drafts


def run(events: int, one_by_one: int) -> dict:
    stream = mixed_stream(events)
    results: dict = {"events": events}
    with tempfile.TemporaryDirectory(prefix="zaxy-proj-bench-") as tmp:
        root = Path(tmp) / "loom"
        with MemoryFabric.from_path(root, durability="batch") as fabric:
            start = time.perf_counter()
            for offset in range(0, events, 1000):
                fabric.append_many("bench", stream[offset : offset + 1000])
            append_seconds = time.perf_counter() - start
            results["baseline_log_append_events_per_s"] = events / append_seconds

            start = time.perf_counter()
            fabric.project()
            plan_seconds = time.perf_counter() - start
            fabric.projector.flush(timeout=None)
            batched_seconds = time.perf_counter() - start
            results["batched_projection_events_per_s"] = events / batched_seconds
            results["batched_in_memory_events_per_s"] = events / plan_seconds
            results["batched_vs_append_ratio"] = (
                results["batched_projection_events_per_s"] / results["baseline_log_append_events_per_s"]
            )
            status = fabric.memory_status()
            results["entities"], results["edges"] = status["entities"], status["edges"]

            start = time.perf_counter()
            digest = fabric.reproject()
            results["rebuild_seconds"] = time.perf_counter() - start
            results["rebuild_events_per_s"] = events / results["rebuild_seconds"]
            results["digest"] = digest

        with MemoryFabric.from_path(Path(tmp) / "single", durability="batch") as fabric:
            singles = mixed_stream(one_by_one, seed=5)
            start = time.perf_counter()
            for draft in singles:
                fabric.append("single", draft["type"], draft["payload"])
            append_only = time.perf_counter() - start
            fabric.project()
            fabric.projector.flush(timeout=None)
            start = time.perf_counter()
            for draft in singles:
                fabric.append("single", draft["type"], draft["payload"])
                fabric.project(["single"])
                fabric.projector.flush(timeout=None)
            elapsed = time.perf_counter() - start
            results["one_by_one_events_per_s"] = one_by_one / elapsed
            results["one_by_one_append_only_events_per_s"] = one_by_one / append_only
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--one-by-one", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = run(args.events, args.one_by_one)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for key, value in results.items():
            print(f"{key:42s} {value:,.2f}" if isinstance(value, float) else f"{key:42s} {value}")


if __name__ == "__main__":
    main()
