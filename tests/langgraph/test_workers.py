"""Several worker processes on one Eventloom (a folder, or one PostgreSQL database): LangGraph checkpointer,
store and Memory Checkout stay consistent, and every worker sees the others' writes without reopening."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore

WORKERS, TURNS = 3, 4


def test_worker_processes_share_checkpoints_store_and_checkout(eventloom: Path) -> None:
    env = {**os.environ, "ZAXY_EVENTLOOM_PATH": str(eventloom)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.langgraph._worker", f"w{n}", str(TURNS)],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(WORKERS)
    ]
    try:
        for process in workers:
            assert process.stdout.readline().strip() == "written"
        reports = []
        for process in workers:
            out, _ = process.communicate("go\n", timeout=120)
            assert process.returncode == 0
            reports.append(json.loads(out))
    finally:
        for process in workers:
            if process.poll() is None:
                process.kill()
    every_item = sorted(f"w{n}-{turn}" for n in range(WORKERS) for turn in range(TURNS))
    checkpoints_per_invoke = 3  # the input, the step that reads it, and the step after the reply
    for report in reports:
        assert report["items"] == every_item  # the other workers' puts, seen without reopening
        assert report["team_parents_known"]
        assert report["team_checkpoints"] == WORKERS * TURNS * checkpoints_per_invoke  # none lost under contention
        assert report["own_messages"] == 2 * TURNS
        assert report["checkout_mentions"] >= 3
    with ZaxyCheckpointer.from_path(eventloom) as saver, ZaxyStore.from_path(eventloom) as store:
        team = list(saver.list({"configurable": {"thread_id": "team"}}))
        assert len(team) == reports[0]["team_checkpoints"]
        texts = [
            m.content
            for m in saver.get_tuple({"configurable": {"thread_id": "w1"}}).checkpoint["channel_values"]["messages"]
        ]
        assert texts[-2:] == [f"w1 turn {TURNS - 1}", f"noted: w1 turn {TURNS - 1}"]
        assert len(store.search(("team", "notes"), limit=100)) == WORKERS * TURNS
        assert saver.fabric.verify(saver.session_of("team")).ok
