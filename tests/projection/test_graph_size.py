"""What the embedded graph spends its pages on (issue 24, graph.kuzu size), checked on a real Kuzu file.

Kuzu keeps a relationship and all its properties twice (forward and backward adjacency) unless the table says
``storage_direction = 'fwd'``. The tables only ever matched from their source side are stored forward only; RELATES
and HAS_VERSION, which traversals walk both ways, keep both. A graph written before that is re-projected from the
log with the new storage, its contents unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection.model import EntityDraft, EntityRef, Extraction, RelationDraft
from zaxy_agents.projection.planner import ProjectionPlanner
from zaxy_agents.storage.files import kuzu_layout, kuzu_schema, kuzu_store

SESSION = "proj"


def _write(memory: MemoryFabric) -> None:
    memory.append(SESSION, "task.created", {"task_id": "t-1", "title": "fix the flaky retry test"})
    memory.append(SESSION, "file.edited", {"path": "src/retry.py", "task_id": "t-1"})
    memory.append(SESSION, "command.completed", {"command": "pytest tests/test_retry.py", "exit_code": 0})
    memory.append(SESSION, "decision.recorded", {"decision": "cap retries at 5", "task_id": "t-1"})
    memory.append(SESSION, "fact.asserted", {"subject": "api", "predicate": "port", "object": "8080"})
    memory.append(SESSION, "fact.asserted", {"subject": "api", "predicate": "port", "object": "9090"})
    memory.project([SESSION])
    memory.projector.flush()


def _directions(memory: MemoryFabric) -> dict[str, set[str]]:
    """table -> the adjacency directions Kuzu stores pages for ("fwd", "bwd"), from its storage report."""
    store = memory.projector.store
    tables = [name for name, kind in store._rows("CALL SHOW_TABLES() RETURN name, type") if kind == "REL"]
    found: dict[str, set[str]] = {}
    for table in tables:
        columns = store._rows(f'CALL storage_info("{table}") WHERE num_pages > 0 RETURN DISTINCT column_name')
        found[table] = {name.split("_", 1)[0] for (name,) in columns} & {"fwd", "bwd"}
    return found


def _as_written_before_0011(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store as releases before migration 0011 wrote it: ``Entity.key`` and ``EntityKey.id`` stored."""
    monkeypatch.setattr(kuzu_layout, "MIGRATIONS", tuple(m for m in kuzu_schema.MIGRATIONS if m.name < "0011"))
    monkeypatch.setattr(kuzu_layout, "stored_node_columns", kuzu_schema._v10_node_columns)


