"""ZaxyCheckpointer on PostgreSQL against LangGraph's own PostgresSaver on the same server, in the same run.

Both savers run the same messages graph turn by turn on one thread each, alternating turn by turn (so both see
the same server and disk state), with their default durability (every write committed synchronously). Then
``get_tuple`` of the latest checkpoint (p50/p95), the full ``get_state_history`` and a concurrent run: several
threads of the same process each driving their own LangGraph thread through one saver.

PostgresSaver runs in its own schema (``search_path``) on an autocommit connection, as its documentation sets
it up (``prepare_threshold=0``, ``dict_row``); for the concurrent run it gets a connection pool.

``--cold-threads N`` instead measures a cold ``list(None, limit=10)`` over N one-turn threads: each figure a
fresh process opening the saver (Zaxy with its local checkpoint index, built by the first such open).

Usage: python benchmarks/langgraph_postgres_bench.py [--dsn postgresql://...] [--turns 300] [--json]
       [--cold-threads 1000 --repeats 5]
(the DSN defaults to $ZAXY_BENCH_POSTGRES_DSN or $ZAXY_TEST_POSTGRES_DSN).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import HumanMessage

from benchmarks.langgraph_bench import _graph, _interleaved

THREADS = 4


def _postgres_saver(dsn: str, schema: str, pooled: bool = False) -> tuple[Any, Any]:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    kwargs = {
        "autocommit": True,
        "prepare_threshold": 0,
        "row_factory": dict_row,
        "options": f"-c search_path={schema}",
    }
    if pooled:
        pool = ConnectionPool(dsn, min_size=THREADS, max_size=THREADS, kwargs=kwargs, open=True)
        return PostgresSaver(pool), pool
    conn = psycopg.connect(dsn, **kwargs)
    saver = PostgresSaver(conn)
    saver.setup()
    return saver, conn


def _concurrent_turns(graph: Any, prefix: str, turns: int) -> float:
    """Turns per second with THREADS LangGraph threads driven at once (one OS thread each)."""

    def drive(n: int) -> None:
        config = {"configurable": {"thread_id": f"{prefix}-{n}"}}
        for i in range(turns):
            graph.invoke({"messages": [HumanMessage(content=f"question {i} from worker {n}")]}, config)

    start = time.perf_counter()
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(drive, range(THREADS)))
    return THREADS * turns / (time.perf_counter() - start)


def run(dsn: str, turns: int) -> dict[str, Any]:
    import psycopg

    from zaxy_agents.fabric import MemoryFabric
    from zaxy_agents.langgraph import ZaxyCheckpointer

    ours_schema, theirs_schema = f"zaxy_bench_{uuid.uuid4().hex[:8]}", f"pgsaver_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{theirs_schema}"')
    os.environ["ZAXY_POSTGRES_SCHEMA"] = ours_schema
    try:
        with tempfile.TemporaryDirectory() as tmp:
            fabric = MemoryFabric.from_path(tmp, backend=dsn)
            savers = {"zaxy": ZaxyCheckpointer(fabric), "postgres_saver": _postgres_saver(dsn, theirs_schema)[0]}
            graphs = {name: _graph(saver) for name, saver in savers.items()}
            config = {"configurable": {"thread_id": "bench-thread"}}

            def turn(graph: Any) -> Any:
                return lambda i: graph.invoke(
                    {"messages": [HumanMessage(content=f"question {i} about the plan")]}, config
                )

            results: dict[str, Any] = {"turns": _interleaved({n: turn(g) for n, g in graphs.items()}, turns)}
            results["get_tuple"] = _interleaved(
                {n: (lambda i, s=s: s.get_tuple(config)) for n, s in savers.items()}, 300
            )
            history = {}
            for name, graph in graphs.items():
                t0 = time.perf_counter()
                count = sum(1 for _ in graph.get_state_history(config))
                history[name] = {"seconds": time.perf_counter() - t0, "checkpoints": count}
            results["get_state_history"] = history
            pooled, pool = _postgres_saver(dsn, theirs_schema, pooled=True)
            concurrent = {
                "zaxy": _concurrent_turns(graphs["zaxy"], "c", turns // 4),
                "postgres_saver": _concurrent_turns(_graph(pooled), "c", turns // 4),
            }
            results["concurrent_turns_per_s"] = concurrent
            pool.close()
            fabric.close()
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            for schema in (ours_schema, theirs_schema):
                admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    turns_r, tuple_r = results["turns"], results["get_tuple"]
    results["ratios"] = {
        "turns_per_s (zaxy / PostgresSaver)": turns_r["zaxy"]["ops_per_s"] / turns_r["postgres_saver"]["ops_per_s"],
        "get_tuple p50 speedup (PostgresSaver ms / zaxy ms)": tuple_r["postgres_saver"]["p50_ms"]
        / tuple_r["zaxy"]["p50_ms"],
        "get_tuple p95 speedup": tuple_r["postgres_saver"]["p95_ms"] / tuple_r["zaxy"]["p95_ms"],
        "get_state_history speedup": history["postgres_saver"]["seconds"] / history["zaxy"]["seconds"],
        f"concurrent turns_per_s, {THREADS} threads (zaxy / PostgresSaver)": concurrent["zaxy"]
        / concurrent["postgres_saver"],
    }
    return results


COLD_CHILD = r"""
import json, os, sys, time
sys.path.insert(0, {root!r})
kind, dsn, schema, folder = sys.argv[1:5]
import psycopg
from psycopg.rows import dict_row
from langgraph.checkpoint.postgres import PostgresSaver
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer
import zaxy_agents.storage.postgres.backend  # noqa: imported first, like PostgresSaver: only opening is timed
t0 = time.perf_counter()
if kind == "zaxy":
    os.environ["ZAXY_POSTGRES_SCHEMA"] = schema
    saver = ZaxyCheckpointer(MemoryFabric.from_path(folder, backend=dsn))
