"""A 10k-event checkout as ``ZaxyMemoryMiddleware`` asks it, two source trees on the SAME memory: lane cost A/B.

Seeds (once, kept in ``--folder``) a memory of ``--events`` events the way ``agent_memory_bench.py`` does (decisions,
tasks, facts, turns in one ``project`` session), then runs each tree in its own subprocess (``PYTHONPATH`` = the
tree) on a fresh copy of that memory, ``--runs`` times, alternating. Each child asks ``--turns`` checkouts with the
middleware's arguments (thread session, ``scope=["project"]``, 1,200 tokens) and appends one turn before each (as
the middleware's capture does, so the caches are as cold as in an agent turn). Reported per tree: thread CPU
milliseconds (mean and median; the process's CPU apart: background threads such as the graph follower's run
meanwhile) per checkout and per retrieval call (the lanes, ``Retriever.search``), wall p50, the ratios before / after,
whether every packet cites the same evidence and facts in the same order, and ``parts_cpu_ms``: the lanes' CPU per
checkout inside each function of ``PARTS`` (inclusive; the verbatim lane's pieces, the keyword index, the catalog
reads of every lane's hits, fusion, hydration from the log, the graph lanes), where the tree has that function.

Also reported: CPU and read system calls of the checkouts that follow the turn's commit; with ``--commit-split``
every other question follows no write, so the two figures differ by what a commit costs the checkout after it
(projecting the turn, the caches it drops: SQLite's page cache of every read connection, the catalog's entries it
touched). ``--after-reader`` runs the after tree's read connections with ``PRAGMA mmap_size`` or on the writer's
connection (whose page cache survives its own commits), to measure the page cache's share.

Usage: python benchmarks/checkout_lanes_bench.py --before /path/to/main-checkout [--after .] [--events 10000]
       [--turns 40] [--runs 2] [--folder DIR] [--commit-split] [--after-reader mmap:<bytes>|writer]
       [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.verbatim_ab_bench import _child  # one tree per subprocess, PYTHONPATH = the tree  # noqa: E402

_SEED = r"""
import sys
from benchmarks.agent_memory_bench import _seed
from zaxy_agents.fabric import MemoryFabric
with MemoryFabric.from_path(sys.argv[1]) as memory:
    _seed(memory, int(sys.argv[2]))
    memory.checkout("warm up", session="project", max_tokens=200)
"""

_TURNS = r"""
import importlib, json, os, sys, time
from zaxy_agents.fabric import MemoryFabric
variant = os.environ.get("LANES_BENCH_READER", "")
if variant:  # --after-reader: how the derived store's read connections read (this tree's code otherwise)
    from zaxy_agents.storage.derived import store
    if variant.startswith("mmap:"):  # SQLite maps the file: pages are not copied into each reader's cache
        size, connect = int(variant[5:]), store.DerivedStore._connect
        def mapped(self):
            connection = connect(self)
            connection.execute(f"PRAGMA mmap_size={size}")
            return connection
        store.DerivedStore._connect = mapped
    elif variant == "writer":  # every read on the writer's connection, whose page cache its own commits keep
        own = store.DerivedStore.reader  # (one thread only: what the single-threaded benchmark can show)
        store.DerivedStore.reader = lambda self: self._writer if self._writer is not None else own(self)
    else:
        raise SystemExit(f"unknown --after-reader {variant!r}")
def read_calls():  # read system calls of this thread so far (Linux; 0 elsewhere)
    try:
        with open("/proc/thread-self/io") as io:
            return int(next(line for line in io if line.startswith("syscr")).split()[1])
    except OSError:
        return 0
from zaxy_agents.retrieval import engine
lanes = [0.0]
search = engine.Retriever.search
def timed(self, *args, **kwargs):
    started = time.thread_time()
    try:
        return search(self, *args, **kwargs)
    finally:
        lanes[0] += time.thread_time() - started
engine.Retriever.search = timed
parts = {}
def wrap(label, module, owner, name):  # CPU inside one function (inclusive), where both trees have it
    try:
        holder = importlib.import_module(module)
        holder = getattr(holder, owner) if owner else holder
        function = getattr(holder, name)
    except (ImportError, AttributeError):
        return
    parts[label] = 0.0
    def inner(*args, **kwargs):
        started = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            parts[label] += time.thread_time() - started
    setattr(holder, name, inner)
