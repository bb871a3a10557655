"""Several processes and threads appending to one session never duplicate or skip a seq."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

from zaxy_agents.eventloom.jsonl_log import JsonlEventLog

REPO = Path(__file__).resolve().parents[2]


def test_four_processes_times_500_appends(log_dir: Path) -> None:
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.eventloom._concurrent_writer", str(log_dir), str(w), "500"], cwd=REPO
        )
        for w in range(4)
    ]
    assert [child.wait(timeout=300) for child in children] == [0, 0, 0, 0]
    with JsonlEventLog(log_dir) as log:
        events = list(log.replay("shared"))
        assert [e.seq for e in events] == list(range(1, 2001))
        assert log.verify("shared").ok
        per_worker = Counter(e.payload["worker"] for e in events)
        assert per_worker == {"0": 500, "1": 500, "2": 500, "3": 500}
        for worker in "0123":
            assert [e.payload["i"] for e in events if e.payload["worker"] == worker] == list(range(500))


def test_threads_share_one_log_object(log_dir: Path) -> None:
    with JsonlEventLog(log_dir, durability="batch") as log:

        def work(worker: int) -> None:
            for i in range(200):
                log.append("t", "note.added", {"w": worker, "i": i})

        threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert log.head("t").seq == 800
        assert log.verify("t").ok
