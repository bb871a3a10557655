"""The stored copy of a long thread's latest checkpoint (checkpoints/latest.py): a cold ``get_state`` reads it
instead of replaying the thread, returns exactly what the replay returns, and never serves a copy the log's
head no longer matches (a later step, another writer, an unreadable copy); deleting the thread deletes it. On a
shared backend (PostgreSQL: each worker has its own derived folder) no copy is kept."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.erasure_helpers import files_containing
from tests.langgraph.test_dropin_checkpointer import echo_graph, say
from zaxy_agents.checkpoints import latest
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer

SSN = "078-05-1120"


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


@pytest.fixture(autouse=True)
def short_threads_count_as_long(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(latest, "MIN_EVENTS", 8)  # a few turns instead of hundreds keep the test fast


def _copies(root: Path) -> list[tuple[str, str, int]]:
    rows = []
    for path in root.rglob(f"*{latest.SUFFIX}"):
        with sqlite3.connect(path) as conn:
            rows += conn.execute("SELECT session, checkpoint_id, head_seq FROM latest").fetchall()
    return rows


def _replayed(root: Path, thread: str) -> Any:
    """The latest tuple as a replay builds it (the saver's stored copies switched off)."""
    with ZaxyCheckpointer.from_path(root) as saver:
        saver._store.latest = None
        return saver.get_tuple(_config(thread))


def _same(a: Any, b: Any) -> None:
    assert a.config == b.config and a.parent_config == b.parent_config
    assert a.checkpoint == b.checkpoint
    assert a.metadata == b.metadata
    assert a.pending_writes == b.pending_writes


def test_a_cold_get_state_reads_the_stored_copy_and_matches_the_replay(tmp_path: Path) -> None:
    eventloom = tmp_path / "loom"
    with ZaxyCheckpointer.from_path(eventloom) as writer:
        graph = echo_graph(writer)
        for turn in range(6):
            say(graph, "long", f"question {turn}")
        say(graph, "short", "hi")  # read again below: no copy for a short thread
    copies = _copies(eventloom)
    assert [row[0] for row in copies] == [writer.session_of("long")]  # written when the writer closed

    with ZaxyCheckpointer.from_path(eventloom) as cold:
        state = echo_graph(cold).get_state(_config("long"))
        assert not cold._store.views.loaded(cold.session_of("long"))  # served without replaying the thread
        assert [m.content for m in state.values["messages"]][-2:] == ["question 5", "echo question 5"]
        stored = cold.get_tuple(_config("long"))
    _same(stored, _replayed(eventloom, "long"))

    # The thread goes on from the copy: the next turn sees the whole history.
    with ZaxyCheckpointer.from_path(eventloom) as cold:
        assert say(echo_graph(cold), "long", "question 6")[-4:] == [
            "question 5", "echo question 5", "question 6", "echo question 6"
        ]  # fmt: skip


def test_a_stale_or_unreadable_copy_is_never_served(tmp_path: Path) -> None:
    eventloom = tmp_path / "loom"
    with ZaxyCheckpointer.from_path(eventloom) as writer:
        graph = echo_graph(writer)
        for turn in range(6):
            say(graph, "long", f"question {turn}")
    (_session, old_id, head) = _copies(eventloom)[0]

    # Another writer adds a step without refreshing the copy: the head moved, the copy is stale.
    with ZaxyCheckpointer.from_path(eventloom) as other:
        other._store.latest = None
        say(echo_graph(other), "long", "a later question")
    with ZaxyCheckpointer.from_path(eventloom) as cold:
        state = echo_graph(cold).get_state(_config("long"))
        assert state.values["messages"][-1].content == "echo a later question"
        assert state.config["configurable"]["checkpoint_id"] != old_id
    rows = _copies(eventloom)  # replaced by the cold read's replay, at the new head
    assert len(rows) == 1 and rows[0][2] > head and rows[0][1] == state.config["configurable"]["checkpoint_id"]

    # A damaged copy (its head still matching) falls back to the replay too.
    path = next(eventloom.rglob(f"*{latest.SUFFIX}"))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE latest SET body = x'c1c1c1'")
    with ZaxyCheckpointer.from_path(eventloom) as cold:
        _same(cold.get_tuple(_config("long")), _replayed(eventloom, "long"))


def test_a_put_after_a_served_copy_still_detects_another_writer(tmp_path: Path) -> None:
    eventloom = tmp_path / "loom"
    with ZaxyCheckpointer.from_path(eventloom) as writer:
        graph = echo_graph(writer)
        for turn in range(6):
            say(graph, "long", f"question {turn}")
    with ZaxyCheckpointer.from_path(eventloom) as cold, ZaxyCheckpointer.from_path(eventloom) as other:
        seen = cold.get_tuple(_config("long"))  # from the copy
        assert not cold._store.views.loaded(cold.session_of("long"))
        say(echo_graph(other), "long", "meanwhile")
        checkpoint = {**seen.checkpoint, "id": "1f0" + seen.checkpoint["id"][3:-1] + "f"}
        cold.put(seen.config, checkpoint, {"source": "update", "step": 99}, {})
        kinds = [e.type for e in cold.fabric.log.replay(cold.session_of("long"))]
        assert "checkpoint.concurrent_write" in kinds


def test_delete_thread_deletes_the_stored_copy(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with ZaxyCheckpointer.from_path(root) as writer:
        graph = echo_graph(writer)
        say(graph, "dana", f"my SSN is {SSN}")
        for turn in range(5):
            say(graph, "dana", f"question {turn}")
    assert any(str(path).endswith(latest.SUFFIX) for path in files_containing(root, SSN))
    with ZaxyCheckpointer.from_path(root) as saver:
        saver.delete_thread("dana")
        assert files_containing(root, SSN) == []
        assert saver.get_tuple(_config("dana")) is None


def test_an_erasure_by_a_process_without_a_saver_deletes_the_stored_copy(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with ZaxyCheckpointer.from_path(root) as writer:
        graph = echo_graph(writer)
        for turn in range(5):
            say(graph, "dana", f"question {turn}")
        say(graph, "dana", f"my SSN is {SSN}")
        session = writer.session_of("dana")
    assert files_containing(root, SSN)
    with MemoryFabric.from_path(root) as fabric:  # e.g. `zaxy memory erase` in another process
        fabric.erase_session(session, actor="admin", reason="request")
    assert files_containing(root, SSN) == []
    assert _copies(root) == []


def test_no_copy_is_kept_on_a_shared_backend(eventloom: Path) -> None:
    """Files: the copy is written; PostgreSQL: none (another worker's erasure could not reach it), and the cold
    read replays; both answer the same."""
    with ZaxyCheckpointer.from_path(eventloom) as writer:
        graph = echo_graph(writer)
        for turn in range(6):
            say(graph, "long", f"question {turn}")
        shared = writer._store.latest is None
    assert shared == (os.environ.get("ZAXY_BACKEND", "").startswith("postgres"))
    assert bool(_copies(eventloom)) is not shared
    with ZaxyCheckpointer.from_path(eventloom) as cold:
        state = echo_graph(cold).get_state(_config("long"))
        assert state.values["messages"][-1].content == "echo question 5"
