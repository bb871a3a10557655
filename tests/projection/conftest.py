from __future__ import annotations

from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric


@pytest.fixture
def fabric(tmp_path: Path):
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        yield memory
