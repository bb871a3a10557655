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
