"""Erase cost against memory size: erasing one session of a fixed size in a small and a large memory.

Builds a memory of ``size`` events (sessions of ``--session-events`` events each, the realistic mixed stream of
``projection_bench``), projects it (catalog, retrieval indexes, vectors) and uses the graph once (so the graph file
exists, as in a memory that answered a traversal), plants an SSN in one session, then times
``MemoryFabric.erase_session`` of that session. The erased scope is the same at every size, so a cost that grows
with the scope only gives a ratio near 1 between sizes; one that rebuilds the whole memory grows with it.
After each erase it checks that the SSN is in no file of the memory folder.

Usage: python benchmarks/erase_bench.py [--sizes 2000,20000] [--session-events 200] [--repeats 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000")
    parser.add_argument("--session-events", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
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
