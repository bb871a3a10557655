"""The seed's graph schema (seed 002): the provenance backbone, and its five inspection queries run verbatim.

The queries are copied character for character from the seed (trailing semicolons included) and run on the
Kuzu projection of a small fixture log; each must return what the seed says it returns. On PostgreSQL (no
Cypher) the same five questions are views over the mirrored tables (graph migration 0002), checked on the same
fixture, and both backends still produce the same rebuild digest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection.model import typed_label
from zaxy_agents.storage.conformance.harness import postgres_schema
from zaxy_agents.storage.files import kuzu_layout, kuzu_schema

SESSION = "proj"

SEED_QUERIES = {
    "event_sources": """MATCH p=(:Session)-[:HAS_EVENT]->(:Event)-[:CITES_SOURCE]->(:Source)
RETURN p
LIMIT 25;""",
    "entity_sources": """MATCH p=(:Entity)-[:CITES_SOURCE]->(:Source)
RETURN p
LIMIT 25;""",
    "superseded": """MATCH p=(:Entity)-[:SUPERSEDED_BY]->(:Entity)
RETURN p
LIMIT 25;""",
    "task_observations": """MATCH p=(:Entity {entity_type: "task"})-->(observation:Entity)
WHERE observation.entity_type IN ["command_run", "file_edit", "tool_call", "hook_checkpoint"]
RETURN p
LIMIT 25;""",
    "inferred": """MATCH p=()-[r:RELATES {inferred: true}]->()
