"""Several processes project one event at a time into one memory (the MCP servers or hooks of several agents):
they take turns through derived.sqlite's writer lock file, read only what the others added, and every event of
every session ends up projected and found."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import threading
from pathlib import Path

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.storage.derived.store import DERIVED_FILE
from zaxy_agents.storage.derived.writer_queue import LOCK_SUFFIX, WriterQueue

WRITER = r"""
import sys
from zaxy_agents.fabric import MemoryFabric
root, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with MemoryFabric.from_path(root, durability="fsync") as fabric:
    for i in range(count):
        fabric.append(name, "transcript.turn", {"role": "user", "text": f"{name} note {i} about quokka{name}{i}"})
        fabric.project([name])
"""


def _lock_path(root: Path) -> Path:
    return root / ".zaxy" / (DERIVED_FILE + LOCK_SUFFIX)


def test_processes_projecting_one_event_at_a_time_all_land(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path, durability="batch") as fabric:
        fabric.append("base", "transcript.turn", {"role": "user", "text": "the memory exists"})
        fabric.project()
    count = 25
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name, str(count)], stderr=subprocess.PIPE)
        for name in ("alpha", "beta", "gamma")
    ]
    for writer in writers:
        assert writer.wait(timeout=600) == 0, writer.stderr.read().decode()[-2000:] if writer.stderr else ""
    assert _lock_path(tmp_path).exists()
    with MemoryFabric.from_path(tmp_path, durability="batch") as fabric:
        for name in ("alpha", "beta", "gamma"):
            assert fabric.projector.catalog.cursors[name][0] == count
            for i in (0, count // 2, count - 1):
                hits = fabric.query(f"quokka{name}{i}", k=3, sessions=[name]).hits
                assert [(h.session, h.seq) for h in hits][:1] == [(name, i + 1)]


def test_a_write_waits_for_the_process_holding_the_lock(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path, durability="batch") as fabric:
        fabric.append("s", "transcript.turn", {"role": "user", "text": "first"})
        fabric.project()
        holder = subprocess.Popen(
            [sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
             "print('held', flush=True); sys.stdin.readline()", str(_lock_path(tmp_path))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            fabric.append("s", "transcript.turn", {"role": "user", "text": "second wombat"})
            done = threading.Event()
            worker = threading.Thread(target=lambda: (fabric.project(["s"]), done.set()))
            worker.start()
            worker.join(0.5)
            assert not done.is_set()  # waiting for its turn, not writing beside the holder
            # a queue that cannot get the lock within its timeout says so (BEGIN IMMEDIATE then decides)
            other = WriterQueue(str(tmp_path / ".zaxy" / DERIVED_FILE))
            with other.turn(0.01) as got:
                assert got is False
            other.close()
        finally:
            assert holder.stdin is not None
            holder.stdin.write("\n")
            holder.stdin.flush()
            holder.wait(timeout=60)
        worker.join(120)
        assert done.is_set()
        assert [h.seq for h in fabric.query("wombat", k=1, sessions=["s"]).hits] == [2]
    with open(_lock_path(tmp_path)) as handle:  # released on close: anyone can take it
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
