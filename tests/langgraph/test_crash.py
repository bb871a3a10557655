"""A graph process killed by SIGKILL mid-step leaves its last complete checkpoint intact and resumable."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from zaxy_agents.langgraph import ZaxyCheckpointer

from ._crash_graph import build

REPO = Path(__file__).resolve().parents[2]
CHILD = [sys.executable, "-m", "tests.langgraph._crash_graph"]


def run_then_kill(root: Path, delay: float) -> int:
    """Run the graph in a child, SIGKILL it after ``delay`` s of turns; return the last acknowledged turn."""
    child = subprocess.Popen([*CHILD, str(root), "--chunked"], stdout=subprocess.PIPE, text=True, cwd=REPO)
    assert child.stdout is not None
    first = child.stdout.readline()  # start-up (imports) is not part of the delay
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    rest, _ = child.communicate()
    acknowledged = [int(line) for line in (first + rest).split()]
    return acknowledged[-1] if acknowledged else 0


def test_sigkill_mid_step_keeps_the_last_complete_checkpoint(tmp_path: Path) -> None:
    root = tmp_path / "eventloom"
    rng = random.Random(2026)
    for _round in range(4):
        acknowledged = run_then_kill(root, rng.uniform(0.2, 0.5))
        with ZaxyCheckpointer.from_path(root) as saver:
            graph = build(saver)
            config = {"configurable": {"thread_id": "crash"}}
            latest = saver.get_tuple(config)
            assert latest is not None
            values = latest.checkpoint["channel_values"]
            turns = values["turns"]
            assert turns >= acknowledged, "an acknowledged turn was lost"
            ai = [m.content for m in values["messages"] if m.type == "ai"]
            assert ai == [f"reply {n}" for n in range(1, turns + 1)]  # the checkpoint is internally consistent
            assert values["ballast"] == "b" * (2000 + turns)
            # New input discards an unfinished step's saved writes (LangGraph semantics) and runs from the
            # last complete checkpoint.
            result = graph.invoke({"messages": [{"role": "user", "content": "after the crash"}]}, config)
            assert result["turns"] == turns + 1
            report = saver.fabric.verify(saver.session_of("crash"))
            assert report.ok, report
            torn = sum(
                1 for e in saver.fabric.replay(saver.session_of("crash")) if e.type == "eventloom.torn_tail_recovered"
            )
    assert torn >= 1, "kills should have landed mid-write at least once (chunked writes make that likely)"
