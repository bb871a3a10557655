"""Erase cost against memory size: erasing one session of a fixed size in a small and a large memory.

Builds a memory of ``size`` events (sessions of ``--session-events`` events each, the realistic mixed stream of
``projection_bench``), projects it (catalog, retrieval indexes, vectors) and uses the graph once (so the graph file
exists, as in a memory that answered a traversal), plants an SSN in one session, then times
``MemoryFabric.erase_session`` of that session. The erased scope is the same at every size, so a cost that grows
with the scope only gives a ratio near 1 between sizes; one that rebuilds the whole memory grows with it.
After each erase it checks that the SSN is in no file of the memory folder.

``--parts store,chat`` measures deletes against one session's history instead (issue 24: a delete's cost must
follow what it erases, not the history): a ZaxyStore whose item-store session holds ``H`` puts (one key each), then
one ``store.batch`` of 100 deletes (``PutOp(ns, key, None)``) of keys spread over the history; and a chat session of
``H`` transcript turns of two speakers, then one ``erase_events`` of 100 turns spread over it (from the third
turn on: erasing a speaker's first turn re-plans the session, see docs/derived-state.md). Each (tree, part, H) runs
in a fresh process; the CPU and wall time of the batch are split into its parts by timing the library's own methods from
outside (so an older tree is measured the same way): ``locate`` (finding the keys' seqs: ``erase_store_items``
minus ``erase_events``), ``record`` (the erasure record and reading the targets: ``erase_events`` minus the
scrub and the derived erase), ``scrub`` (the log rewrite, ``EventLog.scrub``) and ``derived`` (``_erase_derived``:
the projection's ``Projector.erase``, caches, hooks; ``projector`` is its ``Projector.erase`` share). The named
baseline is SqliteStore's delete of the same 100 keys after the same ``H`` puts, in the same process. ``--before
TREE`` runs the same parts on another checkout (alternating trees run by run) for same-run ratios.

Usage: python benchmarks/erase_bench.py [--sizes 2000,20000] [--session-events 200] [--repeats 2] [--json]
       python benchmarks/erase_bench.py --parts store,chat [--history 5000,20000,50000] [--runs 1]
       [--before /tmp/tree-s14-start] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.projection_bench import mixed_stream
from zaxy_agents.fabric import MemoryFabric

SSN = "078-05-1120"


def _files_with(root: Path, needle: bytes) -> list[str]:
    return [str(p) for p in sorted(root.rglob("*")) if p.is_file() and needle in p.read_bytes()]


def measure(size: int, session_events: int, repeats: int) -> dict:
    """Median seconds of ``erase_session`` of one ``session_events``-event session in a ``size``-event memory."""
    stream = mixed_stream(size, seed=size)
    timings, graph_seconds = [], []
    with tempfile.TemporaryDirectory(prefix="zaxy-erase-bench-") as tmp:
        root = Path(tmp) / "loom"
        with MemoryFabric.from_path(root, durability="batch") as fabric:
            sessions = [f"s{n:04d}" for n in range(size // session_events)]
            for n, session in enumerate(sessions):
                fabric.append_many(session, stream[n * session_events : (n + 1) * session_events])
            fabric.project()
            fabric.projector.flush(timeout=None)
            _ = fabric.projector.store  # the graph is materialised and current
            for repeat in range(repeats):
                victim = sessions[repeat]
                fabric.append_many(
                    victim,
                    [
                        {"type": "transcript.turn", "payload": {"role": "user", "text": f"my SSN is {SSN}"}},
                        {"type": "fact.asserted", "payload": {"subject": "dana", "predicate": "ssn", "object": SSN}},
                    ],
                )
                fabric.project()
                fabric.projector.flush(timeout=None)
                assert fabric.query(SSN, sessions=[victim]), "the planted SSN was not indexed"
                start = time.perf_counter()
                fabric.erase_session(victim, actor="bench", reason="benchmark")
                timings.append(time.perf_counter() - start)
                leftovers = _files_with(root, SSN.encode())
                assert not leftovers, f"erase left the SSN in {leftovers}"
                start = time.perf_counter()
                _ = fabric.projector.store  # the graph's next use (deferred work, if any, shows here)
                graph_seconds.append(time.perf_counter() - start)
    return {
        "memory_events": size,
        "erased_events": session_events + 2,
        "erase_seconds": statistics.median(timings),
        "erase_seconds_all": timings,
        "next_graph_use_seconds": statistics.median(graph_seconds),
    }


DELETES = 100  # one batch of deletes (``--parts store,chat``)

# One (part, H) measurement in a fresh process of one tree: sys.argv = [tree, part, history, folder].
CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
part, history, folder = sys.argv[2], int(sys.argv[3]), sys.argv[4]
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.fabric.erase_ops import EraseService
from zaxy_agents.projection.projector import Projector
spent = {}
def timed(owner, name, label):
    original = getattr(owner, name)
    def wrapper(*args, **kwargs):
        w, c = time.perf_counter(), time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            row = spent.setdefault(label, [0.0, 0.0])
            row[0] += time.perf_counter() - w
            row[1] += time.process_time() - c
    setattr(owner, name, wrapper)
timed(MemoryFabric, "erase_store_items", "store_items")  # the fabric forwards to the service's functions
timed(MemoryFabric, "erase_events", "events")
timed(EraseService, "erase_events", "events")  # (erase_store_items calls it on the service)
timed(EraseService, "_erase_derived", "derived")
timed(Projector, "erase", "projector")
victims = [n * (history // DELETES) for n in range(DELETES)]
fabric = MemoryFabric.from_path(folder + "/loom")
timed(type(fabric.log), "scrub", "scrub")
result = {}
if part == "store":
    from langgraph.store.base import PutOp
    from langgraph.store.sqlite import SqliteStore
    from zaxy_agents.langgraph import ZaxyStore
    import sqlite3
    value = lambda j: {"text": f"value number {j} of the benchmark's store " * 6}
    store = ZaxyStore(fabric)
    baseline = SqliteStore(sqlite3.connect(folder + "/sqlite-store.db", check_same_thread=False, isolation_level=None))
    baseline.setup()
    for start in range(0, history, 1000):
        ops = [PutOp(("bench", "u1"), f"k{j}", value(j)) for j in range(start, min(history, start + 1000))]
        store.batch(ops)
        baseline.batch(ops)
    fabric.project()
    deletes = [PutOp(("bench", "u1"), f"k{j}", None) for j in victims]
    w, c = time.perf_counter(), time.process_time()
    baseline.batch(deletes)
    result["baseline"] = [time.perf_counter() - w, time.process_time() - c]
    spent.clear()
    w, c = time.perf_counter(), time.process_time()
    store.batch(deletes)
    result["total"] = [time.perf_counter() - w, time.process_time() - c]
    assert store.get(("bench", "u1"), f"k{victims[1]}") is None and store.get(("bench", "u1"), "k1") is not None
else:
    turns = [{"type": "transcript.turn", "payload": {"role": ("user", "assistant")[j % 2],
              "text": f"turn {j}: we talked about the plan for item {j % 97} and its owner number {j}"}}
             for j in range(history)]
    for start in range(0, history, 1000):
        fabric.append_many("chat", turns[start : start + 1000])
    fabric.project()
    spent.clear()
    w, c = time.perf_counter(), time.process_time()
    fabric.erase_events("chat", [v + 3 for v in victims], actor="bench", reason="benchmark")  # no speaker's first
    result["total"] = [time.perf_counter() - w, time.process_time() - c]
fabric.close()
result["parts"] = spent
print(json.dumps(result))
""".replace("DELETES", str(DELETES))


