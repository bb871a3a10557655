"""`zaxy reproject`: does the bar track real work to the end, and how fast does Ctrl-C stop it?

Measures, on a realistic mixed stream (the projection benchmark's) of ``--events`` events:
(1) the baseline — a whole `zaxy reproject` in a subprocess (wall time to exit);
(2) the bar — an in-process rebuild recording every progress call: when the bar reached its total, against
    when the rebuild returned (the tail the user sees with no visible progress);
(3) Ctrl-C — `zaxy reproject` in a subprocess, SIGINT at several points of the run (spread over the baseline's
    duration, so most land in the graph write phase): seconds from the signal to the "stopping" line and to the
    process exit, the exit code, and whether memory answers afterwards (`zaxy memory status` with no lag, the
    log byte-identical).

Usage: python benchmarks/reproject_interrupt_bench.py [--events 20000] [--points 6] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.projection_bench import mixed_stream
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.fabric.light import light_append_many

SESSION = "bench"


def zaxy(*args: str) -> list[str]:
    return [sys.executable, "-m", "zaxy_agents.cli.entry", *args]


def build(loom: Path, events: int) -> None:
    stream = mixed_stream(events)
    for offset in range(0, events, 2000):
        light_append_many(SESSION, stream[offset : offset + 2000], eventloom_path=loom)


def whole_run(loom: Path) -> float:
    start = time.perf_counter()
    subprocess.run(zaxy("reproject", "--eventloom-path", str(loom), "--json"), check=True, capture_output=True)
    return time.perf_counter() - start


def bar_timeline(loom: Path) -> dict[str, float]:
    """What `zaxy reproject`'s bars see: the rebuild's status polled every 20 ms, as the CLI polls it every 100."""
    import threading

    with MemoryFabric.from_path(loom) as fabric:
        projector = fabric.projector
        seen: list[tuple[float, tuple]] = []
        done = threading.Event()
        start = time.perf_counter()

        def poll() -> None:
            while not done.wait(0.02):
                status = projector.rebuild_status
                counters = (status.indexed_events, int(status.graph_events), status.digest_lines, status.stage)
                if not seen or seen[-1][1] != counters:
                    seen.append((time.perf_counter() - start, counters))

        watcher = threading.Thread(target=poll)
        watcher.start()
        fabric.reproject()
        end = time.perf_counter() - start
        done.set()
        watcher.join()
    total = projector.rebuild_status.total_events
    moments = [t for t, _ in seen] + [end]
    return {
        "rebuild_seconds": end,
        "indexing_bar_full_at_seconds": next((t for t, c in seen if c[0] >= total), end),
        "graph_bar_full_at_seconds": next((t for t, c in seen if c[1] >= total), end),
        "longest_time_without_bar_movement_seconds": max(b - a for a, b in itertools.pairwise(moments)),
        "bar_updates": len(seen),
    }


def interrupted_run(loom: Path, delay: float) -> dict[str, float | int | bool]:
    before = (loom / f"{SESSION}.jsonl").read_bytes()
    process = subprocess.Popen(
        zaxy("reproject", "--eventloom-path", str(loom)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal's Ctrl-C, even from nohup
    )
    assert process.stderr is not None
    process.stderr.readline()  # the rebuild began
    time.sleep(delay)
    sent = time.perf_counter()
    process.send_signal(signal.SIGINT)
    stderr = b""
    notice_at = None
    while process.poll() is None or select.select([process.stderr], [], [], 0)[0]:
        ready, _, _ = select.select([process.stderr], [], [], 0.01)
        if ready:
            chunk = os.read(process.stderr.fileno(), 65536)
            if not chunk and process.poll() is not None:
                break
            stderr += chunk
            if notice_at is None and b"stopping" in stderr:
                notice_at = time.perf_counter() - sent
    exited_at = time.perf_counter() - sent
    process.wait()
    status = subprocess.run(
        zaxy("memory", "status", "--eventloom-path", str(loom), "--json"), capture_output=True, text=True
    )
    body = json.loads(status.stdout)
    return {
        "signal_after_seconds": delay,
        "exit_code": process.returncode,
        "notice_seconds": -1.0 if notice_at is None else notice_at,
        "exit_seconds": exited_at,
        "finished_before_signal": process.returncode == 0,
        "memory_consistent_after": status.returncode == 0 and body["sessions"][SESSION]["projection_lag"] == 0,
        "log_unchanged": (loom / f"{SESSION}.jsonl").read_bytes() == before,
    }


def run(events: int, points: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="zaxy-reproject-int-") as tmp:
        loom = Path(tmp) / "loom"
        build(loom, events)
        baseline = whole_run(loom)
        timeline = bar_timeline(loom)
        delays = [round(baseline * (i + 1) / (points + 1), 2) for i in range(points)]
        runs = [interrupted_run(loom, delay) for delay in delays]
    stopped = [r for r in runs if not r["finished_before_signal"]]
    return {
        "events": events,
        "baseline_whole_reproject_seconds": baseline,
        **timeline,
        "interrupts": runs,
        "max_exit_after_ctrl_c_seconds": max((float(r["exit_seconds"]) for r in stopped), default=0.0),
        "max_notice_after_ctrl_c_seconds": max((float(r["notice_seconds"]) for r in stopped), default=0.0),
        "all_consistent_after": all(r["memory_consistent_after"] and r["log_unchanged"] for r in runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--points", type=int, default=6)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = run(args.events, args.points)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for key, value in results.items():
        if key == "interrupts":
            for row in value:
                print("  " + ", ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
        else:
            print(f"{key:36s} {value:,.2f}" if isinstance(value, float) else f"{key:36s} {value}")


if __name__ == "__main__":
    main()
