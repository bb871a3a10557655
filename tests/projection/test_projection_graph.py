"""The projection on every graph store (embedded Kuzu, PostgreSQL): versions, supersession, invalidation,
provenance, typed edges, traversal. The graph is read through its canonical dump, which both stores share."""

from __future__ import annotations

import pytest

from tests.projection.graph_view import by_id, graph_tables
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric


def test_reasserting_a_fact_creates_a_version_and_closes_the_old_one(graph_fabric: MemoryFabric) -> None:
    fabric = graph_fabric
    first = fabric.append("s", "fact.asserted", {"subject": "user", "predicate": "city", "object": "Porto"})
    second = fabric.append("s", "fact.asserted", {"subject": "user", "predicate": "city", "object": "Lisbon"})
    history = fabric.entity_history("s", "user city", "fact")
    assert [v.summary for v in history] == ["user city Porto", "user city Lisbon"]
    assert history[0].valid_to == second.timestamp and history[1].valid_to is None
    assert history[0].citation == first.citation and history[1].citation == second.citation
    # the graph links the versions both ways
    graph = graph_tables(fabric)
    summary = {row["id"]: row["summary"] for row in graph["Entity"]}
    links = [(summary[row["from"]], summary[row["to"]]) for row in graph["SUPERSEDED_BY"]]
    assert links == [("user city Porto", "user city Lisbon")]
    back = [(summary[row["from"]], summary[row["to"]]) for row in graph["PREVIOUS_VERSION"]]
    assert back == [("user city Lisbon", "user city Porto")]
    # the store answers history and as-of reads itself
    store = fabric.projector.store
    assert [v.summary for v in store.entity_history("User  City", "fact", "s")] == [
        "user city Porto",
        "user city Lisbon",
    ]
    as_of_first = store.entities_as_of(first.timestamp)
    assert "user city Porto" in [v.summary for v in as_of_first]
    assert "user city Lisbon" not in [v.summary for v in as_of_first]


def test_invalidation_closes_without_deleting(graph_fabric: MemoryFabric) -> None:
    fabric = graph_fabric
    fabric.append("s", "decision.recorded", {"decision": "Use Redis", "topic": "cache"})
    before = len(graph_tables(fabric)["Entity"])
    fabric.append("s", "memory.invalidated", {"entity": "cache", "entity_type": "decision", "reason": "reverted"})
    graph = graph_tables(fabric)
    rows = [
        (row["valid_to"] is not None, row["invalidated"], row["invalidation_reason"])
        for row in graph["Entity"]
        if row["entity_type"] == "decision"
    ]
    assert rows == [(True, True, "reverted")]
    assert len(graph["Entity"]) == before
    assert [k["closed"] for k in graph["EntityKey"] if k["entity_type"] == "decision"] == [True]
    catalog = fabric.projector.catalog
    assert catalog.current("s\x1fdecision\x1fcache") is None
    # invalidating something that is not current is a reported failure, not an error
    fabric.append("s", "memory.invalidated", {"entity": "cache", "entity_type": "decision"})
    fabric.project()
    assert fabric.memory_status()["extraction_failures"] == 1
    assert len(graph_tables(fabric)["ExtractionFailure"]) == 1


def test_provenance_spine(graph_fabric: MemoryFabric) -> None:
    fabric = graph_fabric
    events = fabric.append_many("s", [{"type": "note.added", "payload": {"text": str(i)}} for i in range(3)])
    graph = graph_tables(fabric)
    spine = by_id(graph["Event"])
    owned = sorted(
        (spine[row["to"]]["seq"], spine[row["to"]]["hash"]) for row in graph["HAS_EVENT"] if row["from"] == "s"
    )
    assert owned == [(e.seq, e.hash) for e in events]
    chain = sorted((spine[row["from"]]["seq"], spine[row["to"]]["seq"]) for row in graph["NEXT_EVENT"])
    assert chain == [(1, 2), (2, 3)]
    assert len(graph["PREVIOUS_EVENT"]) == 2
    versions = by_id(graph["Entity"])
    projected = sorted(
        (spine[row["from"]]["seq"], versions[row["to"]]["source_event_hash"]) for row in graph["PROJECTED_ENTITY"]
    )
    assert projected == [(e.seq, e.hash) for e in events]
    assert graph["Session"] == [{"id": "s", "projected_seq": 3, "projected_hash": events[-1].hash}]