def run_child(tree: Path, part: str, history: int) -> dict:
    """One measurement in a fresh process of ``tree`` (its parts, seconds as ``[wall, cpu]``)."""
    with tempfile.TemporaryDirectory(prefix="zaxy-erase-bench-") as tmp:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(tree), part, str(history), tmp],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    row = json.loads(out.strip().splitlines()[-1])
    parts = row.pop("parts")
    split = {"total": row["total"]}
    zero = [0.0, 0.0]
    events, derived = parts.get("events", zero), parts.get("derived", zero)
    scrub = parts.get("scrub", zero)
    if part == "store":
        split["locate"] = [a - b for a, b in zip(parts.get("store_items", zero), events, strict=True)]
    split["record"] = [a - b - c for a, b, c in zip(events, scrub, derived, strict=True)]
    split["scrub"], split["derived"], split["projector"] = scrub, derived, parts.get("projector", zero)
    if "baseline" in row:
        split["sqlite_store"] = row["baseline"]
    return split


def measure_deletes(trees: dict[str, Path], parts: list[str], histories: list[int], runs: int) -> list[dict]:
    """Median ``[wall, cpu]`` of each part, per tree, part and history; trees alternate run by run."""
    rows = []
    for part in parts:
        for history in histories:
            samples: dict[str, list[dict]] = {name: [] for name in trees}
            for _ in range(runs):
                for name, tree in trees.items():
                    samples[name].append(run_child(tree, part, history))
            for name, runs_of in samples.items():
                medians = {key: [statistics.median(r[key][i] for r in runs_of) for i in range(2)] for key in runs_of[0]}
                rows.append({"tree": name, "part": part, "history": history, "runs": len(runs_of), **medians})
    return rows