else:
    conn = psycopg.connect(dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row,
                           options=f"-c search_path={{schema}}")
    saver = PostgresSaver(conn)
found = len(list(saver.list(None, limit=10)))
print(json.dumps({{"seconds": time.perf_counter() - t0, "found": found}}))
"""


def cold_list(dsn: str, threads: int, repeats: int) -> dict[str, Any]:
    """A fresh process opens each saver on ``threads`` one-turn threads and lists the newest 10 checkpoints."""
    import statistics
    import subprocess

    import psycopg

    from zaxy_agents.fabric import MemoryFabric
    from zaxy_agents.langgraph import ZaxyCheckpointer

    ours, theirs = f"zaxy_cold_{uuid.uuid4().hex[:8]}", f"pgsaver_cold_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{theirs}"')
    os.environ["ZAXY_POSTGRES_SCHEMA"] = ours
    root = str(Path(__file__).resolve().parents[1])
    try:
        with tempfile.TemporaryDirectory() as folder:
            with MemoryFabric.from_path(folder, backend=dsn) as fabric:
                graphs = [_graph(ZaxyCheckpointer(fabric)), _graph(_postgres_saver(dsn, theirs)[0])]
                for n in range(threads):
                    for graph in graphs:
                        graph.invoke({"messages": [HumanMessage("hello")]}, {"configurable": {"thread_id": f"t{n}"}})

            def child(kind: str, schema: str) -> float:
                out = subprocess.run(
                    [sys.executable, "-c", COLD_CHILD.format(root=root), kind, dsn, schema, folder],
                    capture_output=True, text=True, check=True, cwd=root,
                )  # fmt: skip
                return json.loads(out.stdout)["seconds"] * 1e3

            first = child("zaxy", ours)  # builds the checkpoint index
            zaxy = statistics.median(child("zaxy", ours) for _ in range(repeats))
            theirs_ms = statistics.median(child("postgres_saver", theirs) for _ in range(repeats))
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            for schema in (ours, theirs):
                admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return {"threads": threads, "zaxy_ms": zaxy, "postgres_saver_ms": theirs_ms, "first_list_ms": first,
            "ratio": zaxy / theirs_ms}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--dsn", default=os.environ.get("ZAXY_BENCH_POSTGRES_DSN") or os.environ.get("ZAXY_TEST_POSTGRES_DSN")
    )
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cold-threads", type=int, default=0, help="only the cold list(None, limit=10) over N threads")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if not args.dsn:
        parser.error("no PostgreSQL server: pass --dsn or set ZAXY_BENCH_POSTGRES_DSN")
    if args.cold_threads:
        cold = cold_list(args.dsn, args.cold_threads, args.repeats)
        print(json.dumps(cold, indent=2) if args.json else (
            f"cold list(None, limit=10) over {cold['threads']} threads, fresh process (median of {args.repeats}): "
            f"zaxy {cold['zaxy_ms']:.1f} ms, PostgresSaver {cold['postgres_saver_ms']:.1f} ms, "
            f"ratio {cold['ratio']:.2f}x (the first list, which builds the index: {cold['first_list_ms']:.0f} ms)"
        ))  # fmt: skip
        return
    results = run(args.dsn, args.turns)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name in ("zaxy", "postgres_saver"):
        t, g = results["turns"][name], results["get_tuple"][name]
        h = results["get_state_history"][name]
        print(
            f"{name:15s} turns/s {t['ops_per_s']:7.1f} (p50 {t['p50_ms']:.2f} ms)  get_tuple p50 {g['p50_ms']:.3f} ms"
            f" p95 {g['p95_ms']:.3f} ms  history {h['checkpoints']} in {h['seconds']:.3f} s"
            f"  concurrent turns/s {results['concurrent_turns_per_s'][name]:.1f}"
        )
    for label, value in results["ratios"].items():
        print(f"{label}: {value:.2f}")


if __name__ == "__main__":
    main()