def _as_written_before_0010(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store as releases before migration 0010 wrote it: node tables keyed by their string ``id``."""
    _as_written_before_0011(monkeypatch)
    monkeypatch.setattr(kuzu_layout, "MIGRATIONS", tuple(m for m in kuzu_schema.MIGRATIONS if m.name < "0010"))
    monkeypatch.setattr(kuzu_layout, "stored_node_columns", kuzu_schema.unkeyed_node_columns)


def _as_written_before_0009(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store as releases before migration 0009 wrote it: ``RELATES.valid_from`` stored on every edge."""
    _as_written_before_0010(monkeypatch)
    monkeypatch.setattr(kuzu_layout, "MIGRATIONS", tuple(m for m in kuzu_schema.MIGRATIONS if m.name < "0009"))
    monkeypatch.setattr(kuzu_layout, "RELATES_STORED", kuzu_schema._V7_RELATES_STORED)


def _as_written_before_0008(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store as releases before migration 0008 wrote it: ``Event.prev_hash``, ``Entity.source_event_hash`` and
    ``CITES_SOURCE.source_event_hash`` stored on every row."""
    _as_written_before_0009(monkeypatch)
    monkeypatch.setattr(kuzu_layout, "MIGRATIONS", tuple(m for m in kuzu_schema.MIGRATIONS if m.name < "0008"))
    columns = kuzu_schema.stored_columns
    cited = kuzu_schema.CITATION_COLUMNS
    monkeypatch.setattr(kuzu_layout, "stored_columns", lambda t: cited if t == "CITES_SOURCE" else columns(t))
    text = set(kuzu_schema.ENTITY_TEXT_COLUMNS)
    monkeypatch.setattr(
        kuzu_layout,
        "stored_node_columns",
        lambda table: [c for c in kuzu_schema.NODE_COLUMNS[table] if table != "Entity" or c[0] not in text],
    )


def _as_written_before_0007(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store as releases before migration 0007 wrote it: RELATES with every audit column, PREVIOUS_EVENT as a
    table (the typed label tables are not written here)."""
    _as_written_before_0008(monkeypatch)
    monkeypatch.setattr(kuzu_layout, "MIGRATIONS", tuple(m for m in kuzu_schema.MIGRATIONS if m.name < "0007"))
    monkeypatch.setattr(kuzu_layout, "RELATES_STORED", kuzu_schema.EDGE_AUDIT_COLUMNS)
    monkeypatch.setattr(kuzu_layout, "MIRRORED", {})


def _as_written_before_0005(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store as releases before migration 0005 wrote it: every RELATES copy with all its audit columns, the
    applied migrations as rows of the Migration table, the entities' text in the file (before 0006)."""
    _as_written_before_0007(monkeypatch)
    monkeypatch.setattr(kuzu_layout, "stored_node_columns", lambda table: kuzu_schema.NODE_COLUMNS[table])
    logical = {**{t: c for t, (_a, _b, c) in kuzu_schema.REL_TABLES.items()}}
    monkeypatch.setattr(kuzu_layout, "stored_columns", lambda table: logical.get(table, kuzu_schema.EDGE_AUDIT_COLUMNS))

    def record_as_rows(store: kuzu_store.KuzuProjectionStore, records: list[dict]) -> None:
        for record in records:
            if not store._rows("MATCH (m:Migration {name: $n}) RETURN m.name", {"n": record["name"]}):
                store._connection().execute(
                    "CREATE (:Migration {name: $name, checksum: $checksum, statement_count: $statement_count, "
                    "applied_at: $applied_at})",
                    record,
                )

    monkeypatch.setattr(kuzu_store.KuzuProjectionStore, "_record_migrations", record_as_rows)


@contextmanager
def _reopened(root: Path) -> Iterator[MemoryFabric]:
    """The memory opened by this release: a graph an older release wrote is re-projected from the log on first use."""
    with MemoryFabric.from_path(root) as memory:
        memory.project([SESSION])
        memory.projector.flush()
        assert memory.projector.store.cursors()[SESSION][0] == 6
        yield memory


def _node_columns(memory: MemoryFabric, table: str) -> set[str]:
    return {row[1] for row in memory.projector.store._rows(f"CALL TABLE_INFO('{table}') RETURN *")}


def _contents(memory: MemoryFabric) -> list[str]:
    return sorted(memory.projector.store.dump_lines())


def test_source_side_tables_are_stored_forward_only(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        _write(memory)
        directions = _directions(memory)
        typed = memory.projector.store.typed_labels()
        assert typed, "the fixture projects typed edges"
        assert not typed & set(directions) and "PREVIOUS_EVENT" not in directions  # no table of their own (0007)
        for table in kuzu_schema.FORWARD_ONLY:
            if directions.get(table):  # a table with rows
                assert directions[table] == {"fwd"}, table
        assert directions["RELATES"] == {"fwd", "bwd"}
        assert {"NEXT_EVENT", "PROJECTED_ENTITY", "PROJECTED_RELATION", "HAS_VERSION"} <= {
            t for t, d in directions.items() if d
        }
        # matched from the target side, a forward-only table still answers (the seed's inspection queries are
        # directed): the events that projected each version of the api port fact
        rows = memory.projector.store._rows(
            "MATCH (e:Entity {name: 'api port'})<-[:PROJECTED_ENTITY]-(ev:Event) RETURN ev.seq ORDER BY ev.seq"
        )
        assert rows == [[5], [6]]
        # and traversals (RELATES both ways) are unchanged
        found = memory.search_entities("flaky retry test", session=SESSION)
        assert found
        task = found[0][0]
        assert memory.traverse(SESSION, task.name, task.entity_type, depth=1) != []


def test_a_graph_stored_both_ways_is_re_projected_forward_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _as_written_before_0005(monkeypatch)
    before = tuple(m for m in kuzu_schema.MIGRATIONS if m.name < "0004")
    monkeypatch.setattr(kuzu_layout, "MIGRATIONS", before)  # the store as the previous release wrote it
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        _write(memory)
        assert _directions(memory)["NEXT_EVENT"] == {"fwd", "bwd"}
        written = _contents(memory)
    graph = tmp_path / "loom" / ".zaxy" / "graph.kuzu"
    both_ways = graph.stat().st_size
    monkeypatch.undo()
    with _reopened(tmp_path / "loom") as memory:
        assert _directions(memory)["NEXT_EVENT"] == {"fwd"}
        assert _contents(memory) == written
    # re-projected into a new file: a Kuzu file never shrinks, so emptying the old one would have kept its size
    assert graph.stat().st_size < both_ways


def test_relation_audit_is_stored_once_and_migrations_in_the_catalog(tmp_path: Path) -> None:
    """PROJECTED_RELATION keeps the RELATES row's id, type and endpoint names (its audit is read from that row),
    typed edges are RELATES rows, RELATES keeps no column it can read elsewhere, and the applied migrations are
    recorded in the Migration table's comment: no row, so no 1.07 MB primary-key index."""
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        _write(memory)
        store = memory.projector.store
        typed = sorted(store.typed_labels())
        columns = lambda table: {row[1] for row in store._rows(f"CALL TABLE_INFO('{table}') RETURN *")}  # noqa: E731
        assert columns("PROJECTED_RELATION") == {"id", "relation_type", "source", "target"}
        assert columns("RELATES") == {name for name, _ in kuzu_schema.RELATES_STORED}
        assert not columns("RELATES") & set(kuzu_schema.RELATES_DERIVED)
        # each copy still reads as the full audited edge (the seed's audit view), through the RELATES id
        dumped = [line for line in _contents(memory) if line.startswith(f'["{typed[0]}",')]
        relates = {line.split(",", 1)[1] for line in _contents(memory) if line.startswith('["RELATES",')}
        assert dumped and all(line.split(",", 1)[1] in relates for line in dumped)
        # a deterministic edge's evidence is its own source event: stored NULL, read (and dumped) as that event
        assert store._rows("MATCH ()-[r:RELATES]->() WHERE r.evidence_hash IS NOT NULL RETURN count(r)") == [[0]]
        names = ["table", "from", "to", *(name for name, _ in kuzu_schema.EDGE_AUDIT_COLUMNS)]
        for line in relates:
            edge = dict(zip(names, json.loads('["RELATES",' + line), strict=True))
            assert edge["evidence_hash"] == edge["source_event_hash"] is not None
            assert (edge["evidence_seq"], edge["evidence_session"]) == (edge["source_event_seq"], edge["session_id"])
        assert store._rows("MATCH (m:Migration) RETURN count(m)") == [[0]]
        assert [m["name"] for m in store.migrations()] == [m.name for m in kuzu_schema.MIGRATIONS]
        assert store.migrate() == []


def test_a_graph_with_three_audit_copies_and_the_text_is_re_projected_smaller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A graph written before 0005 and 0006 (audit columns three times, the entities' text in the file) comes back
    from the log with the same dump and digest, its text read from the catalog."""
    _as_written_before_0005(monkeypatch)
    before = tuple(m for m in kuzu_schema.MIGRATIONS if m.name < "0005")
    monkeypatch.setattr(kuzu_layout, "MIGRATIONS", before)
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        _write(memory)
        assert memory.projector.store._rows("MATCH (m:Migration) RETURN count(m)") == [[4]]
        written = _contents(memory)
        digest = memory.projection_digest()
    graph = tmp_path / "loom" / ".zaxy" / "graph.kuzu"
    three_copies = graph.stat().st_size
    monkeypatch.undo()
    with _reopened(tmp_path / "loom") as memory:
        store = memory.projector.store
        entity_columns = {row[1] for row in store._rows("CALL TABLE_INFO('Entity') RETURN *")}
        assert not entity_columns & set(kuzu_schema.ENTITY_TEXT_COLUMNS)
        assert _contents(memory) == written and memory.projection_digest() == digest  # nothing lost
        assert store._rows("MATCH (m:Migration) RETURN count(m)") == [[0]]
        assert [m["name"] for m in store.migrations()] == [m.name for m in kuzu_schema.MIGRATIONS]
    assert graph.stat().st_size < three_copies - 1_000_000  # the Migration table's index alone was 1.07 MB


def test_a_graph_with_a_table_per_label_is_re_projected_with_lean_relationship_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A graph written before 0007 (RELATES with every audit column, PREVIOUS_EVENT a table, HAS_VERSION both ways)
    comes back from the log with the same dump, digest and answers in the 0007 layout, in a smaller file."""
    _as_written_before_0007(monkeypatch)
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        _write(memory)
        old = memory.projector.store
        assert _directions(memory)["HAS_VERSION"] == {"fwd", "bwd"} and _directions(memory)["PREVIOUS_EVENT"]
        assert "session_id" in {row[1] for row in old._rows("CALL TABLE_INFO('RELATES') RETURN *")}
        written, digest = _contents(memory), memory.projection_digest()
        task = memory.search_entities("flaky retry test", session=SESSION)[0][0]
        walked = memory.traverse(SESSION, task.name, task.entity_type, depth=2)
    graph = tmp_path / "loom" / ".zaxy" / "graph.kuzu"
    old_size = graph.stat().st_size
    monkeypatch.undo()
    with _reopened(tmp_path / "loom") as memory:
        directions = _directions(memory)
        assert "PREVIOUS_EVENT" not in directions and directions["HAS_VERSION"] == {"fwd"}
        assert _contents(memory) == written and memory.projection_digest() == digest
        assert any(line.startswith('["PREVIOUS_EVENT",') for line in written)  # still dumped, from NEXT_EVENT
        assert memory.traverse(SESSION, task.name, task.entity_type, depth=2) == walked
        assert [m["name"] for m in memory.projector.store.migrations()] == [m.name for m in kuzu_schema.MIGRATIONS]
    assert graph.stat().st_size < old_size


def test_a_graph_with_hash_copies_is_re_projected_with_hashes_read_from_the_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A graph written before 0008 and 0009 (``Event.prev_hash``, ``Entity.source_event_hash`` and
    ``RELATES.valid_from`` on every row) comes back from the log without them, with the same dump, digest and
    answers ("as of" traversals included): they are read from the Event nodes."""
    _as_written_before_0008(monkeypatch)
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        _write(memory)
        chunk = {"path": "docs/runbook.md", "chunk_index": 0, "text": "Restart the runner.", "line_start": 1}
        memory.append(SESSION, "document.chunk", {**chunk, "line_end": 12, "checksum": "c" * 64})
        memory.project([SESSION])
        memory.projector.flush()
        assert {"prev_hash", "source_event_hash"} <= _node_columns(memory, "Event") | _node_columns(memory, "Entity")
        assert "source_event_hash" in _node_columns(memory, "CITES_SOURCE")
        written, digest = _contents(memory), memory.projection_digest()
        versions = memory.entity_history(SESSION, "api port", "fact")
        task = memory.search_entities("flaky retry test", session=SESSION)[0][0]
        walked = memory.traverse(SESSION, task.name, task.entity_type, depth=2)
        assert "valid_from" in _node_columns(memory, "RELATES")
        moments = {json.loads(line)[-4] for line in written if line.startswith('["RELATES",')}
        moments.add("2000-01-01T00:00:00Z")
        as_of = {t: memory.traverse(SESSION, task.name, task.entity_type, depth=2, as_of=t) for t in sorted(moments)}
        assert len({len(hits) for hits in as_of.values()}) > 1  # the moments cut edges off
    monkeypatch.undo()
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        memory.project([SESSION])
        memory.projector.flush()
        store = memory.projector.store
        assert store.cursors()[SESSION][0] == 7
        assert "prev_hash" not in _node_columns(memory, "Event") and "prev_hash_unchained" in _node_columns(
            memory, "Event"
        )
        assert "source_event_hash" not in _node_columns(memory, "Entity") | _node_columns(memory, "CITES_SOURCE")
        assert any(line.startswith('["CITES_SOURCE",') for line in written)
        assert store._rows("MATCH (e:Event) WHERE e.prev_hash_unchained IS NOT NULL RETURN count(e)") == [[0]]
        assert _contents(memory) == written and memory.projection_digest() == digest
        assert memory.entity_history(SESSION, "api port", "fact") == versions
        hashes = [
            store._rows("MATCH (e:Event {id: $i}) RETURN e.hash", {"i": f"{SESSION}:{v.source_event_seq}"})[0][0]
            for v in versions
        ]
        assert [v.source_event_hash for v in versions] == hashes and len(versions) == 2
        assert memory.traverse(SESSION, task.name, task.entity_type, depth=2) == walked
        assert "valid_from" not in _node_columns(memory, "RELATES")
        for moment, hits in as_of.items():
            assert memory.traverse(SESSION, task.name, task.entity_type, depth=2, as_of=moment) == hits
        assert [m["name"] for m in store.migrations()] == [m.name for m in kuzu_schema.MIGRATIONS]


def test_hashes_the_chain_does_not_give_are_kept_and_a_wrong_source_hash_is_refused(tmp_path: Path) -> None:
    """An event whose ``prev_hash`` is not the chain's (a damaged tombstone: another hash, or none) keeps its own in
    ``prev_hash_unchained`` and reads back unchanged; a version whose ``source_event_hash`` is not its event's hash is
    refused before anything is written (the graph reads it from the Event node), and so is an edge whose ``valid_from``
    is not its event's timestamp."""
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        _write(memory)
        store = memory.projector.store
        before = _contents(memory)
        batch = ProjectionPlanner()
        event = {
            "session": "other",
            "hash": "b" * 64,
            "type": "note",
            "actor": "t",
            "timestamp": "2026-01-01T00:00:00Z",
        }
        batch.add({**event, "seq": 1, "prev_hash": "f" * 64}, Extraction())
        batch.add({**event, "seq": 2, "prev_hash": None, "hash": "c" * 64}, Extraction())
        batch.add({**event, "seq": 3, "prev_hash": "c" * 64, "hash": "d" * 64}, Extraction())
        store.apply(batch.take_batch())
        rows = store._rows("MATCH (e:Event {session_id: 'other'}) RETURN e.seq, e.prev_hash_unchained ORDER BY e.seq")
        assert rows == [[1, "f" * 64], [2, ""], [3, None]]
        events = {
            json.loads(line)[3]: json.loads(line) for line in store.dump_lines() if line.startswith('["Event","other:')
        }
        assert [events[seq][5] for seq in (1, 2, 3)] == ["f" * 64, None, "c" * 64]  # prev_hash, in its place

        planner = ProjectionPlanner()
        planner.add({**event, "seq": 1, "prev_hash": "0" * 64, "session": "third"}, Extraction())
        planner.add(
            {**event, "seq": 2, "prev_hash": "b" * 64, "session": "third", "hash": "e" * 64},
            Extraction(entities=[EntityDraft("api", "service")]),
        )
        wrong = planner.take_batch()
        wrong.entities[0]["source_event_hash"] = "9" * 64
        with pytest.raises(ValueError, match="source_event_hash is not the hash of its event third:2"):
            store.apply(wrong)
        assert sorted(line for line in store.dump_lines() if '"third' not in line) == sorted(
            line for line in _contents(memory) if '"third' not in line
        )
        assert not any('"third' in line for line in store.dump_lines()) and before

        planner = ProjectionPlanner()  # an edge valid from another moment than its event's timestamp
        edge = RelationDraft(EntityRef("api", "service"), EntityRef("db", "service"), "depends_on")
        planner.add({**event, "seq": 1, "prev_hash": "0" * 64, "session": "fourth"}, Extraction(relations=[edge]))
        wrong = planner.take_batch()
        wrong.relations[0]["valid_from"] = "2001-01-01T00:00:00Z"
        with pytest.raises(ValueError, match="valid_from is not the timestamp of its event fourth:1"):
            store.apply(wrong)
        assert not any('"fourth' in line for line in store.dump_lines())


def test_a_graph_keyed_by_string_ids_is_re_projected_with_integer_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A graph written before 0010 (node tables keyed by their string ``id``) comes back from the log keyed by a
    64-bit number made from the id (``kuzu_schema.NODE_KEY``), in a new file, with the same dump, digest and answers;
    the ``id`` columns stay and Cypher that matches them still answers."""
    _as_written_before_0010(monkeypatch)
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        _write(memory)
        assert "pk" not in _node_columns(memory, "Event")
        written, digest = _contents(memory), memory.projection_digest()
        versions = memory.entity_history(SESSION, "api port", "fact")
        task = memory.search_entities("flaky retry test", session=SESSION)[0][0]
        walked = memory.traverse(SESSION, task.name, task.entity_type, depth=2)
        stamp = max(json.loads(line)[-4] for line in written if line.startswith('["RELATES",'))
        as_of = memory.traverse(SESSION, task.name, task.entity_type, depth=2, as_of=stamp)
    monkeypatch.undo()
    with _reopened(tmp_path / "loom") as memory:
        store = memory.projector.store
        assert store._rows("CALL FSM_INFO() RETURN *") == []  # a new file: no pages of the dropped tables
        for table in ("Session", "Event", "EntityKey", "Entity", "Source"):
            info = {row[1]: (row[2], row[4]) for row in store._rows(f"CALL TABLE_INFO('{table}') RETURN *")}
            assert info["pk"] == ("INT64", True), table
            assert info.get("id", ("STRING", False)) == ("STRING", False), table  # EntityKey's is made (0011)
        assert _contents(memory) == written and memory.projection_digest() == digest
        assert memory.entity_history(SESSION, "api port", "fact") == versions and len(versions) == 2
        assert memory.search_entities("flaky retry test", session=SESSION)[0][0] == task
        assert memory.traverse(SESSION, task.name, task.entity_type, depth=2) == walked and walked
        assert memory.traverse(SESSION, task.name, task.entity_type, depth=2, as_of=stamp) == as_of
        event = f"{SESSION}:3"  # by id (a scan) and by key: the same node
        assert store._rows("MATCH (e:Event {id: $i}) RETURN e.seq", {"i": event}) == [[3]]
        key = kuzu_schema.node_key(event)
        assert store._rows("MATCH (e:Event {pk: $k}) RETURN e.id", {"k": key}) == [[event]]
        assert [m["name"] for m in store.migrations()] == [m.name for m in kuzu_schema.MIGRATIONS]


def test_identities_are_made_from_their_parts_and_a_row_that_differs_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A graph written before 0011 (``Entity.key`` and ``EntityKey.id`` stored) comes back from the log without them,
    with the same dump, digest and answers (history, search, traversals, the planner's key lookups); a version whose
    ``key`` is not ``entity_key(session, type, name)`` is refused before anything is written."""
    _as_written_before_0011(monkeypatch)
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        _write(memory)
        assert "key" in _node_columns(memory, "Entity") and "id" in _node_columns(memory, "EntityKey")
        written, digest = _contents(memory), memory.projection_digest()
        versions = memory.entity_history(SESSION, "api port", "fact")
        task = memory.search_entities("flaky retry test", session=SESSION)[0][0]
        walked = memory.traverse(SESSION, task.name, task.entity_type, depth=2)
        states = memory.projector.store.key_states([v.key for v in versions] + [task.key, "no\x1fsuch\x1fkey"])
    monkeypatch.undo()
    with _reopened(tmp_path / "loom") as memory:
        store = memory.projector.store
        assert "key" not in _node_columns(memory, "Entity") and "id" not in _node_columns(memory, "EntityKey")
        assert _contents(memory) == written and memory.projection_digest() == digest
        assert memory.entity_history(SESSION, "api port", "fact") == versions and len(versions) == 2
        assert memory.search_entities("flaky retry test", session=SESSION)[0][0] == task
        assert memory.traverse(SESSION, task.name, task.entity_type, depth=2) == walked and walked
        assert store.key_states([v.key for v in versions] + [task.key, "no\x1fsuch\x1fkey"]) == states
        assert len(states) == 2
        planner = ProjectionPlanner()
        event = {"session": "other", "hash": "b" * 64, "type": "note", "actor": "t", "timestamp": "2026-01-01T00:00Z"}
        planner.add({**event, "seq": 1, "prev_hash": "0" * 64}, Extraction(entities=[EntityDraft("api", "service")]))
        wrong = planner.take_batch()
        wrong.entities[0]["key"] = "other\x1fservice\x1fdb"
        with pytest.raises(ValueError, match="key is not made of its session_id, entity_type, name"):
            store.apply(wrong)
        assert _contents(memory) == written