def print_deletes(rows: list[dict]) -> None:
    keys = ["total", "locate", "record", "scrub", "derived", "projector", "sqlite_store"]
    print(f"one batch of {DELETES} deletes; each cell: wall / CPU ms (median)")
    print(f"{'tree':<8} {'part':<6} {'H':>7} " + " ".join(f"{key:>17}" for key in keys))
    for row in rows:
        cells = [
            f"{row[key][0] * 1000:8.0f}/{row[key][1] * 1000:<8.0f}" if key in row else f"{'-':>17}" for key in keys
        ]
        print(f"{row['tree']:<8} {row['part']:<6} {row['history']:>7} " + " ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000")
    parser.add_argument("--session-events", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--parts", default="session", help="session (erase one session), or store,chat (deletes)")
    parser.add_argument("--history", default="5000,20000,50000", help="H for --parts store,chat")
    parser.add_argument("--runs", type=int, default=1, help="runs per tree for --parts store,chat")
    parser.add_argument("--before", type=Path, help="another checkout, measured in the same run (store,chat)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    parts = args.parts.split(",")
    if parts != ["session"]:
        trees = {"after": Path(__file__).resolve().parents[1]}
        if args.before:
            trees = {"before": args.before.resolve(), **trees}
        rows = measure_deletes(trees, parts, [int(h) for h in args.history.split(",")], args.runs)
        if args.json:
            print(json.dumps(rows, indent=2))
        else:
            print_deletes(rows)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    results = [measure(size, args.session_events, args.repeats) for size in sizes]
    ratio = results[-1]["erase_seconds"] / results[0]["erase_seconds"]
    report = {"results": results, "ratio_largest_to_smallest": ratio, "size_ratio": sizes[-1] / sizes[0]}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for row in results:
        print(
            f"{row['memory_events']:>7} events: erase of {row['erased_events']} events "
            f"{row['erase_seconds'] * 1000:8.1f} ms (runs {[round(t * 1000) for t in row['erase_seconds_all']]}), "
            f"next graph use {row['next_graph_use_seconds'] * 1000:8.1f} ms"
        )
    print(f"erase time ratio {sizes[-1]}/{sizes[0]} events: {ratio:.2f}x (memory {report['size_ratio']:.0f}x)")


if __name__ == "__main__":
    main()
