from __future__ import annotations

from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric


@pytest.fixture
def memory(tmp_path: Path):
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        yield fabric


def edge_payload(**overrides: object) -> dict:
    """A valid causal.edge.generated payload (evidence filled in by the caller)."""
    payload = {
        "source": {"name": "a", "entity_type": "fact"},
        "target": {"name": "b", "entity_type": "fact"},
        "relation_type": "caused",
        "graph_relation_type": "causal_caused",
        "confidence": 0.7,
        "causal_method": "test",
        "review_status": "proposed",
        "authority_status": "non_authoritative",
    }
    payload.update(overrides)
    return payload
