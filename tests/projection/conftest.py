from __future__ import annotations

from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.storage.conformance.harness import postgres_schema


@pytest.fixture
def fabric(tmp_path: Path):
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        yield memory


@pytest.fixture(params=["kuzu", "postgresql"])
def graph_fabric(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A fabric on each graph store in turn: embedded (JSONL + Kuzu) and PostgreSQL (log and graph on the
    server, in a fresh schema). PostgreSQL skips unless ZAXY_TEST_POSTGRES_DSN names a server."""
    if request.param == "kuzu":
        with MemoryFabric.from_path(tmp_path / "loom") as memory:
            yield memory
        return
    with postgres_schema(monkeypatch) as dsn, MemoryFabric.from_path(tmp_path / "loom", backend=dsn) as memory:
        yield memory


@pytest.fixture(params=["kuzu", "postgresql"])
def open_graph_fabric(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """``open(root) -> MemoryFabric`` on each graph store in turn (one PostgreSQL schema per test)."""
    if request.param == "kuzu":
        yield lambda root: MemoryFabric.from_path(root)
        return
    with postgres_schema(monkeypatch) as dsn:
        yield lambda root: MemoryFabric.from_path(root, backend=dsn)
