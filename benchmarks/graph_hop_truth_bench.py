"""Filtered 2-hop Cypher answers of an embedded graph engine against a Python ground truth.

Why: the graph engine is pinned to Kuzu 0.11.3 because it is exact on these patterns; its maintained fork LadybugDB
(PyPI ``ladybug``) was evaluated as a replacement (smaller files, docs/benchmarks.md "Graph size") and answered some
of them wrongly. This script is the measurement behind that decision, so the next version of any engine can be
checked the same way before it is adopted.

A random graph (2,000 nodes, 8,000 weighted, typed edges, seeded) is written with COPY; for 100 seed nodes each
pattern's answer set is compared with the one computed in Python from the same edge list. Each engine runs in a
child process (Kuzu and LadybugDB cannot both be imported in one process: their bindings register the same names).
An engine that is not installed is reported as skipped (``pip install ladybug`` to evaluate the fork).

Usage: python benchmarks/graph_hop_truth_bench.py [--engines kuzu,ladybug] [--json]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

NODES, EDGES, SEEDS = 2000, 8000, 100
Edge = tuple[int, int, int, str]
Adjacency = dict[int, list[tuple[int, int, str]]]


def _patterns(out: Adjacency, into: Adjacency) -> dict[str, tuple[str, Callable[[int], set[int]]]]:
    """Cypher pattern -> the answer computed from the edge list (``out``/``into``: node -> (other, w, t))."""

    def two_hops(s: int, first: Callable[[int], bool], second: Callable[[int, str], bool]) -> set[int]:
        return {x for b, w1, _ in out.get(s, []) if first(w1) for x, w2, t in out.get(b, []) if second(w2, t)}

    hop = "MATCH (a:N)-[r1:R]->(b:N)-[r2:R]->(x:N) WHERE a.id = $s"
    return {
        "filter on the first rel": (
            f"{hop} AND r1.w > 30 RETURN DISTINCT x.id",
            lambda s: two_hops(s, lambda w: w > 30, lambda w, t: True),
        ),
        "filter on the second rel": (
            f"{hop} AND r2.w < 70 RETURN DISTINCT x.id",
            lambda s: two_hops(s, lambda w: True, lambda w, t: w < 70),
        ),
        "filters on both rels": (
            f"{hop} AND r1.w > 30 AND r2.w < 70 RETURN DISTINCT x.id",
            lambda s: two_hops(s, lambda w: w > 30, lambda w, t: w < 70),
        ),
        "both, as two comma patterns": (
            "MATCH (a:N)-[r1:R]->(b:N), (b)-[r2:R]->(x:N) WHERE a.id = $s AND r1.w > 30 AND r2.w < 70 "
            "RETURN DISTINCT x.id",
            lambda s: two_hops(s, lambda w: w > 30, lambda w, t: w < 70),
        ),
        "IN-list on the second rel": (
            "MATCH (a:N)-[r1:R]->(b:N)-[r2:R]->(x:N) WHERE a.id IN [$s] AND r2.t IN ['a', 'b'] RETURN DISTINCT x.id",
            lambda s: two_hops(s, lambda w: True, lambda w, t: t in ("a", "b")),
        ),
        "backward then forward, both filtered": (
            "MATCH (x:N)-[r1:R]->(a:N), (x)-[r2:R]->(y:N) WHERE a.id = $s AND r1.w > 30 AND r2.w < 70 "
            "RETURN DISTINCT y.id",
            lambda s: {y for x, w1, _ in into.get(s, []) if w1 > 30 for y, w2, _ in out.get(x, []) if w2 < 70},
        ),
        "hops staged with WITH, both filtered": (
            "MATCH (a:N)-[r1:R]->(b:N) WHERE a.id = $s AND r1.w > 30 WITH DISTINCT b "
            "MATCH (b)-[r2:R]->(x:N) WHERE r2.w < 70 RETURN DISTINCT x.id",
            lambda s: two_hops(s, lambda w: w > 30, lambda w, t: w < 70),
        ),
    }


def run_engine(module: str, folder: Path) -> dict[str, int]:
    """In a child process: build the graph with ``module`` (kuzu or ladybug) and count wrong seeds per pattern."""
    import pyarrow as pa

    engine = importlib.import_module(module)
    database = engine.Database(str(folder / f"hops-{module}"))
    connection = engine.Connection(database)
    connection.execute("CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))")
    connection.execute("CREATE REL TABLE R(FROM N TO N, w INT64, t STRING)")
    rng = random.Random(5)
    connection.execute("UNWIND range(0, $n - 1) AS i CREATE (:N {id: i})", {"n": NODES})
    edges: list[Edge] = [
        (rng.randrange(NODES), rng.randrange(NODES), rng.randrange(100), rng.choice("abc")) for _ in range(EDGES)
    ]
    columns = {"from": [e[0] for e in edges], "to": [e[1] for e in edges], "w": [e[2] for e in edges]}
    connection.execute("COPY R FROM $t", {"t": pa.table({**columns, "t": [e[3] for e in edges]})})
    out: Adjacency = {}
    into: Adjacency = {}
    for a, b, w, t in edges:
        out.setdefault(a, []).append((b, w, t))
        into.setdefault(b, []).append((a, w, t))
    seeds = rng.sample(range(NODES), SEEDS)
    wrong: dict[str, int] = {}
    for name, (query, truth) in _patterns(out, into).items():
        answers = ({row[0] for row in connection.execute(query, {"s": s}).get_all()} for s in seeds)
        wrong[name] = sum(found != truth(s) for found, s in zip(answers, seeds, strict=True))
    return wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--engines", default="kuzu,ladybug")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_engine(args.child[0], Path(args.child[1]))))
        return
    report: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="zaxy-hops-") as folder:
        for engine in args.engines.split(","):
            if importlib.util.find_spec(engine) is None:
                report[engine] = {"skipped": f"{engine} is not installed (pip install {engine})"}
                continue
            child = subprocess.run(
                [sys.executable, __file__, "--child", engine, folder], capture_output=True, text=True, check=False
            )
            if child.returncode:
                report[engine] = {"error": child.stderr.strip().splitlines()[-1:] or [f"exit {child.returncode}"]}
                continue
            report[engine] = {"wrong_of_100_seeds": json.loads(child.stdout)}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for engine, result in report.items():
        print(f"{engine}: {json.dumps(result)}")


if __name__ == "__main__":
    main()
