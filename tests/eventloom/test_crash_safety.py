"""SIGKILL at random points never loses an acknowledged event and always leaves a verifiable log (every
backend); torn tails and their recovery are JSONL-specific."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from zaxy_agents.storage.conformance.harness import Harness, JsonlHarness
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog
from zaxy_agents.storage.files.torn_tail import TORN_DIR_NAME, TORN_RECOVERY_TYPE

WRITER = [sys.executable, "-m", "tests.eventloom._crash_writer"]
REPO = Path(__file__).resolve().parents[2]


def _kill_after(args: list[str], env: dict[str, str], delay: float) -> int:
    """Start a writer, SIGKILL it ``delay`` seconds after its first acknowledged append (so a slow start-up
    on a loaded machine never makes a round meaningless), and return the last seq it acknowledged."""
    child = subprocess.Popen([*WRITER, *args], stdout=subprocess.PIPE, text=True, cwd=REPO, env={**os.environ, **env})
    assert child.stdout is not None
    first = child.stdout.readline()
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    output, _ = child.communicate()
    acknowledged = [int(line) for line in (first + output).split()]
    return acknowledged[-1] if acknowledged else 0


def _kill_and_recover(backend: Harness, args: list[str], rounds: int, seed: int) -> int:
    """Kill writers repeatedly; after each, a new writer appends and the log verifies. Returns recoveries."""
    rng = random.Random(seed)
    recoveries = 0
    for _round in range(rounds):
        acknowledged = _kill_after(args, backend.env(), rng.uniform(0.05, 0.4))
        with backend.open() as log:
            event = log.append("crash", "note.added", {"after_crash": True})
            assert event.seq > acknowledged, "an acknowledged event was lost"
            report = log.verify("crash")
            assert report.ok, report
            assert report.event_count == event.seq
            recoveries = sum(1 for e in log.replay("crash") if e.type == TORN_RECOVERY_TYPE)
    assert event.seq > 3 * rounds, "the writers were killed before they appended anything"
    return recoveries


def test_random_sigkill_then_open_and_verify(backend: Harness) -> None:
    recoveries = _kill_and_recover(backend, ["normal"], rounds=8, seed=1234)
    if backend.name == "postgresql":
        assert recoveries == 0  # a killed transaction leaves nothing to recover


def test_sigkill_mid_line_leaves_a_torn_tail_that_is_recovered(log_dir: Path) -> None:
    backend = JsonlHarness(log_dir)
    assert _kill_and_recover(backend, ["chunked", str(log_dir)], rounds=12, seed=99) >= 1, (
        "chunked writes killed mid-line should have produced torn tails"
    )
    assert any((log_dir / TORN_DIR_NAME).iterdir())


def test_torn_tail_is_moved_to_a_sidecar_and_recorded(log_dir: Path) -> None:
    with JsonlEventLog(log_dir) as log:
        log.append_many("s", [{"type": "note.added", "payload": {"i": i}} for i in range(3)])
    path = log_dir / "s.jsonl"
    torn = b'{"actor":"agent","hash":"abc","id":"evt_1","payload":{"i":'
    with open(path, "ab") as handle:
        handle.write(torn)
    with JsonlEventLog(log_dir) as reader:
        report = reader.verify("s")
        assert report.ok and report.torn_tail_bytes == len(torn)
        assert [e.seq for e in reader.replay("s")] == [1, 2, 3]
        assert reader.head("s").seq == 3
    with JsonlEventLog(log_dir) as writer:
        event = writer.append("s", "note.added", {"i": 3})
        assert event.seq == 5
        recovery = writer.get("s", 4)
        assert recovery.type == TORN_RECOVERY_TYPE
        assert recovery.payload["torn_bytes"] == len(torn)
        sidecar = log_dir / recovery.payload["sidecar"]
        assert sidecar.read_bytes() == torn
        assert writer.verify("s").ok


def test_file_that_is_entirely_torn_recovers_to_an_empty_chain(log_dir: Path) -> None:
    log_dir.mkdir(parents=True)
    (log_dir / "s.jsonl").write_bytes(b'{"actor":"ag')
    with JsonlEventLog(log_dir) as log:
        event = log.append("s", "note.added", {})
        assert event.seq == 2 and log.get("s", 1).type == TORN_RECOVERY_TYPE
        assert log.verify("s").ok


def test_event_missing_only_its_newline_is_completed_not_discarded(log_dir: Path) -> None:
    with JsonlEventLog(log_dir) as log:
        log.append_many("s", [{"type": "note.added", "payload": {"i": i}} for i in range(2)])
    path = log_dir / "s.jsonl"
    path.write_bytes(path.read_bytes()[:-1])  # crash between the last byte and its newline
    with JsonlEventLog(log_dir) as log:
        report = log.verify("s")
        assert report.ok and report.event_count == 2 and report.torn_tail_bytes == 0
        assert log.append("s", "note.added", {"i": 2}).seq == 3
        assert [e.type for e in log.replay("s")] == ["note.added"] * 3
        assert log.verify("s").ok
