"""Raw-text summaries (turns, prompts) are not copied into the catalog: they are read from the cited event.

Through a real memory on disk: the stored body of a turn holds no summary, every read path serves the same text
as the extractor made, a rewritten log line serves no text, an erased event's text is gone, and a catalog of the
previous layout (summaries stored) is migrated in place on open without a rebuild.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.projection.catalog_layouts import to_layout_4
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection.catalog_rows import SCHEMA_VERSION, _pack, _unpack
from zaxy_agents.projection.logged_text import UNAVAILABLE, LoggedVersion
from zaxy_agents.projection.sqlite_catalog import SqliteCatalog

TEXT = "the   quokka migration\nstarts on Monday"
SUMMARY = "ana: the quokka migration starts on Monday"  # bounded("speaker: text"): whitespace folded


def _seed(fabric: MemoryFabric) -> int:
    fabric.append("s", "task.created", {"task_id": "T-1", "title": "Move the quokkas"})
    turn = fabric.append("s", "transcript.turn", {"role": "user", "speaker": "ana", "text": TEXT})
    fabric.append("s", "transcript.turn", {"role": "assistant", "text": "noted"})
    fabric.project()
    return turn.seq


def _bodies(folder: Path) -> dict[str, bytes]:
    with sqlite3.connect(folder / ".zaxy" / "derived.sqlite") as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info(cat_versions)")}
        if "entity_type" in columns:  # an earlier layout (names as text)
            return dict(db.execute("SELECT entity_type || ':' || name, body FROM cat_versions"))
        return dict(
            db.execute(
                "SELECT t.name || ':' || coalesce(v.name, k.norm), v.body FROM cat_versions v "
                "JOIN cat_types t ON t.tid = v.tid JOIN cat_keys k ON k.kid = v.kid"
            )
        )


def _turn(catalog: SqliteCatalog, seq: int):
    return catalog.current(f"s\x1fturn\x1fturn #{seq}")


def test_a_turn_is_stored_without_its_text_and_read_back_from_the_log(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        seq = _seed(fabric)
        catalog = fabric.projector.catalog
        version = _turn(catalog, seq)
        assert isinstance(version, LoggedVersion)
        assert version.summary == SUMMARY
        assert version.properties["speaker"] == "ana"
        assert catalog.event_versions("s", seq)[-1] == version  # equal across read paths and classes
        assert catalog.texts([version.id]) == {version.id: (SUMMARY, version.properties_json)}
        rows = catalog.entity_rows("s", seq, seq)
        assert [row["summary"] for row in rows if row["entity_type"] == "turn"] == [SUMMARY]
        task = catalog.current("s\x1ftask\x1ft-1")
        assert task is not None and not isinstance(task, LoggedVersion)  # working-set types keep their text
        hits = fabric.query("quokka migration", sessions=["s"]).hits
        assert any(hit.seq == seq and "quokka" in hit.text for hit in hits)
    bodies = _bodies(root)
    summary, properties = _unpack(bodies[f"turn:turn #{seq}"])
    assert summary is None and '"speaker":"ana"' in properties
    assert _unpack(bodies["task:T-1"])[0] == "Move the quokkas [open]"
    assert not any(b"quokka migration" in body for body in bodies.values())


def test_a_rewritten_line_serves_no_text(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        seq = _seed(fabric)
    log = root / "s.jsonl"
    log.write_bytes(log.read_bytes().replace(b"quokka migration", b"walrus migration"))  # same length, same hash
    with MemoryFabric.from_path(root) as fabric:
        version = _turn(fabric.projector.catalog, seq)
        assert version is not None and version.summary == UNAVAILABLE
        assert "walrus" not in version.summary


def test_an_erased_turn_text_is_gone_from_derived_state(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        seq = _seed(fabric)
        fabric.erase_range("s", seq, seq, reason="test")
        fabric.project()
        version = _turn(fabric.projector.catalog, seq)
        assert version is None or "quokka" not in version.summary
    data = (root / ".zaxy" / "derived.sqlite").read_bytes()
    assert b"quokka migration" not in data


_V2_EDGES = (
    "CREATE TABLE cat_edges(eid INTEGER PRIMARY KEY, id TEXT NOT NULL, source_id TEXT NOT NULL, "
    "target_id TEXT NOT NULL, source_kid INTEGER NOT NULL, target_kid INTEGER NOT NULL, "
    "relation_type TEXT NOT NULL, session TEXT NOT NULL, inferred INTEGER NOT NULL, confidence REAL NOT NULL, "
    "method TEXT NOT NULL, ev_session TEXT NOT NULL, ev_seq INTEGER NOT NULL, ev_hash BLOB NOT NULL, "
    "valid_from TEXT NOT NULL, valid_to TEXT, seq INTEGER NOT NULL, hash BLOB NOT NULL)"
)


def _edges(catalog: SqliteCatalog) -> dict[str, list]:
    keys = catalog.session_keys("s", limit=1000)
    return {key: [*catalog.out_edges(key), *catalog.in_edges(key)] for key in keys}


def _edges_to_layout_2(db: sqlite3.Connection) -> None:
    """The edges table as layout 2 stored it: text ids, every evidence column and the method spelled out."""
    rows = db.execute(
        "SELECT eid, id, source_id, target_id, source_kid, target_kid, relation_type, session, inferred, "
        "confidence, coalesce(method, 'deterministic'), coalesce(ev_session, session), coalesce(ev_seq, seq), "
        "coalesce(ev_hash, hash), valid_from, valid_to, seq, hash FROM cat_edges"
    ).fetchall()
    db.execute("DROP TABLE cat_edges")
    db.execute(_V2_EDGES)
    text = [(row[0], *(v.hex() if isinstance(v, bytes) else v for v in row[1:4]), *row[4:]) for row in rows]
    db.executemany(f"INSERT INTO cat_edges VALUES ({','.join('?' * 18)})", text)
    db.execute("CREATE INDEX cat_edges_out ON cat_edges(source_kid)")
    db.execute("CREATE INDEX cat_edges_in ON cat_edges(target_kid)")
    db.execute("ALTER TABLE cat_keys ADD COLUMN valid_from TEXT NOT NULL DEFAULT ''")  # layouts 2-3 stored it
    db.execute("UPDATE cat_keys SET valid_from = (SELECT valid_from FROM cat_versions WHERE id = cat_keys.current)")


def test_a_catalog_of_the_previous_layout_is_migrated_in_place(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        seq = _seed(fabric)
        fabric.append("s", "decision.recorded", {"decision": "Use WAL", "topic": "storage", "task_id": "T-1"})
        fabric.project()
        edges = _edges(fabric.projector.catalog)
        states = {key: fabric.projector.catalog.key_state(key) for key in edges}
        assert sum(map(len, edges.values())) >= 4  # spoke x2 (out and in), has_decision (out and in)
    derived = root / ".zaxy" / "derived.sqlite"
    with sqlite3.connect(derived) as db:  # back to layout 2: every summary stored
        to_layout_4(db)
        turns = db.execute("SELECT vid, name, body FROM cat_versions WHERE entity_type = 'turn'").fetchall()
        for vid, name, body in turns:
            _summary, properties = _unpack(body)
            text = SUMMARY if name == f"turn #{seq}" else "assistant: noted"
            db.execute("UPDATE cat_versions SET body = ? WHERE vid = ?", (_pack(text, properties), vid))
        _edges_to_layout_2(db)
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema:catalog'")
        cursors = db.execute("SELECT * FROM lst_cursors ORDER BY 1, 2").fetchall()
    assert _unpack(_bodies(root)[f"turn:turn #{seq}"])[0] == SUMMARY
    with MemoryFabric.from_path(root) as fabric:
        version = _turn(fabric.projector.catalog, seq)
        assert isinstance(version, LoggedVersion) and version.summary == SUMMARY
        assert not any("rebuilt from the log" in notice for notice in fabric.projector.take_notices())
        assert _edges(fabric.projector.catalog) == edges
        assert {key: fabric.projector.catalog.key_state(key) for key in edges} == states
    assert _unpack(_bodies(root)[f"turn:turn #{seq}"])[0] is None
    with sqlite3.connect(derived) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema:catalog'").fetchone() == (str(SCHEMA_VERSION),)
        assert "valid_from" not in {row[1] for row in db.execute("PRAGMA table_info(cat_keys)")}
        assert db.execute("SELECT * FROM lst_cursors ORDER BY 1, 2").fetchall() == cursors  # indexes kept
        assert db.execute("SELECT count(*) FROM cat_edges WHERE typeof(id) = 'blob' AND ev_hash IS NULL").fetchone()[0]


def test_a_line_rewritten_between_two_calls_is_caught_by_the_second(tmp_path: Path) -> None:
    """Each query / checkout reads and verifies its cited lines once, in the call: nothing verified by an earlier
    call is trusted by a later one (the same open memory, its caches warm)."""
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        seq = _seed(fabric)
        first = fabric.query("quokka migration", sessions=["s"])
        assert any(hit.seq == seq and "quokka" in hit.text for hit in first.hits)
        assert any(hit.seq == seq and hit.entity and hit.entity["summary"] == SUMMARY for hit in first.hits)
        packet = fabric.checkout("quokka migration", session="s", scope=["s"])
        assert any(item.seq == seq for item in packet.evidence)
        log = root / "s.jsonl"
        log.write_bytes(log.read_bytes().replace(b"quokka migration", b"walrus migration"))  # same length
        second = fabric.query("quokka migration", sessions=["s"])
        assert not any(hit.seq == seq for hit in second.hits)
        assert f"integrity_error: session s event {seq} excluded" in " ".join(second.warnings)
        assert "walrus" not in second.model_dump_json()
        packet = fabric.checkout("quokka migration", session="s", scope=["s"])
        assert not any(item.seq == seq for item in packet.evidence)
        assert f"integrity_error: session s event {seq} excluded" in " ".join(packet.warnings)
        assert "walrus" not in packet.model_dump_json()
