"""Where a LoCoMo-size query's CPU goes, part by part, in one or more source trees.

Each tree runs in its own child (``PYTHONPATH`` = the tree): the LoCoMo dev six are ingested as ``zaxy benchmark
locomo`` does, 50 questions warm the process, then every question is asked once more while the functions below are
wrapped with a thread-CPU timer (only the outermost call of each counts). A part a tree does not have is left out,
so an older tree (the in-memory lane of 29d877e) and main can be read side by side: the time each spends in its
verbatim lane, reading hit texts back from the log, verifying hits, catalog reads and response models. The wrapper
adds the same small cost to every part in every tree; read differences, not absolute times.

Usage: python benchmarks/locomo_query_parts.py --tree /path/to/checkout [--tree .] [--runs 2] [--dataset PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

DATASET = "/work/shared/datasets/locomo/locomo_dev6.json"
# (module, attribute path, label): wrapped when the tree has it.
PARTS = [
    ("zaxy_agents.fabric", "MemoryFabric.query", "query (whole)"),
    ("zaxy_agents.projection.projector", "Projector.catch_up", "projection catch-up check"),
    ("zaxy_agents.retrieval.engine", "Retriever.search", "Retriever.search"),
    ("zaxy_agents.retrieval.verbatim", "VerbatimIndex.search", "  verbatim lane"),
    ("zaxy_agents.retrieval.verbatim", "VerbatimIndex.score", "    in-memory: score every document"),
    ("zaxy_agents.retrieval.verbatim_search", "_Query._terms", "    on-disk: query terms"),
    ("zaxy_agents.retrieval.verbatim_search", "_Query._postings", "    on-disk: posting reads"),
    ("zaxy_agents.retrieval.verbatim_search", "_Query._within", "    on-disk: neighbourhoods (hops)"),
    ("zaxy_agents.retrieval.verbatim_search", "_Query._rank", "    on-disk: scoring the candidates"),
    ("zaxy_agents.retrieval.verbatim_search", "_Query._hits", "    on-disk: hit records"),
    ("zaxy_agents.retrieval.engine", "exact_matches", "  exact lane (entity names)"),
    ("zaxy_agents.retrieval.engine", "Retriever._read_texts", "  hit texts read from the log"),
    ("zaxy_agents.retrieval.engine", "Retriever._hit", "  hit records (catalog)"),
    ("zaxy_agents.retrieval.engine", "Retriever._boost", "  boosts (salience, feedback)"),
    ("zaxy_agents.fabric.retrieval_ops", "RetrievalService._verified", "read-side verification of hits"),
    ("zaxy_agents.retrieval.models", "QueryResponse.from_result", "response models"),
]

_CHILD = r"""
import functools, importlib, inspect, json, sys, tempfile, time
from pathlib import Path
import zaxy_agents.evaluation.locomo as locomo
from zaxy_agents.evaluation.locomo_data import load_conversations
from zaxy_agents.fabric import MemoryFabric

parts, dataset = json.loads(sys.argv[1]), sys.argv[2]
totals, active = {}, set()

def wrap(function, label):
    @functools.wraps(function)
    def timed(*args, **named):
        if label in active:
            return function(*args, **named)
        active.add(label)
        started = time.thread_time()
        try:
            return function(*args, **named)
        finally:
            totals[label] += time.thread_time() - started
            active.discard(label)
    return timed

for module_name, path, label in parts:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError:
        continue
    owner_name, _, attr = path.rpartition(".")
    owner = getattr(module, owner_name, None) if owner_name else module
    if owner is None or not hasattr(owner, attr):
        continue
    raw = inspect.getattr_static(owner, attr)
    totals[label] = 0.0
    setattr(owner, attr, classmethod(wrap(raw.__func__, label)) if isinstance(raw, classmethod) else wrap(raw, label))

with tempfile.TemporaryDirectory() as scratch:
    with MemoryFabric.from_path(Path(scratch) / "loom", durability="batch") as fabric:
        asks = []
        for conversation in load_conversations(dataset):
            session = locomo.session_for(conversation.sample_id)
            locomo._ingest(fabric, session, conversation)
            if hasattr(locomo, "_commit_graph"):
                locomo._commit_graph(fabric)
            else:  # older trees flushed the graph writer here
                fabric.projector.flush(timeout=None)
            asks += [(question.text, session) for question in conversation.questions]
        for text, session in asks[:50]:
            fabric.query(text, sessions=[session], k=10, profile="balanced")
        totals = dict.fromkeys(totals, 0.0)
        for text, session in asks:
            fabric.query(text, sessions=[session], k=10, profile="balanced")
print(json.dumps({label: seconds / len(asks) * 1e3 for label, seconds in totals.items()}))
"""


def run_tree(tree: Path, dataset: str) -> dict[str, float]:
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    environment.pop("ZAXY_EMBEDDER", None)
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(PARTS), dataset],
        env=environment,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
    )
    if child.returncode != 0:
        raise SystemExit(f"{tree} failed (exit {child.returncode}):\n{child.stderr[-4000:]}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", required=True, help="a source tree (repeatable)")
    parser.add_argument("--runs", type=int, default=2, help="runs per tree, alternated")
    parser.add_argument("--dataset", default=DATASET)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.tree]
    runs: dict[str, list[dict[str, float]]] = {str(tree): [] for tree in trees}
    for _ in range(args.runs):
        for tree in trees:
            runs[str(tree)].append(run_tree(tree, args.dataset))
    if args.json:
        print(json.dumps(runs, indent=1))
        return
    print("thread CPU per query (ms), one column per run")
    for tree, results in runs.items():
        print(f"== {tree}")
        for _, _, label in PARTS:
            if label in results[0]:
                print(f"  {label:40s} " + "  ".join(f"{result[label]:6.2f}" for result in results))


if __name__ == "__main__":
    main()
