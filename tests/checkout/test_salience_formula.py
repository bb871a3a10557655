"""docs/checkout.md states the salience formula: ``importance x recency x reinforcement``, importance from the
entity type (decisions 0.9, open tasks 0.8, facts 0.8), reinforcement ``1 + ln(1 + positive feedback weight)``,
negative feedback audit-only. Checked on the packet a real checkout returns."""

from __future__ import annotations

import math
from pathlib import Path

from zaxy_agents.fabric import MemoryFabric


def _salience(memory: MemoryFabric, name: str) -> dict[str, float]:
    packet = memory.checkout("pooling billing host retry runbook", session="s", max_tokens=4000)
    return next(fact.salience for fact in packet.current_facts if fact.name == name)


def test_salience_is_importance_times_recency_times_reinforcement(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        memory.append("s", "decision.recorded", {"decision": "Use pgbouncer for pooling", "topic": "pooling"})
        memory.append("s", "task.created", {"task_id": "T-1", "title": "Write the retry runbook"})
        memory.append("s", "fact.asserted", {"subject": "billing db", "predicate": "host", "object": "db-new"})
        packet = memory.checkout("pooling billing host retry runbook", session="s", max_tokens=4000)
        importance = {fact.entity_type: fact.salience["importance"] for fact in packet.current_facts}
        assert importance["decision"] == 0.9 and importance["fact"] == 0.8 and importance["task"] == 0.8, importance

        fresh = _salience(memory, "pooling")
        assert fresh["reinforcement"] == 1.0 and fresh["recency"] > 0.999  # written moments before the newest event
        memory.feedback("s", "pooling", "decision", "helpful", weight=2.0)
        memory.feedback("s", "pooling", "decision", "wrong", weight=5.0)  # negative: recorded, never counted
        reinforced = _salience(memory, "pooling")
        assert reinforced["reinforcement"] == round(1 + math.log(1 + 2.0), 4)
        expected = min(1.0, reinforced["importance"] * reinforced["recency"] * reinforced["reinforcement"])
        assert abs(reinforced["salience"] - expected) < 1e-3
