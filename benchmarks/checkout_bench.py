"""Memory Checkout latency and recall at 1k / 10k / 100k events, against a naive baseline in the same run.

Baseline: plain BM25 over raw event text (the "just grep the log" approach), answering the same questions.
Questions ask for the *current* value of facts that were re-asserted several times (port of service N), so
recall counts whether the current fact's citation is in the packet; the baseline has no notion of current.

Prints: checkout p50/p95/p99 with and without max_tokens, baseline latency, recall@k for both, recall as a
function of max_tokens (a curve), and bootstrap latency.

Usage: python benchmarks/checkout_bench.py [--sizes 1000,10000,100000] [--questions 200] [--json]
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

from benchmarks.projection_bench import mixed_stream
from zaxy_agents.evaluation.bm25_baseline import PlainBM25
from zaxy_agents.fabric import MemoryFabric

BUDGETS = (128, 192, 256, 384, 512, 1024, 2048, 4096)


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    pick = lambda q: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)  # noqa: E731
    return {"p50_ms": pick(0.5), "p95_ms": pick(0.95), "p99_ms": pick(0.99)}


def run_size(size: int, questions: int) -> dict:
    stream = mixed_stream(size, seed=size)
    with (
        tempfile.TemporaryDirectory(prefix="zaxy-checkout-bench-") as tmp,
        MemoryFabric.from_path(Path(tmp) / "loom", durability="batch") as fabric,
    ):
        for offset in range(0, size, 1000):
            fabric.append_many("bench", stream[offset : offset + 1000])
        start = time.perf_counter()
        fabric.project()
        fabric.projector.flush(timeout=None)
        projection_seconds = time.perf_counter() - start
        catalog = fabric.projector.catalog
        services = sorted(
            key for key in catalog.type_keys("bench", "fact") if "service " in key and catalog.current(key) is not None
        )
        rng = random.Random(7)
        asked = rng.sample(services, min(questions, len(services)))
        baseline = PlainBM25()
        for event in fabric.log.replay_envelopes("bench"):
            baseline.add(f"{event['seq']}", json.dumps(event["payload"]))
        fabric.checkout("warm up", session="bench", max_tokens=512)

        plain, budgeted, base_times = [], [], []
        hits_ours = hits_base = 0
        curve = {budget: 0 for budget in BUDGETS}
        for key in asked:
            current = catalog.current(key)
            question = f"what port does {current.name.split(' port')[0]} use?"
            started = time.perf_counter()
            packet = fabric.checkout(question, session="bench")
            plain.append((time.perf_counter() - started) * 1000)
            hits_ours += current.citation in packet.prompt
            started = time.perf_counter()
            ranked = baseline.search(question, 10)
            base_times.append((time.perf_counter() - started) * 1000)
            hits_base += str(current.source_event_seq) in ranked
            for budget in BUDGETS:
                started = time.perf_counter()
                packet = fabric.checkout(question, session="bench", max_tokens=budget)
                if budget == 1024:
                    budgeted.append((time.perf_counter() - started) * 1000)
                curve[budget] += current.citation in packet.prompt
        # Multi-answer questions: everything currently known about one task (commands, edits, tool calls,
        # decisions linked to it). Recall = share of those citations present in the packet.
        tasks = sorted(catalog.type_keys("bench", "task"))[:40]
        task_curve = {budget: [] for budget in BUDGETS}
        for key in tasks:
            name = catalog.latest(key).name
            linked = {
                catalog.version(edge.target_id).citation
                for edge in catalog.out_edges(key)
                if catalog.is_current(edge.target_id)
            }
            if len(linked) < 3:
                continue
            for budget in BUDGETS:
                packet = fabric.checkout(f"what happened with task {name}?", session="bench", max_tokens=budget, k=20)
                task_curve[budget].append(sum(c in packet.prompt for c in linked) / len(linked))
        boots = []
        for _ in range(30):
            started = time.perf_counter()
            fabric.bootstrap("bench", max_tokens=1500)
            boots.append((time.perf_counter() - started) * 1000)
        return {
            "events": size,
            "questions": len(asked),
            "projection_seconds": round(projection_seconds, 2),
            "checkout": _percentiles(plain),
            "checkout_max_tokens_1024": _percentiles(budgeted),
            "baseline_bm25": _percentiles(base_times),
            "recall_current_fact_ours": round(hits_ours / len(asked), 3),
            "recall_current_fact_baseline_top10": round(hits_base / len(asked), 3),
            "recall_by_max_tokens": {str(b): round(curve[b] / len(asked), 3) for b in BUDGETS},
            "task_recall_by_max_tokens": {
                str(b): round(sum(v) / len(v), 3) if v else None for b, v in task_curve.items()
            },
            "bootstrap": _percentiles(boots),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [run_size(int(size), args.questions) for size in args.sizes.split(",")]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for result in results:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
