"""derived.sqlite's WAL is checkpointed by a background thread, not inside the commit of an event being projected,
and stays bounded; closing the memory stops the thread."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.storage.derived import checkpointer

THREAD = "zaxy-derived-checkpoint"


def _wal_frames(path: Path) -> int:
    """Frames in the WAL (a PASSIVE checkpoint from another connection reports them and copies what it can)."""
    db = sqlite3.connect(path)
    try:
        return int(db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1])
    finally:
        db.close()


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
        fabric.append("s", "transcript.turn", {"role": "user", "text": "the last one mentions a red teapot"})
        fabric.project(["s"])
        hits = fabric.query("red teapot", sessions=["s"], k=3).hits
        assert hits and hits[0].seq == 61
        # the WAL restarted after a checkpoint: it holds the commits since then, not the 61 events' pages (about
        # 1,600 frames with checkpoints off; ~100 on an idle machine, ~250 when the thread runs late under load)
        assert _wal_frames(store.path) < 600
        thread = store.checkpointer._thread
        assert thread is not None and thread.name == THREAD
    _wait_for(lambda: not thread.is_alive(), "the thread to stop")  # close() stopped it


def test_no_thread_below_the_threshold(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path, durability="batch") as fabric:
        fabric.append("s", "transcript.turn", {"role": "user", "text": "a small memory"})
        fabric.project()
        assert fabric.projector.derived.checkpointer.runs == 0
