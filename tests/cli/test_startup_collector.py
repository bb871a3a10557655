"""The start-up commands run with the cyclic collector off and leave it on, with start-up's objects frozen
(zaxy_agents/cli/startup_collector.py). Checked in fresh processes: the collector is process-wide."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import run_zaxy

CHECKOUT_IN_PROCESS = """
import gc, json, sys
from zaxy_agents.cli import startup_collector
from zaxy_agents.cli.entry import main
seen, at_resume = [], []
gc.callbacks.append(lambda phase, info: seen.append(info["generation"]) if phase == "start" else None)
original = startup_collector.resume
def resume():
    at_resume.append(len(seen))
    original()
startup_collector.resume = resume
try:
    main(["memory", "checkout", "which port?", "--eventloom-path", sys.argv[1], "-s", "proj", "--json"])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "enabled": gc.isenabled(), "frozen": gc.get_freeze_count(), "collections": at_resume}))
"""

COMPOSITION = """
import gc, json
from zaxy_agents.cli import startup_collector
from zaxy_agents.projection.collector import collector_paused
states = []
startup_collector.pause()
states.append(gc.isenabled())
with collector_paused():  # a projection batch during start-up leaves the collector off when it ends
    states.append(gc.isenabled())
states.append(gc.isenabled())
startup_collector.resume()
states.append(gc.isenabled())
startup_collector.resume()  # once only
gc.disable()
startup_collector.pause(); startup_collector.resume()  # a collector the caller turned off stays off
states.append(gc.isenabled())
print(json.dumps({"states": states, "frozen": gc.get_freeze_count() > 0}))
"""


def _run(code: str, *args: str) -> dict:
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_cli_checkout_runs_without_collections_and_leaves_the_collector_on(tmp_path: Path) -> None:
    loom = tmp_path / "loom"
    appended = run_zaxy("memory", "append", "the API runs on port 8080", "--eventloom-path", str(loom), "-s", "proj")
    assert appended.returncode == 0, appended.stderr
    outcome = _run(CHECKOUT_IN_PROCESS, str(loom))
    assert outcome["code"] in (0, None)
    assert outcome["collections"] == [0]  # imports, open and the checkout ran with the collector off
    assert outcome["enabled"] and outcome["frozen"] > 10_000  # ... and it is back on, start-up's objects frozen


def test_pause_and_resume_compose_with_the_projection_pause() -> None:
    outcome = _run(COMPOSITION)
    assert outcome == {"states": [False, False, False, True, False], "frozen": True}
