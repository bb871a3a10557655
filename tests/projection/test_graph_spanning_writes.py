"""A graph caught up from the log in many batches is written in one Kuzu transaction (issue 24, graph.kuzu size).

Kuzu 0.11.3's COMMIT after a COPY rewrites every node group it touched in new pages and cannot reuse the old ones
for the next, larger rewrite: a 100k-event graph caught up in five 20,000-event transactions was 2.2x the file
written in one (docs/benchmarks.md, "Graph size"). So the catch-up plans ``batch_events`` at a time (bounded planner
memory) and applies every batch inside one ``spanning_transaction`` of up to ``span_events``. Checked here on a real
Kuzu file: the number of commits, the same graph as one commit per batch, and a failure half-way that leaves nothing
of the span behind.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import kuzu
import pytest

from tests.projection._two_sessions import write_two_sessions
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection import graph_replay, rebuild
from zaxy_agents.projection.rebuild_status import RebuildCancelled
from zaxy_agents.storage.files import kuzu_store


def _memory(root: Path) -> None:
    write_two_sessions(root)
    shutil.rmtree(root / ".zaxy" / "graph.kuzu", ignore_errors=True)
    for leftover in (root / ".zaxy").glob("graph.kuzu*"):
        leftover.unlink()


@contextmanager
def _commits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The COMMIT statements Kuzu runs meanwhile (every connection of this process)."""
    seen: list[str] = []
    execute = kuzu.Connection.execute

    def counting(self: kuzu.Connection, query: object, *args: object, **kwargs: object) -> object:
        if isinstance(query, str) and query.strip().upper() == "COMMIT":
            seen.append(query)
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(kuzu.Connection, "execute", counting)
    yield seen
    monkeypatch.setattr(kuzu.Connection, "execute", execute)


def _third_apply_fails(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], Callable[..., None]]:
    """The store's third ``apply`` fails like a full disk: (the applies counted, the real ``apply``)."""
    applied: list[int] = []
    apply = kuzu_store.KuzuProjectionStore.apply

    def failing_third(self: kuzu_store.KuzuProjectionStore, batch: object) -> None:
        applied.append(1)
        if len(applied) == 3:
            raise RuntimeError("disk full (test)")
        apply(self, batch)  # type: ignore[arg-type]

    monkeypatch.setattr(kuzu_store.KuzuProjectionStore, "apply", failing_third)
    return applied, apply


def _caught_up(root: Path, *, batch_events: int, span_events: int, min_events: int = 0) -> MemoryFabric:
    memory = MemoryFabric.from_path(root)
    memory.projector.graph.batch_events = batch_events
    memory.projector.graph.span_events = span_events
    memory.projector.graph.span_min_events = min_events
    return memory


def test_many_batches_are_one_transaction_with_the_same_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _memory(tmp_path / "loom")
    monkeypatch.setattr(graph_replay, "PREFETCH_EVENTS", 5)  # 96 events planned 10 at a time: 10 batches
    contents = {}
    # a span of one batch commits each (and its empty successor at the end); 1000 events: one commit; 40: three
    for span_events, expected_commits in ((1, 11), (1000, 1), (40, 3)):
        root = tmp_path / f"copy-{span_events}"
        shutil.copytree(tmp_path / "loom", root)
        with _commits(monkeypatch) as commits, _caught_up(root, batch_events=10, span_events=span_events) as memory:
            store = memory.projector.store
            assert store is not None and memory.projector.graph.error is None
            assert len(commits) == expected_commits, span_events
            assert {s: seq for s, (seq, _h) in store.cursors().items()} == {"alpha": 48, "beta": 48}
            contents[span_events] = sorted(store.dump_lines())
    root = tmp_path / "copy-small"  # a catch-up below span_min_events commits batch by batch
    shutil.copytree(tmp_path / "loom", root)
    with _commits(monkeypatch) as commits, _caught_up(root, batch_events=10, span_events=1000, min_events=97) as memory:
        assert memory.projector.store is not None and len(commits) == 10
        assert sorted(memory.projector.store.dump_lines()) == contents[1000]
    assert contents[1] == contents[1000] == contents[40]


