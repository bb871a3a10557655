"""Append throughput of the PostgreSQL Eventloom with 1, 4 and 8 worker processes, as ratios against one
embedded (JSONL) worker measured right next to it in the same run.

Every configuration runs for a fixed time with its workers started together. This machine's fsync latency
flips between ~0.2 ms and ~4 ms regimes for seconds at a time, so each PostgreSQL run is paired with an
embedded run of the same pattern immediately before it, the ratio is taken within the pair, and the report
gives the median over rounds of those paired ratios (plus per-configuration medians). Both backends run with
their default durability: every append is durable before it returns (``fdatasync`` per append or batch for
JSONL, a synchronous commit for PostgreSQL).

Patterns: ``single`` = one event per append; ``batch`` = ``append_many`` of ``--batch`` events (what hook
sinks and importers do). Workers write to their own session (many agents, the scale-out case) unless the
configuration says ``shared`` (all workers on one session, serialised by its head row). Workers and the
server share this machine's cores, so the figures are a floor for a deployment whose workers run elsewhere.

Usage: python benchmarks/postgres_bench.py [--dsn postgresql://...] [--seconds 2] [--rounds 3] [--batch 10]
(the DSN defaults to $ZAXY_BENCH_POSTGRES_DSN or $ZAXY_TEST_POSTGRES_DSN).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PAYLOAD = {"task_id": "T-17", "title": "Add exponential backoff to payment retries", "tags": ["payments", "retry"]}
# (name, backend, workers, pattern, shared session)
CONFIGS = [
    ("postgres_1_single", "postgresql", 1, "single", False),
    ("postgres_4_single", "postgresql", 4, "single", False),
    ("postgres_8_single", "postgresql", 8, "single", False),
    ("postgres_1_batch", "postgresql", 1, "batch", False),
    ("postgres_4_batch", "postgresql", 4, "batch", False),
    ("postgres_8_batch", "postgresql", 8, "batch", False),
    ("postgres_8_shared_single", "postgresql", 8, "single", True),
    ("postgres_8_shared_batch", "postgresql", 8, "batch", True),
]
BASELINES = {
    "single": ("embedded_1_single", "jsonl", 1, "single", False),
    "batch": ("embedded_1_batch", "jsonl", 1, "batch", False),
}


def _open(backend: str, target: str, schema: str) -> Any:
    if backend == "jsonl":
        from zaxy_agents.eventloom.jsonl_log import JsonlEventLog

        return JsonlEventLog(target)
    from zaxy_agents.eventloom.postgres_log import PostgresEventLog

    return PostgresEventLog(target, schema=schema)


def _worker(
    backend: str, target: str, schema: str, session: str, pattern: str, batch: int, seconds: float, ready, results
) -> None:
    """Append as fast as possible for ``seconds`` after every worker is ready; report events and time."""
    log = _open(backend, target, schema)
    drafts = [{"type": "task.created", "payload": {**PAYLOAD, "i": i}} for i in range(batch)]
    log.append(session, "session.started", {"bench": True})  # warm the pool and the prepared statements
    ready.wait()
    events, n = 0, 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        if pattern == "batch":
            events += len(log.append_many(session, drafts))
        else:
            log.append(session, "task.created", {**PAYLOAD, "i": n})
            events += 1
        n += 1
    elapsed = time.perf_counter() - start
    log.close()
    results.put((events, elapsed))


def run_config(config: tuple, dsn: str, schema: str, root: Path, round_no: int, args: argparse.Namespace) -> float:
    """Aggregate events/s of one configuration (all workers start together, each runs ``seconds``)."""
    name, backend, workers, pattern, shared = config
    context = multiprocessing.get_context("spawn")
    ready, results = context.Barrier(workers + 1), context.Queue()
    target = str(root / f"{name}-{round_no}") if backend == "jsonl" else dsn
    processes = [
        context.Process(
            target=_worker,
            args=(
                backend,
                target,
                schema,
                f"{name}-r{round_no}" if shared else f"{name}-r{round_no}-w{w}",
                pattern,
                args.batch,
                args.seconds,
                ready,
                results,
            ),
        )
        for w in range(workers)
    ]
    for process in processes:
        process.start()
    ready.wait()
    outcomes = [results.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    events = sum(count for count, _ in outcomes)
    return events / max(elapsed for _, elapsed in outcomes)


def verify_everything(dsn: str, schema: str) -> tuple[int, int]:
    """Every session the benchmark wrote must verify (a fast benchmark that corrupts data is worthless)."""
    log = _open("postgresql", dsn, schema)
    try:
        sessions = log.sessions()
        assert all(log.verify(summary.session).ok for summary in sessions)
        return len(sessions), sum(summary.event_count for summary in sessions)
    finally:
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--dsn", default=os.environ.get("ZAXY_BENCH_POSTGRES_DSN") or os.environ.get("ZAXY_TEST_POSTGRES_DSN")
    )
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--only", nargs="*", help="run only these configuration names")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.dsn:
        parser.error("no PostgreSQL server: pass --dsn or set ZAXY_BENCH_POSTGRES_DSN")
    import psycopg

    schema = f"zaxy_bench_{uuid.uuid4().hex[:8]}"
    configs = [c for c in CONFIGS if not args.only or c[0] in args.only]
    rates: dict[str, list[float]] = {}
    paired: dict[str, list[float]] = {}  # PostgreSQL rate / the embedded rate measured just before it
    versus_single: dict[str, list[float]] = {}  # ... / the embedded single-append rate of the same round
    try:
        _open("postgresql", args.dsn, schema).close()  # create the schema before the clock starts
        with tempfile.TemporaryDirectory(prefix="zaxy-pg-bench-", dir=os.environ.get("ZAXY_BENCH_DIR")) as tmp:
            for round_no in range(args.rounds):
                line = []
                single = run_config(BASELINES["single"], args.dsn, schema, Path(tmp), round_no * 100 + 99, args)
                rates.setdefault("embedded_1_single", []).append(single)
                round_singles = [single]
                for index, config in enumerate(configs):
                    baseline = BASELINES[config[3]]
                    base = run_config(baseline, args.dsn, schema, Path(tmp), round_no * 100 + index, args)
                    rate = run_config(config, args.dsn, schema, Path(tmp), round_no, args)
                    rates.setdefault(baseline[0], []).append(base)
                    rates.setdefault(config[0], []).append(rate)
                    paired.setdefault(config[0], []).append(rate / base)
                    if baseline[3] == "single":
                        round_singles.append(base)
                    line.append(f"{config[0]}={rate:,.0f}/s (x{rate / base:.2f} vs {base:,.0f})")
                single_base = statistics.median(round_singles)
                for config in configs:
                    versus_single.setdefault(config[0], []).append(rates[config[0]][-1] / single_base)
                if not args.json:
                    print(f"round {round_no + 1}: " + "  ".join(line), flush=True)
        sessions, events = verify_everything(args.dsn, schema)
    finally:
        with psycopg.connect(args.dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')

    report: dict[str, Any] = {
        "seconds_per_run": args.seconds,
        "rounds": args.rounds,
        "batch": args.batch,
        "cpu_count": os.cpu_count(),
        "verified": {"sessions": sessions, "events": events},
        "events_per_s_median": {name: statistics.median(values) for name, values in rates.items()},
        "ratio_vs_adjacent_embedded_same_pattern": {k: statistics.median(v) for k, v in paired.items()},
        "ratio_vs_embedded_single_same_round": {k: statistics.median(v) for k, v in versus_single.items()},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"\nverified {sessions} PostgreSQL sessions, {events} events; medians over {args.rounds} rounds")
    print(f"{'configuration':26s} {'events/s':>10s} {'x embedded, same pattern':>25s} {'x embedded single':>18s}")
    for name, rate in report["events_per_s_median"].items():
        same = report["ratio_vs_adjacent_embedded_same_pattern"].get(name)
        single = report["ratio_vs_embedded_single_same_round"].get(name)
        print(
            f"{name:26s} {rate:10,.0f} {'' if same is None else f'{same:.2f}':>25s} "
            f"{'' if single is None else f'{single:.2f}':>18s}"
        )


if __name__ == "__main__":
    main()
