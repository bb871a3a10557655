"""`zaxy hook-event` latency per call, including interpreter start-up, against baselines from the same run.

Baselines: ``python -c pass`` (the floor for any Python hook) and ``zaxy --help`` (the full Typer/Rich CLI).
Cases use payloads recorded from the real Claude Code CLI: PostToolUse (Bash), UserPromptSubmit, and
SessionStart ``compact`` (which also reads the log tail and renders the recovery packet) against a log of
``--log-events`` events. The same hooks also run against a second workspace whose session log is held
locked by another process for the whole run (issue #25.7): they wait at most the hook's lock budget (200 ms),
spool their events and exit 0; after the run the lock is released, one more hook drains the spool, and the
benchmark checks every spooled event reached the log. Every iteration runs each command once, in turn, so
machine noise hits all of them alike. Bytecode is compiled first: an installed wheel ships it, and this
environment may set PYTHONDONTWRITEBYTECODE, which would otherwise charge every call for compiling Zaxy's
sources.

Usage: python benchmarks/hook_bench.py [--runs 40] [--log-events 5000] [--json]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from zaxy_agents.capture.config_files import zaxy_command  # noqa: E402
from zaxy_agents.capture.workspace import default_session_id  # noqa: E402
from zaxy_agents.fabric import MemoryFabric  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "hooks" / "claude-code"


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50_ms": pick(0.50), "p95_ms": pick(0.95), "mean_ms": statistics.fmean(ordered), "max_ms": ordered[-1]}


def payload(name: str, workspace: Path, home: Path) -> bytes:
    text = (FIXTURES / f"{name}.json").read_text()
    return text.replace("__CWD__", str(workspace)).replace("__HOME__", str(home)).encode()


def seed_log(workspace: Path, events: int) -> None:
    """A realistic busy session: commands, edits, tasks, decisions (what the recovery packet digests)."""
    session = default_session_id("claude-code", str(workspace.resolve()))
    drafts = []
    for i in range(events):
        kind = i % 10
        if kind < 5:
            drafts.append(
                {"type": "command.completed", "payload": {"command": f"pytest -k case_{i}", "exit_code": i % 2}}
            )
        elif kind < 8:
            drafts.append({"type": "file.edit.applied", "payload": {"path": f"src/m{i % 97}.py", "lines_added": 3}})
        elif kind == 8:
            drafts.append({"type": "task.created", "payload": {"task_id": f"T-{i}", "title": f"task {i}"}})
        else:
            drafts.append({"type": "decision.recorded", "payload": {"decision": f"decision {i}"}})
    with MemoryFabric.from_path(workspace / ".eventloom") as fabric:
        for start in range(0, len(drafts), 1000):
            fabric.append_many(session, drafts[start : start + 1000])


HOLDER = (
    "import fcntl, sys, time\nh = open(sys.argv[1], 'a')\nfcntl.flock(h, fcntl.LOCK_EX)\n"
    "print('locked', flush=True)\ntime.sleep(3600)\n"
)


def hold_lock(log_file: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(log_file)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--log-events", type=int, default=5000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    compileall.compile_dir(str(REPO / "zaxy_agents"), quiet=1)
    zaxy = zaxy_command()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        workspace, home = root / "shop", root / "home"
        (workspace / ".git").mkdir(parents=True)
        home.mkdir()
        seed_log(workspace, args.log_events)
        locked = root / "shop-locked"
        (locked / ".git").mkdir(parents=True)
        seed_log(locked, args.log_events)
        locked_log = locked / ".eventloom" / f"{default_session_id('claude-code', str(locked.resolve()))}.jsonl"
        env = {**os.environ, "HOME": str(home), "ZAXY_EVENTLOOM_PATH": "", "ZAXY_HOOKS_DISABLED": "", "NO_COLOR": "1"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        hook = [*zaxy, "hook-event"]
        cases: dict[str, tuple[list[str], bytes | None]] = {
            "baseline: python -c pass": ([sys.executable, "-c", "pass"], None),
            "baseline: zaxy --help": ([*zaxy, "--help"], None),
            "hook PostToolUse (Bash)": ([*hook, "PostToolUse"], payload("PostToolUse-Bash", workspace, home)),
            "hook UserPromptSubmit": ([*hook, "UserPromptSubmit"], payload("UserPromptSubmit", workspace, home)),
            "hook SessionStart compact + packet": (
                [*hook, "SessionStart"],
                payload("SessionStart-compact", workspace, home),
            ),
            "lock held: hook PostToolUse (Bash)": ([*hook, "PostToolUse"], payload("PostToolUse-Bash", locked, home)),
            "lock held: hook UserPromptSubmit": (
                [*hook, "UserPromptSubmit"],
                payload("UserPromptSubmit", locked, home),
            ),
            "lock held: SessionStart compact": ([*hook, "SessionStart"], payload("SessionStart-compact", locked, home)),
        }
        cwd_of = {name: (locked if name.startswith("lock held") else workspace) for name in cases}
        lines_before = len(locked_log.read_bytes().splitlines())
        holder = hold_lock(locked_log)
        samples: dict[str, list[float]] = {name: [] for name in cases}
        packet_chars = 0
        for _ in range(args.runs):
            for name, (argv, stdin) in cases.items():
                start = time.perf_counter()
                done = subprocess.run(argv, input=stdin, env=env, cwd=cwd_of[name], capture_output=True, check=True)
                samples[name].append((time.perf_counter() - start) * 1e3)
                if name == "hook SessionStart compact + packet":
                    packet_chars = len(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])
        holder.kill()
        holder.wait()
        spooled = sum(1 for _ in (locked / ".eventloom" / ".spool").rglob("*.jsonl"))
        start = time.perf_counter()
        argv, stdin = cases["lock held: hook PostToolUse (Bash)"]
        subprocess.run(argv, input=stdin, env=env, cwd=locked, capture_output=True, check=True)
        drain_ms = (time.perf_counter() - start) * 1e3
        lines_after = [json.loads(line) for line in locked_log.read_bytes().splitlines()]
        drained = [event for event in lines_after if event["type"] == "eventloom.spool_drained"]
        assert drained and drained[0]["payload"]["events"] + 1 + lines_before <= len(lines_after)
        written = len(lines_after) - lines_before - 2  # minus the drain record and the draining hook's own events
        drain = {"spool_files": spooled, "events_drained": drained[0]["payload"]["events"], "drain_call_ms": drain_ms}
        assert written >= drain["events_drained"] and not any((locked / ".eventloom" / ".spool").rglob("*.jsonl"))
    results = {name: percentiles(values) for name, values in samples.items()}
    floor = results["baseline: python -c pass"]
    cli = results["baseline: zaxy --help"]
    for stats in results.values():
        stats["x_python_p50"] = stats["p50_ms"] / floor["p50_ms"]
        stats["over_python_p50_ms"] = stats["p50_ms"] - floor["p50_ms"]
        stats["x_zaxy_help_p50"] = stats["p50_ms"] / cli["p50_ms"]
    report = {
        "runs": args.runs,
        "log_events": args.log_events,
        "packet_chars": packet_chars,
        "lock_budget_ms": 200,
        "drain": drain,
        "results": results,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"{args.runs} runs per case, interleaved; SessionStart log: {args.log_events} events, "
        f"packet {packet_chars} chars"
    )
    print(f"{'case':38} {'p50 ms':>8} {'p95 ms':>8} {'x python':>9} {'+python':>8} {'x --help':>9}")
    for name, stats in results.items():
        print(
            f"{name:38} {stats['p50_ms']:8.1f} {stats['p95_ms']:8.1f} {stats['x_python_p50']:9.2f} "
            f"{stats['over_python_p50_ms']:8.1f} {stats['x_zaxy_help_p50']:9.2f}"
        )
    print(
        f"lock released: {drain['spool_files']} spool files, {drain['events_drained']} events drained in order by the "
        f"next hook call ({drain['drain_call_ms']:.0f} ms)"
    )


if __name__ == "__main__":
    main()
