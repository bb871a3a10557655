"""A version closed in the batch that created it keeps the same audit fields as one closed later, so an
incrementally projected graph and a rebuilt one have the same digest."""

from __future__ import annotations

from zaxy_agents.fabric import MemoryFabric


def test_incremental_and_rebuilt_graphs_agree_on_closures(fabric: MemoryFabric) -> None:
    fabric.append("s", "fact.asserted", {"key": "owner", "fact": "team blue"})
    fabric.project()
    fabric.append("s", "fact.asserted", {"key": "owner", "fact": "team green"})
    fabric.project()
    fabric.append("s", "memory.invalidated", {"entity": "owner", "entity_type": "fact", "reason": "team disbanded"})
    incremental = fabric.projection_digest()
    assert fabric.reproject() == incremental  # the rebuild closes both versions inside one batch
    rows = fabric.projector.store._rows(
        "MATCH (e:Entity {entity_type: 'fact'}) RETURN e.closed_by_seq, e.invalidation_reason "
        "ORDER BY e.source_event_seq"
    )
    assert rows == [[2, ""], [3, "team disbanded"]]