for part in PARTS:
    wrap(*part)
folder, turns = sys.argv[1], int(sys.argv[2])
questions = [f"Which option did we pick for area {t % 97}, and who owns service {t % 53}?" for t in range(turns + 3)]
cpu, wall, packets, reads, process = [], [], [], [], []
split = os.environ.get("LANES_BENCH_SPLIT") == "1"
with MemoryFabric.from_path(folder) as memory:
    for turn, question in enumerate(questions):
        committed = not (split and turn % 2)  # --commit-split: every other question follows no write
        if committed:
            turn_event = {"type": "transcript.turn", "payload": {"role": "user", "text": question}}
            memory.append_many("langgraph.bench", [turn_event])
        if turn == 3:
            parts.update({label: 0.0 for label in parts})
        # thread CPU: the checkout runs in this thread; background threads (the graph follower's Kuzu commits, WAL
        # checkpoints) work on the other core meanwhile and are counted apart (process CPU)
        lanes_before, c0, t0, r0 = lanes[0], time.thread_time(), time.perf_counter(), read_calls()
        p0 = time.process_time()
        packet = memory.checkout(question, session="langgraph.bench", scope=["project"], max_tokens=1200)
        if turn >= 3:  # the first turns warm up (imports, tiktoken)
            wall.append((time.perf_counter() - t0) * 1000)
            cpu.append(((time.thread_time() - c0) * 1000, (lanes[0] - lanes_before) * 1000))
            process.append((time.process_time() - p0) * 1000)
            reads.append((committed, read_calls() - r0))
            # session/seq of what the packet cites (the appended turns' hashes differ from run to run)
            evidence = [e.citation.split("#")[0] for e in packet.evidence]
            packets.append([evidence, [f.citation.split("#")[0] for f in packet.current_facts]])
