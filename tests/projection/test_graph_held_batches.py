"""An open embedded graph that nothing follows keeps the batches this process commits for its next sync (issue 23).

Bringing the graph up to date used to replay and re-plan from the log every event the catalog had just planned;
the batches the catalog committed are now written as they are when they line up with the graph's cursors. Past
``hold_events`` events the kept batches are dropped and the sync replays the log, as before. Either way the graph
is the one a fresh build from the log gives (same canonical dump).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from zaxy_agents.fabric import MemoryFabric

SESSION = "proj"


def _append(memory: MemoryFabric, start: int, count: int) -> None:
    for number in range(start, start + count):
        memory.append(SESSION, "task.created", {"task_id": f"t-{number}", "title": f"fix flaky test {number}"})
        memory.append(SESSION, "command.completed", {"command": f"pytest -k t{number}", "task_id": f"t-{number}"})
    memory.project([SESSION])


def _replays(memory: MemoryFabric, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, tuple[int, int]]]:
    """The spans of the log graph syncs re-plan (recorded; they still run)."""
    graph, calls = memory.projector.graph, []
    plan = graph._plan_into_graph

    def recorded(gaps: dict[str, tuple[int, int]]) -> Any:
        calls.append(dict(gaps))
        return plan(gaps)

    monkeypatch.setattr(graph, "_plan_into_graph", recorded)
    return calls


def _fresh_dump(root: Path, tmp_path: Path) -> list[str]:
    """The graph a new memory builds from the same log."""
    copy = tmp_path / "fresh"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".zaxy"))
    with MemoryFabric.from_path(copy) as memory:
        memory.project()
        return list(memory.projector.store.dump_lines())


def test_a_sync_writes_the_committed_batches_without_replaying_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as memory:
        _append(memory, 0, 3)
        assert memory.projector.store is not None  # the graph is opened and brought up to date here
        replays = _replays(memory, monkeypatch)
        for start in (3, 6):  # two more projections, then one sync that writes both
            _append(memory, start, 3)
        store = memory.projector.store
        assert replays == []
        assert store.cursors()[SESSION][0] == 18
        dump = list(store.dump_lines())
    assert dump == _fresh_dump(root, tmp_path)


def test_past_the_bound_the_sync_replays_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as memory:
        _append(memory, 0, 2)
        assert memory.projector.store is not None
        memory.projector.graph.writer.hold_events = 5  # more than this waits: nothing is kept, the sync replays
        replays = _replays(memory, monkeypatch)
        _append(memory, 2, 4)  # 8 events
        store = memory.projector.store
        assert replays == [{SESSION: (5, 12)}]
        dump = list(store.dump_lines())
    assert dump == _fresh_dump(root, tmp_path)


def test_a_reset_graph_forgets_what_it_kept(tmp_path: Path) -> None:
    """A rebuild empties the graph: batches kept for the old one must not be written into the new one."""
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as memory:
        _append(memory, 0, 2)
        assert memory.projector.store is not None
        _append(memory, 2, 2)  # kept for the next sync
        memory.reproject()
        dump = list(memory.projector.store.dump_lines())
    assert dump == _fresh_dump(root, tmp_path)


def test_a_following_writer_gathers_batches_and_a_sync_writes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server's writer gathers batches for ``follow_window`` seconds (one Kuzu write for many projections); a reader
    that needs the graph meanwhile writes what was gathered itself, without replaying the log."""
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as memory:
        _append(memory, 0, 2)
        graph = memory.projector.graph
        graph.writer.follow_window = 600.0  # longer than this test: only the sync below can write these batches
        assert memory.projector.follow_graph(create=True)
        assert memory.projector.flush()
        written = graph.written_events
        replays = _replays(memory, monkeypatch)
        for start in (2, 4, 6):
            _append(memory, start, 2)
        store = memory.projector.store
        assert replays == [] and store.cursors()[SESSION][0] == 16
        assert graph.written_events == written + 12  # the three projections, written by the sync
        dump = list(store.dump_lines())
    assert dump == _fresh_dump(root, tmp_path)
