"""Fixtures for the LangGraph surface: stores and checkpointers on a fresh Eventloom per test, on each backend.

``eventloom`` is the folder every test opens its store / checkpointer at. On the PostgreSQL run it also points
``ZAXY_BACKEND`` (and a fresh ``ZAXY_POSTGRES_SCHEMA``) at the test server, so every ``from_path(eventloom)``
in the test, and any child process it starts, uses the server: the same tests pass on both backends.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore
from zaxy_agents.storage.conformance.harness import postgres_schema


@pytest.fixture(params=["jsonl", "postgresql"])
def eventloom(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    if request.param == "jsonl":
        yield tmp_path / "eventloom"
        return
    with postgres_schema(monkeypatch, select_backend=True):
        yield tmp_path / "eventloom"


@pytest.fixture
def fabric(eventloom: Path):
    with MemoryFabric.from_path(eventloom) as memory:
        yield memory


@pytest.fixture
def store(eventloom: Path):
    with ZaxyStore.from_path(eventloom) as zaxy_store:
        yield zaxy_store


@pytest.fixture
def saver(eventloom: Path):
    with ZaxyCheckpointer.from_path(eventloom) as checkpointer:
        yield checkpointer
