"""derived.sqlite's WAL is checkpointed by a background thread, not inside the commit of an event being projected,
and stays bounded; closing the memory stops the thread."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.storage.derived import checkpointer

THREAD = "zaxy-derived-checkpoint"


def _wait_for(condition, what: str) -> None:  # a deadline for a background thread, not a timing assertion
    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_background_checkpoints_keep_the_wal_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checkpointer, "START_FRAMES", 40)
    with MemoryFabric.from_path(tmp_path, durability="batch") as fabric:
        fabric.project()
        store = fabric.projector.derived
        assert int(store._writer.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) == checkpointer.WRITER_LIMIT_PAGES
        for i in range(60):  # one event at a time, as the MCP / hook path does
            fabric.append("s", "transcript.turn", {"role": "user", "text": f"event {i} about the blue kettle {i * 7}"})
            fabric.project(["s"])
        _wait_for(lambda: store.checkpointer.runs >= 1, "a background checkpoint")
        assert store.checkpointer.error is None
        # Bounded: once a checkpoint has copied every frame, the next write starts the WAL over. When that happens
        # depends on the thread and on readers holding frames back, so keep writing until it is seen (61 events
        # one at a time write ~1,600 frames with checkpoints off).
        deadline = time.monotonic() + 120
        previous = store.checkpointer.frames()
        for i in range(10_000):
            text = f"a later event {i}" if i else "the last one mentions a red teapot"
            fabric.append("s", "transcript.turn", {"role": "user", "text": text})
            fabric.project(["s"])
            frames = store.checkpointer.frames()
            assert frames is not None and previous is not None
            if frames < previous:
                break  # the WAL started over
            previous = frames
            assert time.monotonic() < deadline, "the WAL never started over"
        hits = fabric.query("red teapot", sessions=["s"], k=3).hits
        assert hits and hits[0].seq == 61
        assert store.checkpointer.error is None
        thread = store.checkpointer._thread
        assert thread is not None and thread.name == THREAD
    _wait_for(lambda: not thread.is_alive(), "the thread to stop")  # close() stopped it


def test_no_thread_below_the_threshold(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path, durability="batch") as fabric:
        fabric.append("s", "transcript.turn", {"role": "user", "text": "a small memory"})
        fabric.project()
        assert fabric.projector.derived.checkpointer.runs == 0


def test_a_running_checkpoint_never_holds_up_the_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the thread is inside a checkpoint (it holds its lock for the whole of it), commits that cross the next
    threshold only wake it: they never wait for that lock (here held by the test until the writes are done)."""
    import threading

    monkeypatch.setattr(checkpointer, "START_FRAMES", 20)
    with MemoryFabric.from_path(tmp_path, durability="batch") as fabric:
        fabric.project()
        store = fabric.projector.derived

        def write(count: int) -> None:
            for i in range(count):
                fabric.append("s", "transcript.turn", {"role": "user", "text": f"event {i} about the kettle {i * 7}"})
                fabric.project(["s"])

        write(30)
        _wait_for(lambda: store.checkpointer.runs >= 1, "a background checkpoint")
        thread = store.checkpointer._thread
        assert thread is not None and thread.is_alive()
        with store.checkpointer._lock:  # as if the thread were in a long checkpoint
            writer = threading.Thread(target=write, args=(30,))
            writer.start()
            writer.join(timeout=120)  # a deadline, not a timing assertion: the old code waited here for the lock
            assert not writer.is_alive(), "a commit waited for the checkpoint thread's lock"
        _wait_for(lambda: store.checkpointer.runs >= 2, "the woken thread's checkpoint")
