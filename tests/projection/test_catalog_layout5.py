"""Catalog layouts 5-7 (integers for what repeats: session and type names, version ids, identity keys; no copies of
what another row holds) answer every read exactly as layout 4 did: a layout-4, -5 or -6 file is migrated in place on
open (no rebuild from the log) and gives the same answers; keys and ids no identity can have find nothing; erasing a
session removes its name too."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.projection.catalog_layouts import to_layout_4, to_layout_5, to_layout_6
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection.catalog_rows import SCHEMA_VERSION, _pack, _unpack
from zaxy_agents.projection.sqlite_catalog import SqliteCatalog


def _seed(memory: MemoryFabric) -> None:
    for number in range(3):
        session = f"thread-{number}"
        for i in range(10 + 2 * number):
            memory.append(session, "fact.asserted", {"key": f"k{i % 4}", "fact": f"value {i} of {number}"})
            memory.append(session, "transcript.turn", {"role": "user", "speaker": "Ana", "text": f"turn {i} here"})
            if i % 3 == 0:
                memory.append(
                    session, "decision.recorded", {"decision": f"use {i}", "topic": "storage", "task_id": "T-1"}
                )
            if i % 4 == 0:
                memory.append(session, "task.created", {"task_id": f"T-{i % 2}", "title": f"Task {i}"})
        memory.append(session, "memory.invalidated", {"entity": "k1", "entity_type": "fact", "reason": "dropped"})


def _answers(memory: MemoryFabric) -> dict[str, Any]:
    catalog: SqliteCatalog = memory.projector.catalog
    sessions = [*catalog.sessions, "no such session"]
    keys = sorted({key for session in sessions for key in catalog.session_keys(session, limit=1000)})
    keys += ["thread-0\x1ffact\x1fno such", "not a key", "a\x1fb"]
    states = {key: catalog.key_state(key) for key in keys}
    ids = [*sorted({state.current for state in states.values() if state is not None}), "0" * 24, "not an id"]
    found: dict[str, Any] = {
        "states": states,
        "key_states": catalog.key_states(keys),
        "history": {key: catalog.history(key) for key in keys},
        "currents": catalog.currents(keys),
        "ranks": catalog.current_ranks(keys),
        "at": {key: catalog.version_at(key, "2000-01-01T00:00:00Z") for key in keys},
        "versions": catalog.versions(ids),
        "read": catalog.read_versions(ids),
        "sources": catalog.version_sources(ids),
        "texts": catalog.texts(ids),
        "ends": {key: catalog.neighbour_keys(key) for key in keys},
        "edges": {key: (catalog.out_edges(key), catalog.in_edges(key), catalog.degree(key)) for key in keys},
        "named": catalog.keys_named_many(["k1", "ana", "T-1", "storage", "nobody"]),
        "named_one": catalog.keys_named("Ana"),
        "counts": (catalog.counts(), {session: catalog.counts(session) for session in sessions}),
        "type_counts": {session: catalog.entity_type_counts(session) for session in sessions},
        "events": {session: catalog.events_versions([(session, seq) for seq in range(1, 60)]) for session in sessions},
        "rows": {session: catalog.entity_rows(session, 1, 60) for session in sessions},
        "inferred": catalog.inferred_edges(),
    }
    for entity_type in ("fact", "decision", "task", "turn", "no_such_type"):
        for scan in (2, 60):
            found[f"recent {entity_type} {scan}"] = (
                {session: catalog.recent_versions(session, entity_type, scan, None) for session in sessions},
                {session: catalog.recent_heads(session, entity_type, scan) for session in sessions},
                {session: catalog.recent_keys(session, entity_type, scan) for session in sessions},
                {session: catalog.type_keys(session, entity_type) for session in sessions},
                {session: catalog.session_keys(session, entity_type=entity_type, contains="k") for session in sessions},
                catalog.recent_versions_many(sessions, entity_type, scan),
                catalog.recent_versions_many(sessions, entity_type, scan, ("value 1",)),
                catalog.recent_heads_many(sessions, entity_type, scan),
                catalog.first_recent_keys_many(sessions, entity_type, 3, scan),
            )
    found["summaries"] = {
        version_id: (version.summary, version.properties_json)
        for version_id, version in found["versions"].items()
        if version is not None
    }
    return found


def _packet(memory: MemoryFabric) -> dict[str, Any]:
    packet = memory.checkout("what is k2", session="thread-1", scope=["thread-1"]).model_dump()
    packet["diagnostics"].pop("took_ms")  # wall time
    return packet


@pytest.mark.parametrize("layout", [4, 5, 6])
def test_an_earlier_catalog_is_migrated_in_place_and_answers_alike(tmp_path: Path, layout: int) -> None:
    """Layout 4 (names and ids as text) and layout 5 (edges naming their ends by id, event time and hash copied)."""
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as memory:
        _seed(memory)
        memory.project()
        before = _answers(memory)
        packet = _packet(memory)
    assert sum(len(out) + len(into) for out, into, _ in before["edges"].values()) > 10
    assert sum(state is not None and state.closed for state in before["states"].values()) == 3  # k1, per session
    derived = root / ".zaxy" / "derived.sqlite"
    with sqlite3.connect(derived) as db:
        {4: to_layout_4, 5: to_layout_5, 6: to_layout_6}[layout](db)
        assert db.execute("SELECT value FROM meta WHERE key = 'schema:catalog'").fetchone() == (str(layout),)
    with MemoryFabric.from_path(root) as memory:
        assert _answers(memory) == before
        assert _packet(memory) == packet
        assert not any("rebuilt" in notice for notice in memory.projector.take_notices())
        memory.append("thread-1", "fact.asserted", {"key": "k2", "fact": "after the migration"})
        memory.project()
        assert memory.projector.catalog.current("thread-1\x1ffact\x1fk2").summary.endswith("after the migration")
    with sqlite3.connect(derived) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema:catalog'").fetchone() == (str(SCHEMA_VERSION),)
        assert db.execute("SELECT count(*) FROM cat_versions WHERE typeof(id) != 'blob'").fetchone() == (0,)
        assert "key" not in {row[1] for row in db.execute("PRAGMA table_info(cat_keys)")}
        assert db.execute("SELECT count(*) FROM cat_edges WHERE hash IS NOT NULL").fetchone() == (0,)  # all borrowed
        assert db.execute("SELECT count(*) FROM cat_versions WHERE name IS NULL").fetchone()[0] > 20  # turns
        marked = "SELECT count(*) FROM cat_versions WHERE instr(body, CAST('\"occurred_at\":' AS BLOB) || X'00') > 0"
        assert db.execute(marked).fetchone()[0] > 20  # turns: their valid_from is not copied into the properties


def test_a_fresh_layout_5_catalog_answers_as_a_migrated_one(tmp_path: Path) -> None:
    """The write path and the migration lay rows out alike: a catalog projected in layout 5 from the same log
    answers as the migrated one."""
    migrated, fresh = tmp_path / "migrated", tmp_path / "fresh"
    with MemoryFabric.from_path(migrated) as memory:
        _seed(memory)
        memory.project()
    fresh.mkdir()
    for log in migrated.glob("*.jsonl"):
        shutil.copy(log, fresh / log.name)
    with sqlite3.connect(migrated / ".zaxy" / "derived.sqlite") as db:
        to_layout_4(db)
    with MemoryFabric.from_path(fresh) as one, MemoryFabric.from_path(migrated) as other:
        one.project()
        assert _answers(one) == _answers(other)


def test_deleting_a_session_removes_its_name(tmp_path: Path) -> None:
    """What erasure does to the catalog before it replays the session from the log: no row, and no name, is left."""
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as memory:
        _seed(memory)
        memory.project()
        with memory.projector.derived.write() as db:
            memory.projector.catalog.delete_session(db, "thread-2")
        assert memory.projector.catalog.session_keys("thread-2") == []
        assert memory.projector.catalog.key_state("thread-2\x1ffact\x1fk0") is None
    with sqlite3.connect(root / ".zaxy" / "derived.sqlite") as db:
        names = {row[0] for row in db.execute("SELECT name FROM cat_sessions")}
        assert "thread-2" not in names and "thread-1" in names


@pytest.mark.parametrize(
    ("properties", "valid_from"),
    [
        ('{"occurred_at":"2026-01-02T03:04:05Z","role":"user"}', "2026-01-02T03:04:05Z"),
        ('{"a":"2026","b":"2026","c":"x\\u0000y"}', "2026"),  # twice, and an escaped NUL in the JSON
        ('{"k":"a\\",\\"b"}', 'a\\",\\"b'),  # a valid_from that looks like JSON
        ('{"k":""}', ""),
        ("", "2026-01-02"),
    ],
)
def test_a_body_gives_back_the_properties_it_was_given(properties: str, valid_from: str) -> None:
    for in_log in (False, True):
        for summary in ("", "s" * 400):  # stored raw and compressed
            body = _pack(summary, properties, in_log, valid_from)
            assert _unpack(body, valid_from) == (None if in_log else summary, properties)
