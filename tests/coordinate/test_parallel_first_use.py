"""A fabric used first by several threads at once (LangGraph runs a Send fan-out's nodes in threads) opens its
projection once: before, each thread opened its own projector on the same derived store, and the losers failed
with ``database is locked`` (seen in examples/incident-mission)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection import projector as projector_module


def test_parallel_first_use_opens_the_projection_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with MemoryFabric.from_path(tmp_path / "eventloom") as seed:
        for n in range(20):
            seed.append("ops", "command.completed", {"command": f"pytest -k case{n}", "exit_code": n % 2})
    opened: list[int] = []
    original = projector_module.Projector.__init__

    def slow_open(self, *args, **kwargs) -> None:  # widen the window in which a second thread could open too
        opened.append(threading.get_ident())
        time.sleep(0.3)
        original(self, *args, **kwargs)

    monkeypatch.setattr(projector_module.Projector, "__init__", slow_open)
    with MemoryFabric.from_path(tmp_path / "eventloom") as memory:
        start = threading.Barrier(6)

        def first_query(n: int) -> int:
            start.wait()
            return len(memory.query(f"case{n}", sessions=["ops"]).hits)

        with ThreadPoolExecutor(max_workers=6) as pool:
            hits = list(pool.map(first_query, range(6)))
    assert len(opened) == 1 and all(hits)
