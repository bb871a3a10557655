"""Contract: many processes and threads appending at once never duplicate or skip a seq, on every backend;
readers in other processes see new events without reopening anything."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import defaultdict
from pathlib import Path

from zaxy_agents.storage.conformance.harness import Harness

REPO = Path(__file__).resolve().parents[2]
WORKERS = 8
ITERATIONS = 60  # 40 single appends + 20 batches of three = 100 events per worker


def _run_writers(backend: Harness, sessions: int) -> None:
    env = {**os.environ, **backend.env()}
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.eventloom._concurrent_writer", str(w), str(ITERATIONS), str(sessions)],
            cwd=REPO,
            env=env,
        )
        for w in range(WORKERS)
    ]
    assert [child.wait(timeout=300) for child in children] == [0] * WORKERS


def _check_session(backend: Harness, session: str) -> dict[str, list[int]]:
    """Contiguous seqs, a valid chain, and each worker's events in the order it wrote them."""
    with backend.open() as log:
        events = list(log.replay(session))
        report = log.verify(session)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert report.ok and report.event_count == len(events)
    assert len({e.id for e in events}) == len(events)
    per_worker: dict[str, list[int]] = defaultdict(list)
    for event in events:
        per_worker[event.payload["worker"]].append(event.payload["n"])
    for numbers in per_worker.values():
        assert numbers == sorted(numbers)
    return per_worker


def test_eight_processes_append_to_one_session(backend: Harness) -> None:
    _run_writers(backend, sessions=1)
    per_worker = _check_session(backend, "s0")
    assert {worker: len(numbers) for worker, numbers in per_worker.items()} == {str(w): 100 for w in range(WORKERS)}
    assert all(numbers == list(range(100)) for numbers in per_worker.values())


def test_eight_processes_append_to_many_sessions(backend: Harness) -> None:
    _run_writers(backend, sessions=4)
    total = 0
    for session in ("s0", "s1", "s2", "s3"):
        total += sum(len(numbers) for numbers in _check_session(backend, session).values())
    assert total == WORKERS * 100
    with backend.open() as log:
        assert sorted(s.session for s in log.sessions()) == ["s0", "s1", "s2", "s3"]


def test_threads_share_one_log_object(backend: Harness) -> None:
    with backend.open(durability="batch") as log:

        def work(worker: int) -> None:
            for i in range(100):
                log.append("t", "note.added", {"w": worker, "i": i})

        threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert log.head("t").seq == 400
        assert log.verify("t").ok


def test_reader_in_another_process_sees_new_events_live(backend: Harness) -> None:
    env = {**os.environ, **backend.env()}
    reader = subprocess.Popen(
        [sys.executable, "-m", "tests.eventloom._live_reader", "live", "20"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "ready"
        with backend.open() as log:
            for i in range(20):
                log.append("live", "note.added", {"i": i})
        output, _ = reader.communicate(timeout=120)
    finally:
        reader.kill()
    seen = [tuple(map(int, line.split())) for line in output.splitlines()]
    assert seen == [(seq, seq - 1) for seq in range(1, 21)]