def test_sources_and_typed_edges(graph_fabric: MemoryFabric) -> None:
    fabric = graph_fabric
    fabric.append(
        "s",
        "document.chunk",
        {
            "path": "docs/guide.md",
            "chunk_index": 0,
            "text": "Install with pip",
            "line_start": 1,
            "line_end": 12,
            "checksum": "c0ffee",
        },
    )
    fabric.append("s", "file.edit.applied", {"path": "docs/guide.md", "operation": "edit", "task_id": "T-1"})
    graph = graph_tables(fabric)
    versions, sources, events = by_id(graph["Entity"]), by_id(graph["Source"]), by_id(graph["Event"])
    cites = [
        (versions[c["from"]]["entity_type"], sources[c["to"]]["path"], c["line_start"], c["line_end"], c["checksum"])
        for c in graph["CITES_SOURCE"]
        if c["from"] in versions
    ]
    assert ("document_chunk", "docs/guide.md", 1, 12, "c0ffee") in cites
    assert all(c["source_event_seq"] is not None for c in graph["CITES_SOURCE"])
    event_cites = [
        (events[c["from"]]["type"], sources[c["to"]]["path"], c["line_start"], c["line_end"])
        for c in graph["CITES_SOURCE"]
        if c["from"] in events
    ]  # the events cite the source too (seed 002)
    assert event_cites == [
        ("document.chunk", "docs/guide.md", 1, 12),
        ("file.edit.applied", "docs/guide.md", None, None),
    ]
    assert len(graph["Source"]) == 1
    typed = [
        (versions[r["from"]]["name"], versions[r["to"]]["name"], r["inferred"], r["confidence"], r["inference_method"])
        for r in graph["OBSERVED_FILE_EDIT"]
    ]
    assert typed == [("T-1", "docs/guide.md edit #2", False, 1.0, "deterministic")]
    assert [r["relation_type"] for r in graph["RELATES"]].count("observed_file_edit") == 1


def test_task_completed_citing_a_decision_produces_an_inferred_edge(graph_fabric: MemoryFabric) -> None:
    fabric = graph_fabric
    decision = fabric.append("s", "decision.recorded", {"decision": "Cap retries at 5", "topic": "retries"})
    fabric.append("s", "task.created", {"task_id": "T-2", "title": "cap retries"})
    done = fabric.append(
        "s",
        "task.completed",
        {"task_id": "T-2", "decision_event_seq": decision.seq, "decision_event_hash": decision.hash},
    )
    inference = fabric.log.get("s", done.seq + 1)
    assert inference.type == "inference.edge.generated"
    assert inference.payload["relation_type"] == "likely_implemented_decision"
    assert inference.payload["confidence"] == 0.86
    assert inference.payload["inference_method"] == "task_completed_decision_citation_v1"
    assert inference.payload["evidence"] == {"seq": done.seq, "hash": done.hash, "session": "s"}
    graph = graph_tables(fabric)
    versions = by_id(graph["Entity"])
    edges = [
        (versions[r["from"]]["name"], versions[r["to"]]["name"], r["inferred"], r["confidence"], r["evidence_seq"])
        for r in graph["LIKELY_IMPLEMENTED_DECISION"]
    ]
    assert edges == [("T-2", "retries", True, 0.86, done.seq)]
    status = fabric.inferred_status()
    assert status["inferred_edges"] == 1 and status["evidence_coverage"] == 1.0
    assert status["methods"] == {"task_completed_decision_citation_v1": 1}


