"""Fixtures for the LangGraph surface: stores and checkpointers on a fresh Eventloom folder per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore


@pytest.fixture
def eventloom(tmp_path: Path) -> Path:
    return tmp_path / "eventloom"


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