per_turn = {label: seconds * 1000 / turns for label, seconds in parts.items()}
print(json.dumps({"cpu": cpu, "wall": wall, "packets": packets, "parts": per_turn, "reads": reads, "process": process}))
"""

# Where the lanes' CPU goes (inclusive: a part holds the parts listed under it), per checkout. Label, module, class
# (or "" for a module function), function. The turns run them with these wrappers in both trees alike.
PARTS = [
    ("verbatim lane", "zaxy_agents.retrieval.verbatim", "VerbatimIndex", "search"),
    ("  verbatim: scoring the universe", "zaxy_agents.retrieval.verbatim_scoring", "Scorer", "score"),
    ("  verbatim: neighbour walk (+-4/8 links)", "zaxy_agents.retrieval.verbatim_search", "_Query", "_within"),
    ("  verbatim: postings read + decode", "zaxy_agents.retrieval.verbatim_search", "_Query", "_postings"),
    ("  verbatim: ranking (mask, order)", "zaxy_agents.retrieval.verbatim_search", "_Query", "_rank"),
    ("  verbatim: hits (doc rows, names)", "zaxy_agents.retrieval.verbatim_search", "_Query", "_hits"),
    ("keyword index (BM25 over versions)", "zaxy_agents.retrieval.entity_index", "EntityKeywordIndex", "search"),
    ("catalog: versions of keyword hits", "zaxy_agents.projection.sqlite_catalog", "SqliteCatalog", "versions"),
    (
        "catalog: where keyword hits are (version_sources)",
        "zaxy_agents.projection.sqlite_catalog",
        "SqliteCatalog",
        "version_sources",
    ),
    (
        "catalog: versions of every lane's events",
        "zaxy_agents.projection.sqlite_catalog",
        "SqliteCatalog",
        "events_versions",
    ),
    ("fusion: hit records (_hit)", "zaxy_agents.retrieval.engine", "Retriever", "_hit"),
    ("hydration: texts + hashes from the log", "zaxy_agents.retrieval.engine", "Retriever", "_read_texts"),
    ("check_cited: citations re-read from the log", "zaxy_agents.checkout.assemble", "", "check_cited"),
    ("check_cited: citations verified (CallReads.check)", "zaxy_agents.eventloom.integrity", "CallReads", "check"),
    ("graph: exact entity matches", "zaxy_agents.retrieval.engine", "", "exact_matches"),
    ("graph: traversal", "zaxy_agents.retrieval.engine", "", "traverse"),
    ("graph: personalized PageRank", "zaxy_agents.retrieval.engine", "", "personalized_pagerank"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=ROOT)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--folder", type=Path, default=None, help="keep (and reuse) the seeded memory here")
    parser.add_argument(
        "--after-reader",
        default="",
        help="run the after tree's read connections another way: 'mmap:<bytes>' (PRAGMA mmap_size) or 'writer' "
        "(every read on the writer's connection; single-threaded only); pass the same tree as --before to isolate it",
    )
    parser.add_argument(
        "--commit-split",
        action="store_true",
        help="append the turn before every other question only: the cost of the commit to the reads after it",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    scratch = tempfile.TemporaryDirectory(prefix="zaxy-checkout-lanes-")
    seeded = args.folder or Path(scratch.name) / "seeded"
    try:
        if not seeded.exists():
            _child(_SEED, args.before, str(seeded), str(args.events))
        results: dict[str, dict[str, list]] = {"before": {"cpu": [], "wall": []}, "after": {"cpu": [], "wall": []}}
        packets: dict[str, list] = {}
        for run in range(args.runs):
            for side, tree in (("before", args.before), ("after", args.after)):
                copy = Path(scratch.name) / f"{side}-{run}"
                shutil.copytree(seeded, copy)
                os.environ["LANES_BENCH_READER"] = args.after_reader if side == "after" else ""
                os.environ["LANES_BENCH_SPLIT"] = "1" if args.commit_split else ""
                out = json.loads(_child(f"PARTS = {PARTS!r}\n" + _TURNS, tree, str(copy), str(args.turns)))
                shutil.rmtree(copy)
                results[side]["cpu"] += out["cpu"]
                results[side]["wall"] += out["wall"]
                results[side].setdefault("process", []).extend(out["process"])
                for (committed, calls), (spent, _) in zip(out["reads"], out["cpu"], strict=True):
                    results[side].setdefault("split", {}).setdefault(committed, []).append((spent, calls))
                for label, ms in out["parts"].items():
                    results[side].setdefault("parts", {}).setdefault(label, []).append(ms)
                packets[side] = out["packets"]
        report: dict = {"events": args.events, "turns": args.turns, "runs": args.runs,
                        "identical_packets": packets["before"] == packets["after"]}  # fmt: skip
        for side in ("before", "after"):
            cpu, wall = results[side]["cpu"], sorted(results[side]["wall"])
            report[side] = {
                "checkout_cpu_ms": round(sum(c for c, _ in cpu) / len(cpu), 2),
                "lanes_cpu_ms": round(sum(lane for _, lane in cpu) / len(cpu), 2),
                # medians: a full garbage collection (~50-100 ms at 10k, every few dozen checkouts) moves the means
                "checkout_cpu_p50_ms": round(sorted(c for c, _ in cpu)[len(cpu) // 2], 2),
                "lanes_cpu_p50_ms": round(sorted(lane for _, lane in cpu)[len(cpu) // 2], 2),
                "checkout_wall_p50_ms": round(wall[len(wall) // 2], 2),
                "process_cpu_p50_ms": round(sorted(results[side]["process"])[len(results[side]["process"]) // 2], 2),
                # CPU and read system calls of the checkouts that follow a commit (the turn appended and projected)
                # and, with --commit-split, of those that follow none (a new question either way)
                **{
                    f"{'after_commit' if committed else 'no_commit'}_cpu_ms_reads": [
                        round(sum(c for c, _ in rows) / len(rows), 2),
                        round(sum(r for _, r in rows) / len(rows), 1),
                    ]
                    for committed, rows in sorted(results[side]["split"].items(), reverse=True)
                },
                "parts_cpu_ms": {label: round(sum(ms) / len(ms), 2) for label, ms in results[side]["parts"].items()},
            }
        for name in (
            "checkout_cpu_ms",
            "lanes_cpu_ms",
            "checkout_cpu_p50_ms",
            "lanes_cpu_p50_ms",
            "checkout_wall_p50_ms",
        ):
            report[f"ratio_{name}"] = round(report["before"][name] / max(report["after"][name], 1e-9), 2)
        print(json.dumps(report, indent=None if args.json else 2))
    finally:
        scratch.cleanup()


if __name__ == "__main__":
    main()
