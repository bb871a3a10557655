"""PostgreSQL workers sharing one memory: checkouts/s with 1 / 2 / 4 / 8 workers on one host.

A memory of ``--events`` realistic events (sessions of 1,000) is written to a fresh PostgreSQL schema and
projected once into the host's shared derived state (``<path>/.zaxy/postgresql/<id>/derived.sqlite``). Then, for
each worker count, that many processes open the memory (time to open + first checkout, peak RSS) and run
checkouts on random sessions for ``--seconds``; the report gives total checkouts/s, p50 / p95 latency and the
ratio to one worker measured in the same run.

Usage: python benchmarks/postgres_scale_bench.py --dsn postgresql://... [--events 20000] [--workers 1,2,4,8]
       [--seconds 20] [--json]   (or ZAXY_TEST_POSTGRES_DSN)
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _peak_rss_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _worker(dsn: str, schema: str, path: str, sessions: list[str], seconds: float, seed: int, ready, results) -> None:
    os.environ["ZAXY_POSTGRES_SCHEMA"] = schema
    started = time.perf_counter()
    from zaxy_agents.fabric import MemoryFabric

    rng = random.Random(seed)
    fabric = MemoryFabric.from_path(path, backend=dsn)
    fabric.checkout("what changed recently?", session=rng.choice(sessions), max_tokens=2000)
    opened = time.perf_counter() - started
    ready.wait()
    latencies = []
    begin = time.perf_counter()
    while time.perf_counter() - begin < seconds:
        session = rng.choice(sessions)
        t0 = time.perf_counter()
        packet = fabric.checkout(
            f"what is the port of service {rng.choice('abcdefgh')}?", session=session, max_tokens=2000
        )
        latencies.append(time.perf_counter() - t0)
        assert packet.prompt
    elapsed = time.perf_counter() - begin
    fabric.close()
    results.put({"latencies": latencies, "elapsed": elapsed, "open_s": opened, "rss_mb": _peak_rss_mb()})


def load(dsn: str, schema: str, path: Path, events: int) -> list[str]:
    os.environ["ZAXY_POSTGRES_SCHEMA"] = schema
    from benchmarks.realistic_stream import RealisticStream
    from zaxy_agents.fabric import MemoryFabric

    sessions = []
    with MemoryFabric.from_path(path, backend=dsn) as fabric:
        for session, drafts in RealisticStream(seed=events).sessions(events):
            for start in range(0, len(drafts), 500):
                fabric.append_many(session, drafts[start : start + 500])
            sessions.append(session)
        started = time.perf_counter()
        fabric.project()
        print(f"loaded {events} events, projected in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return sessions


def run(dsn: str, schema: str, path: Path, sessions: list[str], workers: int, seconds: float) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    ready, results = context.Barrier(workers + 1), context.Queue()
    processes = [
        context.Process(target=_worker, args=(dsn, schema, str(path), sessions, seconds, w, ready, results))
        for w in range(workers)
    ]
    for process in processes:
        process.start()
    ready.wait()
    outcomes = [results.get(timeout=seconds + 600) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    latencies = sorted(value for outcome in outcomes for value in outcome["latencies"])
    pick = lambda q: round(latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1e3, 1)  # noqa: E731
    return {
        "checkouts_per_s": round(len(latencies) / max(o["elapsed"] for o in outcomes), 2),
        "p50_ms": pick(0.5),
        "p95_ms": pick(0.95),
        "open_and_first_checkout_s": round(statistics.median(o["open_s"] for o in outcomes), 2),
        "peak_rss_mb_per_worker": round(max(o["rss_mb"] for o in outcomes), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsn", default=os.environ.get("ZAXY_TEST_POSTGRES_DSN"))
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--workers", default="1,2,4,8")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.dsn:
        raise SystemExit("pass --dsn or set ZAXY_TEST_POSTGRES_DSN (see /work/coord/env.sh or docs/deployment.md)")
    schema = f"zaxy_scale_{uuid.uuid4().hex[:8]}"
    report: dict[str, Any] = {"events": args.events, "schema": schema, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="zaxy-pg-scale-") as tmp:
        path = Path(tmp) / "loom"
        sessions = load(args.dsn, schema, path, args.events)
        for workers in (int(part) for part in args.workers.split(",")):
            report["runs"][workers] = run(args.dsn, schema, path, sessions, workers, args.seconds)
            if not args.json:
                print(workers, json.dumps(report["runs"][workers]), flush=True)
    one = report["runs"].get(1, {}).get("checkouts_per_s")
    if one:
        report["ratio_vs_1_worker"] = {w: round(r["checkouts_per_s"] / one, 2) for w, r in report["runs"].items()}
    _drop_schema(args.dsn, schema)
    print(json.dumps(report, indent=2))


def _drop_schema(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


if __name__ == "__main__":
    main()
