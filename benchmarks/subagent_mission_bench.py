"""What naming a mission costs a subagent hook: `zaxy hook-event SubagentStart/SubagentStop` with and without
``ZAXY_MISSION``, interpreter start-up included, against ``python -c pass`` in the same run.

Without a mission the hook takes the stdlib fast path (capture only). With one, the subagent also becomes a
Coordinate worker (start) and its reply that worker's pending finding (stop), which opens the full fabric (the
log only, never the graph). Each run uses a new agent id, so every start creates a worker and an assignment and
every stop reports a finding; the mission grows as it would in a long session. Payloads are the ones recorded
from the real Claude Code CLI. Every iteration runs each case once, in turn, so machine noise hits all alike.

Usage: python benchmarks/subagent_mission_bench.py [--runs 20] [--json]
"""

from __future__ import annotations

import argparse
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

FIXTURES = REPO / "tests" / "fixtures" / "hooks" / "claude-code"


def _payload(name: str, workspace: Path, agent_id: str) -> bytes:
    hook = json.loads((FIXTURES / f"{name}.json").read_text().replace("__CWD__", str(workspace)))
    return json.dumps({**hook, "agent_id": agent_id, "last_assistant_message": f"done by {agent_id}"}).encode()


def _timed(command: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, input=stdin, env=env, cwd=cwd, check=True, capture_output=True)
    return (time.perf_counter() - started) * 1000


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    zaxy = zaxy_command()
    samples: dict[str, list[float]] = {"python -c pass": []}
    with tempfile.TemporaryDirectory() as root:
        workspaces = {}
        for mode in ("capture only", "with a mission"):
            workspace = Path(root) / mode.replace(" ", "-")
            (workspace / ".git").mkdir(parents=True)
            workspaces[mode] = workspace
            for event in ("SubagentStart", "SubagentStop"):
                samples[f"{event}, {mode}"] = []
        base_env = {**os.environ, "HOME": root, "ZAXY_EVENTLOOM_PATH": "", "ZAXY_MISSION": ""}
        for run in range(options.runs):
            samples["python -c pass"].append(_timed([sys.executable, "-c", "pass"], b"", base_env, Path(root)))
            for mode, workspace in workspaces.items():
                env = {**base_env, "ZAXY_MISSION": "bench-mission" if mode == "with a mission" else ""}
                for event in ("SubagentStart", "SubagentStop"):
                    stdin = _payload(event, workspace, f"agent{run:04d}")
                    command = [*zaxy, "hook-event", event, "--client", "claude-code"]
                    samples[f"{event}, {mode}"].append(_timed(command, stdin, env, workspace))
    report = {name: _stats(values) for name, values in samples.items()}
    for event in ("SubagentStart", "SubagentStop"):
        with_mission = report[f"{event}, with a mission"]["p50_ms"]
        report[f"{event}, with a mission"]["x_capture_only"] = round(
            with_mission / report[f"{event}, capture only"]["p50_ms"], 2
        )
    if options.json:
        print(json.dumps({"runs": options.runs, "cases": report}, indent=2))
        return
    print(f"{'case':34} {'p50 ms':>8} {'p95 ms':>8}  ratio")
    for name, row in report.items():
        ratio = f"x{row['x_capture_only']} capture only" if "x_capture_only" in row else ""
        print(f"{name:34} {row['p50_ms']:8.1f} {row['p95_ms']:8.1f}  {ratio}")


if __name__ == "__main__":
    main()
