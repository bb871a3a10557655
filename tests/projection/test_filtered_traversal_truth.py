"""The embedded graph's filtered multi-hop traversals against the in-memory reference store (the ground truth).

Why it is in the suite: the engine is pinned because it is exact here, and the next engine evaluated must prove it.
LadybugDB 0.22.0 (the Kuzu fork) answers some 2-hop Cypher patterns wrongly (a filter on the relationship next to
the bound node: 39-45 of 100 seeds wrong on a 2,000-node random graph where Kuzu 0.11.3 is exact;
benchmarks/graph_hop_truth_bench.py). The store walks one hop per query, filtered on RELATES between two
HAS_VERSION steps; this checks on a graph large enough to show such an error (thousands of edges) that every
traversal — depth 1 and 2, filtered by relation type, as of a past moment — returns what the reference store returns.
"""

from __future__ import annotations

import random
from pathlib import Path

from zaxy_agents.config import ZaxySettings
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.storage.conformance.sample import copy_log
from zaxy_agents.storage.memory.backend import MemoryBackend

SESSION = "graph"


def _drafts(count: int) -> list[dict]:
    rng = random.Random(11)
    drafts: list[dict] = []
    for i in range(count):
        task = f"T-{rng.randrange(120)}"
        kind = i % 4
        if kind == 0:
            drafts.append({"type": "task.created", "payload": {"task_id": task, "title": f"work item {i}"}})
        elif kind == 1:
            drafts.append(
                {"type": "file.edit.applied", "payload": {"path": f"src/m{rng.randrange(150)}.py", "task_id": task}}
            )
        elif kind == 2:
            command = f"pytest -k c{rng.randrange(150)}"
            drafts.append(
                {"type": "command.completed", "payload": {"command": command, "exit_code": 0, "task_id": task}}
            )
        else:
            drafts.append({"type": "decision.recorded", "payload": {"decision": f"choice {i % 90}", "task_id": task}})
    return drafts


def _answers(fabric: MemoryFabric, starts: list[str], **options: object) -> list[list[tuple]]:
    store = fabric.projector.store
    assert store is not None
    return [
        sorted((h.entity.id, h.depth, h.direction, h.via.id) for h in store.traverse([key], **options))
        for key in starts
    ]


def test_filtered_two_hop_traversals_match_the_reference(tmp_path: Path) -> None:
    reference = MemoryFabric(
        ZaxySettings.resolve(tmp_path / "ref", backend="memory://", embedder="none"),
        backend=MemoryBackend(ZaxySettings.resolve(tmp_path / "ref", backend="memory://")),
    )
    with reference, MemoryFabric.from_path(tmp_path / "loom") as embedded:
        drafts = _drafts(1600)
        for start in range(0, len(drafts), 400):
            reference.append_many(SESSION, drafts[start : start + 400])
        copy_log(reference.log, embedded.log)
        for fabric in (reference, embedded):
            fabric.project()
            fabric.projector.flush()
        truth, store = reference.projector.store, embedded.projector.store
        assert store is not None and truth is not None
        current = sorted(truth.entities_as_of("9999-12-31T00:00:00Z", limit=100_000), key=lambda v: v.source_event_seq)
        moment = current[len(current) // 2].valid_from  # half the memory exists then
        starts = random.Random(3).sample(sorted({version.key for version in current}), 40)
        labels = sorted(store.typed_labels())
        assert len(labels) >= 3, labels  # typed relation tables: the filter keeps some and drops others
        relation_types = [label.lower() for label in labels[:2]]
        variants = [
            {"depth": 1},
            {"depth": 2},
            {"depth": 2, "relation_types": relation_types},
            {"depth": 2, "as_of": moment},
            {"depth": 2, "relation_types": relation_types, "as_of": moment},
        ]
        reached = []
        for options in variants:
            ours, expected = _answers(embedded, starts, **options), _answers(reference, starts, **options)
            assert ours == expected, options
            reached.append(sum(len(hits) for hits in expected))
        assert min(reached) > 20 and reached[3] < reached[1]  # real walks, and the past graph is a smaller one
