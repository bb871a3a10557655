"""Append throughput and Memory Checkout latency on PostgreSQL with 1, 4 and 8 worker processes, as ratios
against one embedded (JSONL + Kuzu) worker measured right next to it in the same run.

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

Checkout (``--part checkout`` or ``all``): every worker seeds its own session with ``--seed-events`` mixed
events, then loops for the same fixed time: re-assert one service's port (an append) and ask a checkout for
the current port of a service (800-token budget). On PostgreSQL every worker projects into the one shared
graph (guarded per-session writes) and keeps its own in-memory indexes; the embedded baseline is one worker
with its own Kuzu graph. Reported: checkout p50/p95 latency and aggregate checkouts/s.

Usage: python benchmarks/postgres_bench.py [--dsn postgresql://...] [--seconds 2] [--rounds 3] [--batch 10]
       [--part appends|checkout|all] [--seed-events 300]
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
        from zaxy_agents.storage.files.jsonl_log import JsonlEventLog

        return JsonlEventLog(target)
    from zaxy_agents.storage.postgres.log import PostgresEventLog

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


CHECKOUT_CONFIGS = [("postgres_1_checkout", 1), ("postgres_4_checkout", 4), ("postgres_8_checkout", 8)]


def _checkout_worker(
    backend: str, target: str, schema: str, local: str, session: str, seed: int, seconds: float, ready, results
) -> None:
    """Seed a session, then alternate (append, checkout) for ``seconds``; report checkout latencies."""
    os.environ["ZAXY_POSTGRES_SCHEMA"] = schema
    from benchmarks.projection_bench import mixed_stream
    from zaxy_agents.fabric import MemoryFabric

    fabric = MemoryFabric.from_path(
        target if backend == "jsonl" else local, backend=None if backend == "jsonl" else target
    )
    fabric.append_many(session, mixed_stream(seed, seed=len(session)))
    fabric.checkout("what is the port of service 1?", session=session, max_tokens=800)
    ready.wait()
    latencies, n = [], 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        fabric.append(session, "fact.asserted", {"subject": f"service {n % 20}", "predicate": "port", "object": str(n)})
        t0 = time.perf_counter()
        packet = fabric.checkout(f"what is the port of service {n % 20}?", session=session, max_tokens=800)
        latencies.append(time.perf_counter() - t0)
        assert packet.prompt
        n += 1
    elapsed = time.perf_counter() - start
    fabric.close()
    results.put((latencies, elapsed))


def run_checkout(name: str, backend: str, workers: int, dsn: str, schema: str, root: Path, args) -> dict[str, float]:
    """p50/p95 checkout latency (ms) over every worker's checkouts, and aggregate checkouts/s."""
    context = multiprocessing.get_context("spawn")
    ready, results = context.Barrier(workers + 1), context.Queue()
    target = str(root / f"{name}-loom") if backend == "jsonl" else dsn
    processes = [
        context.Process(
            target=_checkout_worker,
            args=(
                backend,
                target,
                schema,
                str(root / f"{name}-w{w}"),
                f"{name}-w{w}",
                args.seed_events,
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
    outcomes = [results.get(timeout=600) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    latencies = sorted(value for samples, _ in outcomes for value in samples)
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1e3  # noqa: E731
    return {
        "p50_ms": pick(0.5),
        "p95_ms": pick(0.95),
        "checkouts_per_s": len(latencies) / max(elapsed for _, elapsed in outcomes),
    }


def checkout_rounds(dsn: str, schema: str, args) -> dict[str, Any]:
    """Each PostgreSQL configuration paired with an embedded single-worker run right before it."""
    figures: dict[str, list[dict[str, float]]] = {}
    ratios: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="zaxy-pg-checkout-", dir=os.environ.get("ZAXY_BENCH_DIR")) as tmp:
        for round_no in range(args.rounds):
            line = []
            for name, workers in CHECKOUT_CONFIGS:
                base_dir, run_dir = Path(tmp) / f"r{round_no}-{name}-base", Path(tmp) / f"r{round_no}-{name}"
                base_dir.mkdir()
                run_dir.mkdir()
                base = run_checkout(f"e{round_no}{name}", "jsonl", 1, dsn, schema, base_dir, args)
                ours = run_checkout(f"p{round_no}{name}", "postgresql", workers, dsn, schema, run_dir, args)
                figures.setdefault("embedded_1_checkout", []).append(base)
                figures.setdefault(name, []).append(ours)
                entry = ratios.setdefault(name, {"p50_latency_x": [], "throughput_x": []})
                entry["p50_latency_x"].append(ours["p50_ms"] / base["p50_ms"])
                entry["throughput_x"].append(ours["checkouts_per_s"] / base["checkouts_per_s"])
                line.append(f"{name}: p50 {ours['p50_ms']:.1f} ms vs {base['p50_ms']:.1f} ms")
            if not args.json:
                print(f"checkout round {round_no + 1}: " + "  ".join(line), flush=True)
    median = lambda rows, key: statistics.median(row[key] for row in rows)  # noqa: E731
    return {
        "seed_events_per_worker": args.seed_events,
        "medians": {
            name: {key: median(rows, key) for key in ("p50_ms", "p95_ms", "checkouts_per_s")}
            for name, rows in figures.items()
        },
        "ratios_vs_adjacent_embedded_1_worker": {
            name: {key: statistics.median(values) for key, values in entry.items()} for name, entry in ratios.items()
        },
    }


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
    parser.add_argument("--part", choices=("appends", "checkout", "all"), default="all")
    parser.add_argument("--seed-events", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.dsn:
        parser.error("no PostgreSQL server: pass --dsn or set ZAXY_BENCH_POSTGRES_DSN")
    import psycopg

    schema = f"zaxy_bench_{uuid.uuid4().hex[:8]}"
    configs = [c for c in CONFIGS if (not args.only or c[0] in args.only) and args.part != "checkout"]
    rates: dict[str, list[float]] = {}
    paired: dict[str, list[float]] = {}  # PostgreSQL rate / the embedded rate measured just before it
    versus_single: dict[str, list[float]] = {}  # ... / the embedded single-append rate of the same round
    try:
        _open("postgresql", args.dsn, schema).close()  # create the schema before the clock starts
        with tempfile.TemporaryDirectory(prefix="zaxy-pg-bench-", dir=os.environ.get("ZAXY_BENCH_DIR")) as tmp:
            for round_no in range(args.rounds if configs else 0):
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
        checkout = checkout_rounds(args.dsn, schema, args) if args.part != "appends" else None
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
        "checkout": checkout,
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
    if checkout:
        print(f"\ncheckout ({args.seed_events} seed events per worker; ratios vs the adjacent embedded 1-worker run)")
        header = ("configuration", "p50 ms", "p95 ms", "checkouts/s", "p50 x", "throughput x")
        print(f"{header[0]:22s} {header[1]:>8s} {header[2]:>8s} {header[3]:>12s} {header[4]:>7s} {header[5]:>13s}")
        for name, row in checkout["medians"].items():
            ratio = checkout["ratios_vs_adjacent_embedded_1_worker"].get(name, {})
            print(
                f"{name:22s} {row['p50_ms']:8.1f} {row['p95_ms']:8.1f} {row['checkouts_per_s']:12.1f} "
                f"{ratio.get('p50_latency_x', float('nan')):7.2f} {ratio.get('throughput_x', float('nan')):13.2f}"
            )


if __name__ == "__main__":
    main()
