"""LoCoMo before / after in one run: two source trees, the same questions, a paired bootstrap of the difference.

Each tree runs ``zaxy benchmark locomo``'s engine (``run_locomo``) in its own subprocess (``PYTHONPATH`` = the
tree), alternating ``--runs`` times so machine load hits both alike; per-question results are kept to compare
question by question. Reports per-category R@5 / R@10 for both, the number of questions whose recall moved, a
paired bootstrap 95% interval of the R@5 / R@10 difference (categories 1-4), and query latency / ingest rate.

Usage: python benchmarks/locomo_compare.py --before /path/to/main-checkout --after . [--dataset PATH]
       [--embedder wordllama] [--before-embedder none] [--after-embedder e5-words] [--runs 1] [--json]
One tree, two configurations: ``--before . --after . --before-embedder none --after-embedder e5-words``
(``none`` = no embedder; each side defaults to ``--embedder``). Rankings independent of string hashing:
``--before . --after . --before-hash-seed 1 --after-hash-seed 2`` must report every ranking identical.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

DATASET = "/work/shared/datasets/locomo/locomo_dev6.json"
_CHILD = """
import json, sys, time
import zaxy_agents.evaluation.locomo as locomo
captured = {}
report_of = locomo._report
def keep(conversations, records, *rest, **named):
    captured["records"] = records
    return report_of(conversations, records, *rest, **named)
locomo._report = keep
# The harness times every query and ingest itself, the same way in every tree (older trees report no CPU time).
timed = {"query_ms": [], "query_thread_cpu_ms": [], "query_process_cpu_ms": [], "ingest": [0.0, 0.0]}
query_of, ingest_of = locomo.MemoryFabric.query, locomo._ingest
def query(*args, **named):
    wall, thread, process = time.perf_counter(), time.thread_time(), time.process_time()
    try:
        return query_of(*args, **named)
    finally:
        timed["query_ms"].append((time.perf_counter() - wall) * 1e3)
        timed["query_thread_cpu_ms"].append((time.thread_time() - thread) * 1e3)
        timed["query_process_cpu_ms"].append((time.process_time() - process) * 1e3)
def ingest(*args, **named):
    wall, process = time.perf_counter(), time.process_time()
    try:
        return ingest_of(*args, **named)
    finally:
        timed["ingest"][0] += time.perf_counter() - wall
        timed["ingest"][1] += time.process_time() - process
