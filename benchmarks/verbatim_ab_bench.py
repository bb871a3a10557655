"""Verbatim-lane queries of two source trees on the SAME index files, alternated: a same-run before / after.

Builds (once, kept in ``--folder``) a verbatim index of ``--events`` LoCoMo-replayed events
(benchmarks/locomo_corpus.py, as ``retrieval_index_bench.py`` does), then runs each tree in its own subprocess
(``PYTHONPATH`` = the tree; the index layout must be the same in both) ``--runs`` times, alternating, asking
``--queries`` LoCoMo questions of the whole memory (k=10 and k=50, the engine's depth) and of one session (k=10).
Reports, per tree, wall p50 / p95 and CPU milliseconds per query (CPU time is what a loaded machine does not
inflate), the ratios before / after, and whether every ranking (docs and scores) is identical.

With ``--per-tree`` (two trees of different index layouts, whose versions would make one tree rebuild the other's
tables), each tree builds its own index of the same events (``<folder>/before``, ``<folder>/after``) and queries it.

Usage: python benchmarks/verbatim_ab_bench.py --before /path/to/main-checkout [--after .] [--events 100000]
       [--queries 60] [--runs 2] [--folder DIR] [--per-tree] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_BUILD = r"""
import sys, time
from benchmarks.locomo_corpus import Corpus
from benchmarks.retrieval_index_bench import BATCH, _Batch, _chunks
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.verbatim import VerbatimIndex
listeners = open_standalone(sys.argv[1], VerbatimIndex())
for chunk in _chunks(Corpus.load().documents(int(sys.argv[2])), BATCH):
    listeners.on_batch(_Batch(chunk), None)
listeners.close()
"""

_QUERY = r"""
import json, sys, time
from benchmarks.locomo_corpus import Corpus
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.verbatim import VerbatimIndex
folder, events, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
questions = Corpus.load().questions(events, count)
index = VerbatimIndex()
listeners = open_standalone(folder, index)
for question, session in questions[:10]:  # warm the page cache and the feature blocks alike for both trees
    index.search(question, 10)
report, rankings = {}, []
for name, k, scoped in (("whole_k10", 10, False), ("whole_k50", 50, False), ("session_k10", 10, True)):
    samples, cpu = [], time.process_time()
    for question, session in questions:
        started = time.perf_counter()
        hits = index.search(question, k, sessions=[session] if scoped else None)
        samples.append((time.perf_counter() - started) * 1000)
        rankings.append([(h.session, h.seq, round(h.score, 9)) for h in hits])
    report[name] = {"samples": samples, "cpu_ms": (time.process_time() - cpu) * 1000 / len(questions)}
listeners.close()
print(json.dumps({"report": report, "rankings": rankings}))
"""


def _child(code: str, tree: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore"}
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=tree, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"{tree}: {result.stderr[-3000:]}")
    return result.stdout


def _pick(ordered: list[float], share: float) -> float:
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=ROOT)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--folder", type=Path, default=None, help="keep (and reuse) the index here")
    parser.add_argument("--per-tree", action="store_true", help="each tree builds and queries its own index")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    scratch = None if args.folder else tempfile.TemporaryDirectory(prefix="zaxy-verbatim-ab-")
    folder = args.folder or Path(scratch.name)  # type: ignore[union-attr]
    try:
        trees = {"before": args.before, "after": args.after}
        folders = {side: folder / side if args.per_tree else folder for side in trees}
        for side in trees if args.per_tree else ("before",):
            if not (folders[side] / "derived.sqlite").exists():
                folders[side].mkdir(parents=True, exist_ok=True)
                _child(_BUILD, trees[side], str(folders[side]), str(args.events))
        samples: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
        cpu: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
        rankings: dict[str, list] = {}
        for _ in range(args.runs):
            for side, tree in trees.items():
                out = json.loads(_child(_QUERY, tree, str(folders[side]), str(args.events), str(args.queries)))
                rankings[side] = out["rankings"]
                for name, found in out["report"].items():
                    samples[side].setdefault(name, []).extend(found["samples"])
                    cpu[side].setdefault(name, []).append(found["cpu_ms"])
        report: dict = {"events": args.events, "queries": args.queries, "runs": args.runs,
                        "identical_rankings": rankings["before"] == rankings["after"]}  # fmt: skip
        for name in samples["before"]:
            row = {}
            for side in ("before", "after"):
                ordered = sorted(samples[side][name])
                row[side] = {"p50_ms": _pick(ordered, 0.5), "p95_ms": _pick(ordered, 0.95),
                             "cpu_ms_per_query": round(sum(cpu[side][name]) / len(cpu[side][name]), 2)}  # fmt: skip
            row["ratio_p50"] = round(row["before"]["p50_ms"] / max(row["after"]["p50_ms"], 1e-9), 2)
            row["ratio_p95"] = round(row["before"]["p95_ms"] / max(row["after"]["p95_ms"], 1e-9), 2)
            row["ratio_cpu"] = round(row["before"]["cpu_ms_per_query"] / max(row["after"]["cpu_ms_per_query"], 1e-9), 2)
            report[name] = row
        print(json.dumps(report, indent=None if args.json else 2))
    finally:
        if scratch is not None:
            scratch.cleanup()


if __name__ == "__main__":
    main()