def test_keyword_search_finds_current_versions_and_respects_time_and_session(graph_fabric: MemoryFabric) -> None:
    fabric = graph_fabric
    old = fabric.append(
        "s", "fact.asserted", {"subject": "session cache", "predicate": "backend", "object": "memcached"}
    )
    fabric.append("s", "fact.asserted", {"subject": "session cache", "predicate": "backend", "object": "redis"})
    fabric.append("s", "decision.recorded", {"decision": "Pin redis to 7.2", "topic": "redis version"})
    fabric.append("other", "fact.asserted", {"subject": "queue", "predicate": "backend", "object": "redis"})
    fabric.append("s", "fact.asserted", {"subject": "api", "predicate": "port", "object": "8080"})
    found = [v.summary for v, score in fabric.search_entities("Redis", session="s") if score > 0]
    assert set(found) == {"session cache backend redis", "Pin redis to 7.2"}
    everywhere = {v.session for v, _ in fabric.search_entities("redis")}
    assert everywhere == {"s", "other"}
    top, _score = fabric.search_entities("session cache backend", session="s")[0]
    assert top.summary == "session cache backend redis"  # the superseded memcached version is not current
    then = [v.summary for v, _ in fabric.search_entities("memcached", session="s", as_of=old.timestamp)]
    assert then == ["session cache backend memcached"]
    assert fabric.search_entities("memcached", session="s") == []
    assert fabric.search_entities("  ...  ") == []


def test_task_completed_without_a_valid_citation_emits_nothing(fabric: MemoryFabric) -> None:
    decision = fabric.append("s", "decision.recorded", {"decision": "Cap retries", "topic": "retries"})
    fabric.append("s", "task.completed", {"task_id": "T-3"})
    fabric.append(
        "s", "task.completed", {"task_id": "T-4", "decision_event_seq": decision.seq, "decision_event_hash": "f" * 64}
    )
    assert [e.type for e in fabric.replay("s")] == ["decision.recorded", "task.completed", "task.completed"]


def test_contracted_payloads_are_validated_before_the_append(fabric: MemoryFabric) -> None:
    with pytest.raises(InvalidRequestError) as info:
        fabric.append(
            "s",
            "inference.edge.generated",
            {
                "source": {"name": "a", "entity_type": "task"},
                "target": {"name": "b", "entity_type": "task"},
                "relation_type": "Depends-On",
                "confidence": 0.5,
                "inference_method": "m",
                "evidence": {"seq": 1, "hash": "0" * 64},
            },
        )
    assert info.value.field == "payload.relation_type"
    with pytest.raises(InvalidRequestError) as info:
        fabric.append("s", "inference.edge.generated", {"source": {"name": "a", "entity_type": "task"}})
    assert fabric.head("s") is None


def test_filtered_multi_hop_traversal_matches_ground_truth(graph_fabric: MemoryFabric) -> None:
    """A seeded graph with typed, time-bounded edges; every traversal checked against a Python BFS."""
    import random

    fabric = graph_fabric
    rng = random.Random(7)
    names = [f"n{i}" for i in range(40)]
    edges = []
    drafts = [{"type": "task.created", "payload": {"task_id": name}} for name in names]
    for _ in range(90):
        a, b = rng.sample(names, 2)
        kind = rng.choice(["depends_on", "blocks"])
        edges.append((a, b, kind))
        drafts.append(
            {
                "type": "inference.edge.generated",
                "payload": {
                    "source": {"name": a, "entity_type": "task"},
                    "target": {"name": b, "entity_type": "task"},
                    "relation_type": kind,
                    "confidence": 0.9,
                    "inference_method": "test",
                    "evidence": {"seq": 1, "hash": "0" * 64},
                },
            }
        )
    fabric.append_many("g", drafts)
    for seed in rng.sample(names, 15):
        for kind in ("depends_on", "blocks"):
            hits = fabric.traverse("g", seed, "task", depth=2, relation_types=[kind])
            got = {(hit.entity.name, hit.depth) for hit in hits}
            expected = _bfs(seed, [e for e in edges if e[2] == kind], 2)
            assert got == expected, (seed, kind)


def _bfs(seed: str, edges: list[tuple[str, str, str]], depth: int) -> set[tuple[str, int]]:
    seen, frontier, found = {seed}, [seed], set()
    for level in range(1, depth + 1):
        nxt = []
        for node in frontier:
            for a, b, _ in edges:
                for other in ((b,) if a == node else ()) + ((a,) if b == node else ()):
                    if other not in seen:
                        seen.add(other)
                        nxt.append(other)
                        found.add((other, level))
        frontier = nxt
    return found