RETURN p, r.confidence, r.inference_method
ORDER BY r.confidence DESC
LIMIT 25;""",
}

SQL_VIEWS = {
    "event_sources": "seed_event_source_paths",
    "entity_sources": "seed_entity_source_paths",
    "superseded": "seed_superseded_paths",
    "task_observations": "seed_task_observation_paths",
    "inferred": "seed_inferred_edges",
}


def _fixture(memory: MemoryFabric) -> None:
    """One of everything the queries look for: sources, a superseded fact, task observations, inferred edges."""
    add = lambda kind, payload: memory.append(SESSION, kind, payload)  # noqa: E731
    add("task.created", {"task_id": "task-7", "title": "Fix the flaky test"})
    add("document.chunk", {"path": "docs/runbook.md", "chunk_index": 0, "text": "Restart the runner.",
                           "line_start": 1, "line_end": 12, "checksum": "c" * 64})  # fmt: skip
    add("fact.asserted", {"key": "ci runner", "fact": "CI runs on m5"})
    add("fact.asserted", {"key": "ci runner", "fact": "CI runs on m6"})
    failure = add("command.completed", {"command": "pytest", "exit_code": 1, "taskId": "task-7"})  # seed camelCase
    add("file.edit.applied", {"path": "tests/test_runner.py", "task_id": "task-7", "lines_added": 3})
    add("tool.call.completed", {"tool_name": "Edit", "status": "ok", "taskId": "task-7"})
    add("hook.checkpoint", {"summary": "halfway", "reason": "precompact", "task_id": "task-7"})
    decision = add("decision.recorded", {"decision": "Pin the runner image", "topic": "runner image"})
    add("task.completed", {"task_id": "task-7", "decision_event_seq": decision.seq,
                           "decision_event_hash": decision.hash})  # fmt: skip
    add("outcome.explained", {
        "cause": {"name": "ci runner", "entity_type": "fact"},
        "effect": {"name": "pytest #5", "entity_type": "command_run"},
        "relation_type": "caused",
        "confidence": 0.92,
        "evidence": {"source_event_seq": failure.seq, "source_event_hash": failure.hash, "reason": "m6 is slow"},
    })  # fmt: skip
    candidate = memory.consolidation_candidate(
        SESSION,
        candidate_type="episode",
        title="Flaky runner",
        summary="pytest failed on the new runner; the image was pinned.",
        source_events=[failure.citation],
        confidence=0.7,
    )
    memory.consolidation_review(SESSION, candidate["candidate_id"], decision="deferred", rationale="needs data")
    memory.project([SESSION])
    memory.projector.flush()


@pytest.fixture
def kuzu_memory(tmp_path: Path):
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        _fixture(memory)
        yield memory


def _rows(memory: MemoryFabric, query: str) -> list[list[Any]]:
    return memory.projector.store._rows(query)


def _labels(path: dict[str, Any]) -> tuple[list[str], list[str]]:
    return [node["_label"] for node in path["_nodes"]], [rel["_label"] for rel in path["_rels"]]


def test_the_seed_inspection_queries_run_verbatim_and_return_what_the_seed_says(kuzu_memory: MemoryFabric) -> None:
    rows = {name: _rows(kuzu_memory, query) for name, query in SEED_QUERIES.items()}
    assert all(rows.values()), {name: len(found) for name, found in rows.items()}

    # Session -HAS_EVENT-> Event -CITES_SOURCE-> Source: the events that cite a document or a file
    paths = [row[0] for row in rows["event_sources"]]
    assert {tuple(_labels(p)[0]) for p in paths} == {("Session", "Event", "Source")}
    assert {p["_nodes"][2]["path"] for p in paths} == {"docs/runbook.md", "tests/test_runner.py"}
    chunk = next(p for p in paths if p["_nodes"][2]["path"] == "docs/runbook.md")
    assert (chunk["_rels"][1]["line_start"], chunk["_rels"][1]["line_end"]) == (1, 12)
    assert chunk["_rels"][1]["source_event_seq"] == chunk["_nodes"][1]["seq"]

    # Entity -CITES_SOURCE-> Source, with line range, checksum and Eventloom provenance
    cited = {(p["_nodes"][0]["entity_type"], p["_nodes"][1]["path"]) for p in (r[0] for r in rows["entity_sources"])}
    assert {("document_chunk", "docs/runbook.md"), ("file", "tests/test_runner.py")} <= cited

    # Entity -SUPERSEDED_BY-> Entity: the old runner fact
    (superseded,) = [r[0] for r in rows["superseded"] if r[0]["_nodes"][0]["name"] == "ci runner"]
    assert superseded["_nodes"][1]["valid_to"] is None
    # the version's text is not in the Kuzu file (migration 0006): its id and source event cite it
    old_version = superseded["_nodes"][0]
    assert "summary" not in old_version and old_version["event_id"] == f"{old_version['session_id']}:" + str(
        old_version["source_event_seq"]
    )
    assert kuzu_memory.projector.catalog.version(old_version["id"]).summary == "CI runs on m5"

    # task -> observations of every kind the seed lists, through RELATES; the seed's typed label of each edge is
    # its relation_type (no table per typed label: kuzu_schema.MIRRORED, docs/seed-differences.md)
    observed = {
        (p["_rels"][0]["_label"], typed_label(p["_rels"][0]["relation_type"]), p["_nodes"][1]["entity_type"])
        for p in (r[0] for r in rows["task_observations"])
    }
    assert {kind for *_, kind in observed} == {"command_run", "file_edit", "tool_call", "hook_checkpoint"}
    assert {label for label, *_ in observed} == {"RELATES"}
    assert {"OBSERVED_COMMAND", "OBSERVED_FILE_EDIT", "OBSERVED_TOOL_CALL", "HAS_CHECKPOINT"} == {
        typed for _, typed, _ in observed
    }

    # inferred RELATES edges, most confident first, with their methods
    confidences = [row[1] for row in rows["inferred"]]
    assert confidences == sorted(confidences, reverse=True)
    methods = {row[2] for row in rows["inferred"]}
    assert methods == {"explicit_outcome_explanation_v1", "task_completed_decision_citation_v1"}


def test_the_provenance_backbone(kuzu_memory: MemoryFabric) -> None:
    # every entity version names the event that projected it, and PROJECTED_ENTITY agrees
    mismatched = _rows(
        kuzu_memory, "MATCH (ev:Event)-[:PROJECTED_ENTITY]->(e:Entity) WHERE e.event_id <> ev.id RETURN count(e)"
    )
    assert mismatched == [[0]] and _rows(kuzu_memory, "MATCH (e:Entity) WHERE e.event_id IS NULL RETURN count(e)") == [
        [0]
    ]
    # PROJECTED_RELATION: one per projected relation, the RELATES row's id, type and endpoint names; its audit
    # metadata is the RELATES row's (one stored copy, migration 0005), read through the id
    relates = _rows(
        kuzu_memory,
        "MATCH (a:Entity)-[r:RELATES]->(b:Entity) RETURN r.id, b.id, r.relation_type, r.inferred, r.confidence,"
        " r.inference_method, r.evidence_seq, r.source_event_seq ORDER BY r.id",
    )
    projected = _rows(
        kuzu_memory,
        "MATCH (ev:Event)-[p:PROJECTED_RELATION]->(b:Entity)<-[r:RELATES]-() WHERE r.id = p.id"
        " RETURN p.id, b.id, p.relation_type, r.inferred, r.confidence, r.inference_method, r.evidence_seq, ev.seq"
        " ORDER BY p.id",
    )
    assert projected == relates and len(projected) >= 10
    causal = _rows(
        kuzu_memory,
        "MATCH (ev:Event)-[p:PROJECTED_RELATION {relation_type: 'causal_caused'}]->(b:Entity)<-[r:RELATES]-()"
        " WHERE r.id = p.id RETURN ev.type, p.source, p.target, r.inferred, r.inference_method",
    )
    assert causal == [["causal.edge.generated", "ci runner", "pytest #5", True, "explicit_outcome_explanation_v1"]]
    # the consolidation review entity, linked to its candidate (seed 000 task 6)
    reviews = _rows(
        kuzu_memory,
        "MATCH (r:Entity {entity_type: 'consolidation_review'})"
        "-[:RELATES {relation_type: 'reviewed_consolidation_candidate'}]->"
        "(c:Entity {entity_type: 'consolidation_candidate'}) RETURN r.name STARTS WITH 'consolidation_review:', c.name",
    )
    assert len(reviews) == 1 and reviews[0][0] is True and reviews[0][1].startswith("cand_")


def test_an_older_graph_is_re_projected_with_the_new_schema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A graph built before migration 0003 cannot be completed in place: it starts over from the log."""
    before = tuple(m for m in kuzu_schema.MIGRATIONS if m.name < "0003")
    old_entity = [column for column in kuzu_schema.NODE_COLUMNS["Entity"] if column[0] != "event_id"]
    monkeypatch.setattr(kuzu_layout, "MIGRATIONS", before)  # the store as the previous release wrote it
    old_nodes = {**kuzu_schema.NODE_COLUMNS, "Entity": old_entity}
    monkeypatch.setattr(kuzu_layout, "NODE_COLUMNS", old_nodes)
    monkeypatch.setattr(kuzu_layout, "stored_node_columns", old_nodes.__getitem__)
    monkeypatch.setattr(kuzu_layout, "REL_TABLES", kuzu_schema._V1_REL_TABLES)
    monkeypatch.setattr(kuzu_layout, "EXTRA_PAIRS", {})
    monkeypatch.setattr(kuzu_layout, "RELATES_STORED", kuzu_schema.EDGE_AUDIT_COLUMNS)  # RELATES before 0007
    monkeypatch.setattr(kuzu_layout, "MIRRORED", {})
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        memory.append(SESSION, "task.created", {"task_id": "t"})
        memory.append(SESSION, "command.completed", {"command": "make", "exit_code": 0, "task_id": "t"})
        memory.project([SESSION])
        memory.projector.flush()
        assert memory.projector.store.cursors()[SESSION][0] == 2
    monkeypatch.undo()
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        memory.project([SESSION])
        memory.projector.flush()
        assert memory.projector.store.cursors()[SESSION][0] == 2
        assert _rows(memory, "MATCH ()-[p:PROJECTED_RELATION]->() RETURN count(p)")[0][0] >= 1
        assert _rows(memory, "MATCH (e:Entity) WHERE e.event_id IS NULL RETURN count(e)") == [[0]]


