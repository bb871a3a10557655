"""The embedded graph gives its buffer pool back between write transactions (LadybugDB keeps what a write loaded).

At 100k events a catch-up from the log failed with "the buffer pool is full" in the store's 256 MB pool: the engine
keeps the pages earlier transactions loaded, and a COPY cannot evict them. After each write's checkpoint the store
reopens the database when the pool is fuller than ``RELIEF_SHARE``. Here the share is 0 (reopen after every write)
and readers run in other threads meanwhile: they wait for the swap, never fail, and the graph is the same.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.storage.files import ladybug_store

SESSION = "relief"


def _seed(root: Path, count: int) -> None:
    drafts = [
        {"type": "task.created", "payload": {"task_id": f"T-{i % 50}", "title": f"item {i}"}}
        if i % 2
        else {
            "type": "command.completed",
            "payload": {"command": f"make c{i % 70}", "exit_code": 0, "task_id": f"T-{i % 50}"},
        }
        for i in range(count)
    ]
    with MemoryFabric.from_path(root, use_graph=False) as memory:
        memory.append_many(SESSION, drafts)


def test_a_catch_up_reopens_the_database_between_transactions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _seed(tmp_path / "loom", 1200)
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        expected = memory.projection_digest()  # one transaction, no reopen asked
    for leftover in (tmp_path / "loom" / ".zaxy").glob("graph.lbug*"):
        leftover.unlink()

    monkeypatch.setattr(ladybug_store, "RELIEF_SHARE", 0.0)
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        memory.projector.graph.batch_events = 200  # a write per 1,000-event planning chunk: two transactions
        store = memory.projector.graph.open()
        assert store is not None and store.reopened == 0
        failures: list[BaseException] = []
        done = threading.Event()

        def read() -> None:
            while not done.is_set():
                try:
                    store.stats()
                    store.entities_as_of("9999-12-31T00:00:00Z", limit=50)
                except BaseException as exc:
                    failures.append(exc)
                    return

        readers = [threading.Thread(target=read) for _ in range(2)]
        for reader in readers:
            reader.start()
        try:
            memory.projector.graph.sync()
        finally:
            done.set()
            for reader in readers:
                reader.join(timeout=60)
        assert failures == []
        assert memory.projector.graph.error is None
        assert store.reopened >= 2  # after each write transaction
        assert store.cursors()[SESSION][0] == 1200
        assert memory.projection_digest() == expected


def test_a_transaction_too_large_for_the_pool_is_retried_smaller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that does not fit in the buffer pool fails inside the engine; the graph is then rebuilt from the log
    at once in transactions half as large (the failing file is never trusted). The engine's failure is injected for
    transactions over 1,500 events (the real one needs ~100 MB per 20,000 events: too large for a test)."""
    _seed(tmp_path / "loom", 4000)
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        expected = memory.projection_digest()
    for leftover in (tmp_path / "loom" / ".zaxy").glob("graph.lbug*"):
        leftover.unlink()

    apply = ladybug_store.LadybugProjectionStore.apply
    sizes: list[int] = []

    def pool_of_1500_events(store: ladybug_store.LadybugProjectionStore, batch: object) -> None:
        sizes.append(batch.event_count)
        if batch.event_count > 1500:
            raise RuntimeError(
                "Buffer manager exception: Unable to allocate memory! The buffer pool is full and no memory could "
                "be freed!"
            )
        apply(store, batch)

    monkeypatch.setattr(ladybug_store.LadybugProjectionStore, "apply", pool_of_1500_events)
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        memory.projector.graph.batch_events = 4000
        with pytest.warns(UserWarning, match="did not fit in the buffer pool"):
            store = memory.projector.store
        assert store is not None and memory.projector.graph.error is None
        assert sizes[0] == 4000 and memory.projector.graph.batch_events == 1000 and max(sizes[-4:]) <= 1000
        assert store.cursors()[SESSION][0] == 4000
        assert memory.projection_digest() == expected