def test_a_failure_inside_the_span_leaves_none_of_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "loom"
    _memory(root)
    monkeypatch.setattr(graph_replay, "PREFETCH_EVENTS", 5)  # 10 batches of 10 events
    _applied, apply = _third_apply_fails(monkeypatch)
    with _caught_up(root, batch_events=10, span_events=1000) as memory:
        assert memory.projector.store is None  # closed: the span rolled back
        assert "disk full (test)" in (memory.projector.graph.error or "")
    monkeypatch.setattr(kuzu_store.KuzuProjectionStore, "apply", apply)
    database = kuzu.Database(str(root / ".zaxy" / "graph.kuzu"))
    try:  # nothing of the two batches applied before the failure was committed
        rows = kuzu.Connection(database).execute("MATCH (e:Event) RETURN count(e)").get_all()
    finally:
        database.close()
    assert rows == [[0]]
    with MemoryFabric.from_path(root) as memory:  # left marked dirty: rebuilt from the log on the next open
        store = memory.projector.store
        assert store is not None
        assert {s: seq for s, (seq, _h) in store.cursors().items()} == {"alpha": 48, "beta": 48}


def _reprojected(root: Path, monkeypatch: pytest.MonkeyPatch, *, span: bool) -> tuple[str, int]:
    """``zaxy reproject``'s rebuild of ``root`` with 10-event chunks, its graph spanning one transaction or not: the
    digest and the number of COMMITs."""
    monkeypatch.setattr(rebuild, "REBUILD_BATCH_EVENTS", 10)  # the writer gathers ~10 events per write
    with MemoryFabric.from_path(root) as memory:
        memory.projector.batch_events = 10
        memory.projector.graph.span_events = 1000
        memory.projector.graph.span_min_events = 0 if span else 10**9
        with _commits(monkeypatch) as commits:
            digest = memory.reproject()
            count = len(commits)
        assert memory.projector.graph.error is None and memory.projector.graph.writer.span_writes is False
        assert memory.projector.graph.store is not None
    return digest, count


def test_a_reproject_writes_its_graph_in_one_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _memory(tmp_path / "loom")
    shutil.copytree(tmp_path / "loom", tmp_path / "spanned")
    digest, commits = _reprojected(tmp_path / "loom", monkeypatch, span=False)
    assert commits > 3  # the writer thread committed each gathered batch
    spanned, one = _reprojected(tmp_path / "spanned", monkeypatch, span=True)
    assert (spanned, one) == (digest, 1)
    with MemoryFabric.from_path(tmp_path / "spanned") as memory:  # marked clean: opened as it is, not rebuilt
        assert memory.projector.store is not None and memory.projection_digest() == digest
        assert not any("rebuilt from the log" in warning for warning in memory.projector.derived.notices)


def test_a_failure_inside_a_reprojects_span_still_ends_with_the_whole_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "loom"
    _memory(root)
    shutil.copytree(root, tmp_path / "truth")
    digest, _count = _reprojected(tmp_path / "truth", monkeypatch, span=False)
    monkeypatch.setattr(rebuild, "REBUILD_BATCH_EVENTS", 10)
    applied, apply = _third_apply_fails(monkeypatch)
    with MemoryFabric.from_path(root) as memory:
        memory.projector.batch_events = 10
        memory.projector.graph.span_min_events = 0
        # the span rolls back and closes the store, marked dirty; the writer's next batch reopens it (the dirty
        # file deleted) and catches the graph up from the log: the rebuild ends with the whole graph
        assert memory.reproject() == digest
        assert len(applied) > 3
    monkeypatch.setattr(kuzu_store.KuzuProjectionStore, "apply", apply)
    with MemoryFabric.from_path(root) as memory:
        assert memory.projector.store is not None and memory.projection_digest() == digest


def test_a_cancel_inside_a_reprojects_span_rolls_it_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "loom"
    _memory(root)
    shutil.copytree(root, tmp_path / "truth")
    digest, _count = _reprojected(tmp_path / "truth", monkeypatch, span=False)
    applied: list[int] = []
    apply = kuzu_store.KuzuProjectionStore.apply
    with MemoryFabric.from_path(root) as memory:

        def cancelling_second(self: kuzu_store.KuzuProjectionStore, batch: object) -> None:
            applied.append(1)
            if len(applied) == 2:  # the writer thread, inside its span: Ctrl-C in `zaxy reproject`
                assert memory.projector.graph.writer._writer_span is not None
                memory.projector.cancel_rebuild()
            apply(self, batch)  # type: ignore[arg-type]

        monkeypatch.setattr(kuzu_store.KuzuProjectionStore, "apply", cancelling_second)
        memory.projector.batch_events = 10
        memory.projector.graph.span_min_events = 0
        with pytest.raises(RebuildCancelled):
            memory.reproject()
        monkeypatch.setattr(kuzu_store.KuzuProjectionStore, "apply", apply)
    with MemoryFabric.from_path(root) as memory:  # rolled back and marked dirty: rebuilt, then caught up
        memory.project()
        assert memory.projector.store is not None and memory.projection_digest() == digest
