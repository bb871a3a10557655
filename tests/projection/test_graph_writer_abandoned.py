"""A graph writer thread abandoned by a cancelled rebuild never touches the graph again (issue 24; fixed in 3476f63).

A rebuild cancelled inside the writer's span stops the writer thread without waiting for it (the write it rolls back
holds the graph lock) and resumes writing as it returns. If the thread had not yet dequeued its stop by then, it
used to open the graph again — after its owner had closed it — and the next open of the memory found the graph
"held by another process". That test (test_graph_spanning_writes.py) caught it 2-3 times in 14 runs; here the
window is held open on purpose: the writer thread is parked at its queue's blocking ``get`` between the cancel and
its stop, the memory is closed, and only then is the thread let go. With the fix reverted this test fails every
time (the thread opens the graph again); with it, the thread drops what it dequeues and ends.
"""

from __future__ import annotations

import queue
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.projection._two_sessions import write_two_sessions
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection import rebuild
from zaxy_agents.projection.graph_sync import GraphSync
from zaxy_agents.projection.rebuild_status import RebuildCancelled
from zaxy_agents.storage.files import kuzu_store

GATE_TIMEOUT = 60.0  # a safety net only: every wait below ends as soon as the other side acts


class _GatedQueue(queue.Queue[Any]):
    """The writer's queue, whose next blocking ``get`` once :attr:`armed` is held until :attr:`release` (the
    non-blocking reads of a cancel's drain pass)."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = threading.Event()
        self.held = threading.Event()
        self.release = threading.Event()

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        if block and self.armed.is_set():
            self.armed.clear()
            self.held.set()
            self.release.wait(GATE_TIMEOUT)
        return super().get(block, timeout)


def test_a_writer_abandoned_after_a_cancel_does_not_reopen_the_graph_its_owner_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "loom"
    write_two_sessions(root)
    shutil.copytree(root, tmp_path / "truth")
    with MemoryFabric.from_path(tmp_path / "truth") as memory:
        truth = memory.projection_digest()

    applied: list[threading.Thread] = []
    apply = kuzu_store.KuzuProjectionStore.apply
    gate = _GatedQueue()
    after_close: list[str] = []  # what the graph saw once its owner closed it
    closed = threading.Event()
    open_graph = GraphSync.open

    def recording_open(self: GraphSync) -> Any:
        if closed.is_set():
            after_close.append(f"open from {threading.current_thread().name}")
        return open_graph(self)

    monkeypatch.setattr(GraphSync, "open", recording_open)
    with MemoryFabric.from_path(root) as memory:
        writer = memory.projector.graph.writer
        monkeypatch.setattr(writer, "_queue", gate)  # before the rebuild starts the writer thread

        def cancelling_second(self: kuzu_store.KuzuProjectionStore, batch: object) -> None:
            if closed.is_set():
                after_close.append("apply")
            applied.append(threading.current_thread())
            if len(applied) == 2:  # the writer thread, inside its span: Ctrl-C in `zaxy reproject`
                assert writer._writer_span is not None
                memory.projector.cancel_rebuild()
                gate.armed.set()  # its next wait for work is held: before it dequeues the cancel and its stop
                # The statement fails as the cancel's interrupt makes it fail in Kuzu, here and not at Kuzu's next
                # check: the rebuild's resume (as it returns) could clear the interrupt before that check, and the
                # write would go on inside its span instead of rolling back.
                raise RuntimeError("Interrupted.")
            apply(self, batch)  # type: ignore[arg-type]

        monkeypatch.setattr(kuzu_store.KuzuProjectionStore, "apply", cancelling_second)
        monkeypatch.setattr(rebuild, "REBUILD_BATCH_EVENTS", 10)  # the writer gathers ~10 events per write
        memory.projector.batch_events = 10
        memory.projector.graph.span_min_events = 0  # every write inside the writer's span
        with pytest.raises(RebuildCancelled):
            memory.reproject()
        assert gate.held.wait(GATE_TIMEOUT), "the writer thread never came back to its queue after the cancel"
        thread = applied[1]
        assert thread is not threading.current_thread() and thread.is_alive()
        assert memory.projector.graph.writer._thread is None  # stopped without waiting: the rebuild has returned
        assert None in gate.queue  # its stop is queued, not read yet
        graph = memory.projector.graph
    closed.set()  # the owner closed the memory while the thread still holds its cancel and its stop unread

    gate.release.set()
    thread.join(GATE_TIMEOUT)
    assert not thread.is_alive()
    assert after_close == []  # nothing reopened or wrote the graph
    assert graph.store is None
    closed.clear()

    monkeypatch.setattr(kuzu_store.KuzuProjectionStore, "apply", apply)
    with MemoryFabric.from_path(root) as memory:  # the span was rolled back and marked dirty: rebuilt, caught up
        memory.project()
        assert memory.projector.store is not None, memory.projector.graph.unavailable
        assert memory.projection_digest() == truth