def test_postgresql_mirrors_the_backbone_and_answers_the_same_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kuzu_memory: MemoryFabric
) -> None:
    with postgres_schema(monkeypatch) as dsn, MemoryFabric.from_path(tmp_path / "pg", backend=dsn) as memory:
        _fixture(memory)
        store = memory.projector.store
        with store._connection() as conn:
            found = {
                name: conn.execute(f'SELECT * FROM "{store.schema}".{view}').fetchall()
                for name, view in SQL_VIEWS.items()
            }
        assert all(found.values()), {name: len(rows) for name, rows in found.items()}
        assert {row[5] for row in found["event_sources"]} == {"docs/runbook.md", "tests/test_runner.py"}
        observed = {row[3] for row in found["task_observations"]}  # the seed's WHERE is the caller's filter
        assert {"command_run", "file_edit", "tool_call", "hook_checkpoint"} <= observed
        assert {row[4] for row in found["inferred"]} == {
            "explicit_outcome_explanation_v1",
            "task_completed_decision_citation_v1",
        }
        kuzu_lines = [line for line in kuzu_memory.projector.store.dump_lines() if '"PROJECTED_RELATION"' in line]
        pg_lines = [line for line in store.dump_lines() if '"PROJECTED_RELATION"' in line]
        assert len(kuzu_lines) == len(pg_lines) > 0
