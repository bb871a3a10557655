"""Eventloom append and replay throughput, as ratios against baselines measured in the same run.

Baselines: raw ``write + flush + fdatasync`` of the very same line bytes (the floor for a durable append),
raw ``write + flush + fsync``, and SQLite ``INSERT + COMMIT`` in WAL mode with ``synchronous=FULL``.

Usage: python benchmarks/eventloom_bench.py [--appends 2000] [--replay 100000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from zaxy_agents.storage.files.jsonl_log import JsonlEventLog

PAYLOAD = {"task_id": "T-17", "title": "Add exponential backoff to payment retries", "tags": ["payments", "retry"]}


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50_ms": pick(0.50) * 1e3, "p95_ms": pick(0.95) * 1e3, "mean_ms": statistics.fmean(ordered) * 1e3}


def _timed(operation, count: int) -> dict[str, float]:
    samples = []
    start = time.perf_counter()
    for i in range(count):
        t0 = time.perf_counter()
        operation(i)
        samples.append(time.perf_counter() - t0)
    total = time.perf_counter() - start
    return {"ops_per_s": count / total, **_percentiles(samples)}


def bench_durable_interleaved(root: Path, lines: list[bytes], count: int) -> dict[str, dict[str, float]]:
    """Durable single appends, the three baselines and ours taking turns op by op, in a rotating order.

    Turn-taking matters on this machine: fsync latency flips between ~0.2 ms and ~4 ms regimes for seconds
    at a time, so sequential runs would compare different disk states rather than different code.
    """
    raw_sync = open(root / "raw-fdatasync.jsonl", "ab")  # noqa: SIM115
    raw_fsync = open(root / "raw-fsync.jsonl", "ab")  # noqa: SIM115
    db = sqlite3.connect(root / "bench.sqlite", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    log = JsonlEventLog(root / "ours-fsync")

    def raw(handle, sync, i: int) -> None:
        handle.write(lines[i])
        handle.flush()
        sync(handle.fileno())

    def sqlite_op(i: int) -> None:
        db.execute("BEGIN")
        db.execute("INSERT INTO events (seq, body) VALUES (?, ?)", (i + 1, lines[i].decode()))
        db.execute("COMMIT")

    operations = {
        "baseline_raw_fdatasync": lambda i: raw(raw_sync, os.fdatasync, i),
        "baseline_raw_fsync": lambda i: raw(raw_fsync, os.fsync, i),
        "baseline_sqlite_wal_full": sqlite_op,
        "ours_fsync_single": lambda i: log.append("bench", "task.created", {**PAYLOAD, "i": i}),
    }
    samples: dict[str, list[float]] = {name: [] for name in operations}
    order = list(operations.items())
    for i in range(count):
        # Rotate who goes first: an fsync right after another file's fsync (or SQLite's two) can pay for the
        # disk's flush of the previous one, so a fixed order would bias whichever operation follows SQLite.
        shift = i % len(order)
        for name, operation in order[shift:] + order[:shift]:
            t0 = time.perf_counter()
            operation(i)
            samples[name].append(time.perf_counter() - t0)
    raw_sync.close()
    raw_fsync.close()
    db.close()
    log.close()
    return {name: {"ops_per_s": count / sum(values), **_percentiles(values)} for name, values in samples.items()}


def bench_ours(root: Path, count: int, durability: str) -> dict[str, float]:
    with JsonlEventLog(root / f"ours-{durability}", durability=durability) as log:
        return _timed(lambda i: log.append("bench", "task.created", {**PAYLOAD, "i": i}), count)


def bench_batches(root: Path, total: int, batch_size: int) -> dict[str, float]:
    with JsonlEventLog(root / f"batches-{batch_size}") as log:
        drafts = [{"type": "task.created", "payload": {**PAYLOAD, "i": i}} for i in range(batch_size)]
        start = time.perf_counter()
        for _ in range(total // batch_size):
            log.append_many("bench", drafts)
        elapsed = time.perf_counter() - start
    return {"events_per_s": (total // batch_size) * batch_size / elapsed, "batch_size": batch_size}


def bench_replay(root: Path, count: int) -> dict[str, float]:
    with JsonlEventLog(root / "replay", durability="batch") as log:
        drafts = [{"type": "task.created", "payload": {**PAYLOAD, "i": i}} for i in range(1000)]
        for _ in range(count // 1000):
            log.append_many("bench", drafts)
        log.sync()
    with JsonlEventLog(root / "replay") as reader:
        start = time.perf_counter()
        events = sum(1 for _ in reader.replay("bench"))
        models = time.perf_counter() - start
        start = time.perf_counter()
        envelopes = sum(1 for _ in reader.replay_envelopes("bench"))
        raw = time.perf_counter() - start
        start = time.perf_counter()
        report = reader.verify("bench")
        verify = time.perf_counter() - start
        start = time.perf_counter()
        window = sum(1 for _ in reader.replay("bench", count // 2, count // 2 + 99))
        seek = time.perf_counter() - start
    assert events == envelopes == count and report.ok and window == 100
    return {
        "events": count,
        "replay_events_per_s": count / models,
        "replay_envelopes_per_s": count / raw,
        "verify_events_per_s": count / verify,
        "mid_log_window_100_ms": seek * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--replay", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="zaxy-bench-", dir=os.environ.get("ZAXY_BENCH_DIR")) as tmp:
        root = Path(tmp)
        probe = JsonlEventLog(root / "probe")
        sample = [probe.append("bench", "task.created", {**PAYLOAD, "i": i}) for i in range(args.appends)]
        probe.close()
        lines = [json.dumps(e.envelope(), sort_keys=True, separators=(",", ":")).encode() + b"\n" for e in sample]

        results = {
            **bench_durable_interleaved(root, lines, args.appends),
            "ours_batch_single": bench_ours(root, max(args.appends, 20_000), "batch"),
            "ours_append_many_100": bench_batches(root, 20_000, 100),
            "ours_append_many_1000": bench_batches(root, 50_000, 1000),
            "replay": bench_replay(root, args.replay),
        }
    raw = results["baseline_raw_fdatasync"]
    ours = results["ours_fsync_single"]
    results["ratios"] = {
        "fsync_single_p50_vs_raw_fdatasync": ours["p50_ms"] / raw["p50_ms"],
        "fsync_single_p95_vs_raw_fdatasync": ours["p95_ms"] / raw["p95_ms"],
        "fsync_single_throughput_vs_raw_fdatasync": ours["ops_per_s"] / raw["ops_per_s"],
        "fsync_single_throughput_vs_raw_fsync": ours["ops_per_s"] / results["baseline_raw_fsync"]["ops_per_s"],
        "fsync_single_throughput_vs_sqlite": ours["ops_per_s"] / results["baseline_sqlite_wal_full"]["ops_per_s"],
        "batch_single_throughput_vs_sqlite": results["ours_batch_single"]["ops_per_s"]
        / results["baseline_sqlite_wal_full"]["ops_per_s"],
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, values in results.items():
        print(f"{name:32s} " + "  ".join(f"{k}={v:,.3f}" for k, v in values.items()))


if __name__ == "__main__":
    main()
