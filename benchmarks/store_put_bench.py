"""ZaxyStore put cost, two trees in the same run: what a change to the item store's write path costs a put.

Each run is a fresh process per tree (alternating): a new store, then ``--items`` puts in batches of 1,000 (one key
each) and 200 single durable puts; CPU and wall of each phase. ``--before TREE`` names the other checkout (e.g. the
session's start); the median of ``--runs`` per tree is printed with the after/before CPU ratio.

Usage: python benchmarks/store_put_bench.py --before /tmp/tree-s14-start [--items 10000] [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, tempfile, time
sys.path.insert(0, sys.argv[1])
from langgraph.store.base import PutOp
from zaxy_agents.langgraph import ZaxyStore
items = int(sys.argv[2])
with tempfile.TemporaryDirectory() as folder:
    with ZaxyStore.from_path(folder + "/loom") as store:
        store.put(("warm",), "w", {"text": "warm"})
        w, c = time.perf_counter(), time.process_time()
        for start in range(0, items, 1000):
            store.batch([PutOp(("bench", "u1"), f"k{j}", {"text": f"value number {j} " * 6})
                         for j in range(start, min(items, start + 1000))])
        batch = [time.perf_counter() - w, time.process_time() - c]
        w, c = time.perf_counter(), time.process_time()
        for j in range(200):
            store.put(("bench", "u2"), f"s{j}", {"text": f"single {j}"})
        single = [time.perf_counter() - w, time.process_time() - c]
print(json.dumps({"batch": batch, "single": single}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": Path(__file__).resolve().parents[1]}
    samples: dict[str, list[dict]] = {name: [] for name in trees}
    for _ in range(args.runs):
        for name, tree in trees.items():
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(tree), str(args.items)], capture_output=True, text=True, check=True
            ).stdout
            samples[name].append(json.loads(out.strip().splitlines()[-1]))
    medians = {
        name: {phase: [statistics.median(r[phase][i] for r in rows) for i in (0, 1)] for phase in ("batch", "single")}
        for name, rows in samples.items()
    }
    report = {"runs": samples, "medians": medians}
    report["cpu_ratio"] = {p: medians["after"][p][1] / medians["before"][p][1] for p in ("batch", "single")}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for name, phases in medians.items():
        batch, single = (f"{phases[p][0] * 1000:.0f}/{phases[p][1] * 1000:.0f} ms" for p in ("batch", "single"))
        print(f"{name:<7} batch of {args.items} puts wall/cpu {batch}; 200 single puts {single}")
    print(f"CPU after/before: batch {report['cpu_ratio']['batch']:.2f}x, single {report['cpu_ratio']['single']:.2f}x")


if __name__ == "__main__":
    main()