locomo.MemoryFabric.query, locomo._ingest = query, ingest
report = locomo.run_locomo(sys.argv[1])
report["records"] = captured["records"]
report["harness"] = timed
json.dump(report, open(sys.argv[2], "w"))
"""


def run_tree(tree: Path, dataset: str, embedder: str | None, hash_seed: str | None = None) -> dict:
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    environment.pop("ZAXY_EMBEDDER", None)
    if hash_seed is not None:  # string hashing per side: rankings must not depend on it
        environment["PYTHONHASHSEED"] = hash_seed
    if embedder and embedder != "none":
        environment["ZAXY_EMBEDDER"] = embedder
    with tempfile.NamedTemporaryFile(suffix=".json") as output:
        child = subprocess.run([sys.executable, "-c", _CHILD, dataset, output.name], env=environment,
                               cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)  # fmt: skip
        if child.returncode != 0:
            raise SystemExit(f"the LoCoMo run of {tree} failed (exit {child.returncode}):\n{child.stderr[-4000:]}")
        return json.loads(Path(output.name).read_text())


def _recall(record: dict, k: int) -> float:
    top = set(record["ours"][:k])
    return sum(1 for gold in record["gold"] if gold in top) / len(record["gold"])


def bootstrap(deltas: list[float], rounds: int = 10_000, seed: int = 5) -> tuple[float, float]:
    rng = random.Random(seed)
    size = len(deltas)
    means = sorted(statistics.fmean(rng.choices(deltas, k=size)) for _ in range(rounds))
    return round(means[int(0.025 * rounds)], 4), round(means[int(0.975 * rounds)], 4)


def compare(before: dict, after: dict) -> dict:
    rows_before, rows_after = before["records"], after["records"]
    assert len(rows_before) == len(rows_after), "both runs must ask the same questions"
    out: dict = {"questions": len(rows_before), "per_category": {}}
    categories = sorted({row["category"] for row in rows_before})
    for category in [*categories, "1-4"]:
        pairs = [
            (b, a)
            for b, a in zip(rows_before, rows_after, strict=True)
            if (b["category"] in (1, 2, 3, 4) if category == "1-4" else b["category"] == category)
        ]
        entry = {"questions": len(pairs)}
        for k in (5, 10):
            deltas = [_recall(a, k) - _recall(b, k) for b, a in pairs]
            entry[f"R@{k}"] = {
                "before": round(statistics.fmean(_recall(b, k) for b, _ in pairs), 4),
                "after": round(statistics.fmean(_recall(a, k) for _, a in pairs), 4),
                "better": sum(d > 0 for d in deltas),
                "worse": sum(d < 0 for d in deltas),
            }
            if category == "1-4":
                entry[f"R@{k}"]["bootstrap_95"] = bootstrap(deltas)
        out["per_category"][str(category)] = entry
    out["identical_rankings"] = sum(b["ours"] == a["ours"] for b, a in zip(rows_before, rows_after, strict=True))
    out["latency_ms"] = {"before": before["latency_ms"], "after": after["latency_ms"]}
    out["query_cpu_ms"] = {"before": before.get("query_cpu_ms"), "after": after.get("query_cpu_ms")}
    out["ingest_turns_per_s"] = {"before": before["ingest"]["turns_per_s"], "after": after["ingest"]["turns_per_s"]}
    out["harness"] = {"before": _harness(before), "after": _harness(after)}
    out["reports"] = {"before": _summary(before), "after": _summary(after)}
    return out


def _harness(report: dict) -> dict:
    """The child's own timing of every query (wall, the querying thread's CPU, the process's CPU) and of the
    ingest (wall and process CPU), identical in every tree: p50 / p95 in ms, ingest turns per second."""
    timed, turns = report["harness"], report["turns"]

    def percentiles(values: list[float]) -> dict:  # the pick run_locomo's own figures use
        ordered = sorted(values)
        return {
            q: round(ordered[min(len(ordered) - 1, int(f * len(ordered)))], 2) for q, f in (("p50", 0.5), ("p95", 0.95))
        }

    wall, cpu = timed["ingest"]
    return {
        "query_ms": percentiles(timed["query_ms"]),
        "query_thread_cpu_ms": percentiles(timed["query_thread_cpu_ms"]),
        "query_process_cpu_ms": percentiles(timed["query_process_cpu_ms"]),
        "ingest_turns_per_s": round(turns / wall, 1),
        "ingest_turns_per_cpu_s": round(turns / cpu, 1),
    }


def _summary(report: dict) -> dict:
    """Each run's own figures: ours and the same-run BM25 baselines (categories 1-4 and adversarial), per category
    R@10, session-level recall where the tree reports it, latency and both ingest rates."""
    combined, adversarial = report["categories_1_4"], report["category_5_adversarial"]
    return {
        "categories_1_4": {"ours": combined["ours"], **combined.get("baselines", {})},
        "adversarial": {"ours": adversarial["ours"], **adversarial.get("baselines", {})},
        "per_category_r10": {name: row["ours"].get("recall@10") for name, row in report["per_category"].items()},
        "latency_ms": report["latency_ms"],
        "query_cpu_ms": report.get("query_cpu_ms"),
        "ingest": report["ingest"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--dataset", default=DATASET)
    parser.add_argument("--embedder", default=None)
    parser.add_argument("--before-embedder", default=None, help="the before side's embedder ('none': no embedder)")
    parser.add_argument("--after-embedder", default=None, help="the after side's embedder ('none': no embedder)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--before-hash-seed", default=None, help="PYTHONHASHSEED of the before side's process")
    parser.add_argument("--after-hash-seed", default=None, help="PYTHONHASHSEED of the after side's process")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = []
    for _ in range(args.runs):
        before = run_tree(
            args.before.resolve(), args.dataset, args.before_embedder or args.embedder, args.before_hash_seed
        )
        after = run_tree(args.after.resolve(), args.dataset, args.after_embedder or args.embedder, args.after_hash_seed)
        results.append(compare(before, after))
    print(json.dumps(results if args.runs > 1 else results[0], indent=None if args.json else 1))


if __name__ == "__main__":
    main()
