"""Rebuild determinism, incremental catch-up, derived state across restarts, mismatch detection, a held graph."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, run_zaxy, run_zaxy_json
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.storage.derived import DERIVED_FILE


def _mixed_history(fabric: MemoryFabric, session: str, count: int, seed: int = 3) -> None:
    rng = random.Random(seed)
    drafts = []
    for i in range(count):
        task = f"T-{rng.randrange(20)}"
        choice = rng.randrange(9)
        if choice == 0:
            drafts.append({"type": "task.created", "payload": {"task_id": task, "title": f"work item {i}"}})
        elif choice == 1:
            drafts.append({"type": "task.completed", "payload": {"task_id": task}})
        elif choice == 2:
            drafts.append(
                {
                    "type": "decision.recorded",
                    "payload": {"decision": f"choice {i}", "topic": f"topic {i % 7}", "task_id": task},
                }
            )
        elif choice == 3:
            drafts.append(
                {
                    "type": "fact.asserted",
                    "payload": {"subject": f"svc{i % 5}", "predicate": "port", "object": str(8000 + i)},
                }
            )
        elif choice == 4:
            drafts.append(
                {
                    "type": "command.completed",
                    "payload": {"command": f"pytest -k t{i}", "exit_code": i % 2, "task_id": task},
                }
            )
        elif choice == 5:
            drafts.append({"type": "file.edit.applied", "payload": {"path": f"src/m{i % 9}.py", "task_id": task}})
        elif choice == 6:
            drafts.append({"type": "transcript.turn", "payload": {"role": "user", "text": f"message {i}"}})
        elif choice == 7:
            drafts.append(
                {"type": "memory.invalidated", "payload": {"entity": f"topic {i % 7}", "entity_type": "decision"}}
            )
        else:
            drafts.append({"type": "custom.signal", "payload": {"value": i}})
    fabric.append_many(session, drafts)


def test_rebuild_is_deterministic_and_matches_incremental(tmp_path: Path, open_graph_fabric) -> None:
    root = tmp_path / "loom"
    with open_graph_fabric(root) as fabric:
        _mixed_history(fabric, "a", 300)
        _mixed_history(fabric, "b", 150, seed=9)
        incremental = fabric.projection_digest()
        dump_one = list(fabric.projector.store.dump_lines())
        first = fabric.reproject()
        dump_two = list(fabric.projector.store.dump_lines())
        second = fabric.reproject()
    assert incremental == first == second
    assert dump_one == dump_two  # byte for byte
    assert len(dump_one) > 1000


def test_reproject_reads_the_graph_back_for_a_digest_only_when_asked(tmp_path: Path) -> None:
    """`zaxy reproject` skips the digest (a full read of the graph, ~8 % of a large rebuild) unless `--digest`: nothing
    relies on it. The graph it leaves is trusted as is on the next open (same file, no "was not used" notice) and
    holds what a rebuild with the digest gives."""
    root, twin = tmp_path / "loom", tmp_path / "twin"
    with MemoryFabric.from_path(root) as fabric:
        _mixed_history(fabric, "a", 120)
    twin.mkdir()
    (twin / "a.jsonl").write_bytes((root / "a.jsonl").read_bytes())
    code, plain = run_zaxy_json("reproject", "--eventloom-path", str(root))
    assert code == 0 and plain["digest"] is None and plain["events"] == 120
    assert "digest" not in run_zaxy("reproject", "--eventloom-path", str(root)).stdout
    code, asked = run_zaxy_json("reproject", "--digest", "--eventloom-path", str(twin))
    assert code == 0 and len(asked["digest"]) == 64
    graph = root / ".zaxy" / "graph.kuzu"
    inode = graph.stat().st_ino
    with MemoryFabric.from_path(root) as fabric:
        assert fabric.projection_digest() == asked["digest"]
        assert not fabric.memory_status()["derived_state_notices"]
    assert graph.stat().st_ino == inode  # opened as it was, not deleted and rebuilt


def test_catch_up_is_incremental_across_restarts(tmp_path: Path, open_graph_fabric) -> None:
    root = tmp_path / "loom"
    with open_graph_fabric(root) as fabric:
        _mixed_history(fabric, "a", 50)
        assert fabric.project() == 50
        assert fabric.project() == 0
        derived = fabric.projector.derived_path / DERIVED_FILE
    assert derived.exists()
    with open_graph_fabric(root) as fabric:
        assert fabric.project() == 0  # read where it lies: nothing replayed
        fabric.append("a", "fact.asserted", {"fact": "one more"})
        assert fabric.project() == 1
        digest = fabric.projection_digest()
    with open_graph_fabric(root) as fabric:
        assert fabric.reproject() == digest


def test_derived_state_behind_the_log_catches_up(tmp_path: Path, open_graph_fabric) -> None:
    root = tmp_path / "loom"
    with open_graph_fabric(root) as fabric:
        _mixed_history(fabric, "a", 40)
        fabric.project()
        derived = fabric.projector.derived_path / DERIVED_FILE
    old = derived.read_bytes()
    with open_graph_fabric(root) as fabric:
        fabric.append("a", "fact.asserted", {"fact": "after"})
        fabric.project()
        assert fabric.projector.store is not None  # the graph is materialised (and ahead of the old file)
        expected = fabric.memory_status()
    derived.write_bytes(old)  # an earlier state (its last commits lost): the graph is ahead of it
    with open_graph_fabric(root) as fabric:
        status = fabric.memory_status()
        assert status["entities"] == expected["entities"] and status["sessions"] == expected["sessions"]
        assert status["graph_cursors"] == {"a": 41}


def test_derived_state_that_does_not_match_the_log_is_rebuilt_with_a_warning(tmp_path: Path) -> None:
    """A replaced log (or one that is gone) never lets derived state serve what it no longer backs."""
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        fabric.append_many("a", [{"type": "fact.asserted", "payload": {"fact": f"old fact {i}"}} for i in range(5)])
        fabric.append("b", "fact.asserted", {"fact": "the b fact"})
        fabric.project()
        assert fabric.projector.store is not None
    (root / "a.jsonl").unlink()
    (root / "b.jsonl").unlink()
    with MemoryFabric.from_path(root) as fabric:
        fabric.append_many("a", [{"type": "fact.asserted", "payload": {"fact": f"new fact {i}"}} for i in range(6)])
        status = fabric.memory_status()
        assert status["sessions"]["a"]["last_projected_seq"] == 6 and "b" not in status["sessions"]
        assert status["entities"] == 6 and status["graph_cursors"] == {"a": 6}
        notices = "\n".join(status["derived_state_notices"])
        assert "session 'a' did not match the log" in notices and "derived.sqlite" in notices
        assert "session 'b' did not match the log (its log is gone" in notices
        packet = fabric.checkout("which facts?", session="a")
        assert "old fact" not in packet.prompt
    code, body = run_zaxy_json("memory", "status", "--eventloom-path", str(root))
    assert code == 0 and body["sessions"]["a"]["last_projected_seq"] == 6
    digest = run_zaxy_json("reproject", "--digest", "--eventloom-path", str(root))[1]["digest"]
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "a.jsonl").write_bytes((root / "a.jsonl").read_bytes())
    assert run_zaxy_json("reproject", "--digest", "--eventloom-path", str(fresh))[1]["digest"] == digest


def test_a_held_graph_leaves_reads_working(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        fabric.append("a", "fact.asserted", {"subject": "db", "predicate": "host", "object": "alpha"})
    holder = subprocess.Popen(
        [sys.executable, "-m", "tests.projection._holder", str(root)],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        with MemoryFabric.from_path(root) as fabric:
            event = fabric.append("a", "fact.asserted", {"subject": "db", "predicate": "host", "object": "beta"})
            status = fabric.memory_status()
            assert "held by another process" in status["degraded"]
            assert status["graph_cursors"] == {}  # never claims what it cannot see
            assert status["sessions"]["a"]["last_projected_seq"] == event.seq
            current = fabric.projector.catalog.current("a\x1ffact\x1fdb host")
            assert current is not None and current.summary == "db host beta"
        result = run_zaxy("memory", "status", "--eventloom-path", str(root), "--json")
        assert result.returncode == 0 and "held by another process" in result.stdout
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    with MemoryFabric.from_path(root) as fabric:
        status = fabric.memory_status()
        assert status["degraded"] is None and status["graph_cursors"]["a"] == 2


def test_schema_plan_opens_no_database(tmp_path: Path) -> None:
    code, body = run_zaxy_json("schema-plan", cwd=tmp_path)
    assert code == 0 and body["migrations"][0]["name"].startswith("0001")
    assert body["migrations"][0]["statement_count"] == len(body["migrations"][0]["statements"])
    assert not any(tmp_path.rglob("*.kuzu*"))


def test_migrations_are_recorded_and_idempotent(fabric: MemoryFabric) -> None:
    fabric.project()
    store = fabric.projector.store
    recorded = store.migrations()
    assert recorded and all(len(m["checksum"]) == 64 and m["statement_count"] > 0 for m in recorded)
    assert store.migrate() == []


def test_an_older_schema_is_migrated_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A database created by migration 0001 gets 0002-0009 in place on open, keeping its rows; 0010 (a new primary
    key) re-creates every table: a graph is derived data, its rows come back from the log."""
    import kuzu

    from zaxy_agents.storage.files import kuzu_layout
    from zaxy_agents.storage.files.kuzu_schema import MIGRATION_TABLE_DDL, MIGRATIONS, unkeyed_node_columns
    from zaxy_agents.storage.files.kuzu_store import KuzuProjectionStore

    path = tmp_path / "old.kuzu"
    database = kuzu.Database(str(path))
    connection = kuzu.Connection(database)
    connection.execute(MIGRATION_TABLE_DDL)
    first = MIGRATIONS[0]
    for statement in first.statements:
        connection.execute(statement)
    connection.execute(
        "CREATE (:Migration {name: $n, checksum: $c, statement_count: $k, applied_at: 'then'})",
        {"n": first.name, "c": first.checksum, "k": len(first.statements)},
    )
    connection.execute(
        "CREATE (:Entity {id: 'v1', key: 'k', session_id: 's', name: 'n', entity_type: 'fact', "
        "summary: 'old row', valid_from: '2020-01-01T00:00:00.000000Z', source_event_seq: 1, "
        "importance: 0.5})"
    )
    database.close()
    with monkeypatch.context() as before_0010:
        before_0010.setattr(kuzu_layout, "MIGRATIONS", tuple(m for m in MIGRATIONS if m.name < "0010"))
        before_0010.setattr(kuzu_layout, "stored_node_columns", unkeyed_node_columns)
        store = KuzuProjectionStore(path)
        try:
            # the row stays (no cursor: nothing to re-project); its text columns are gone (0006: the catalog holds it)
            assert store._rows("MATCH (e:Entity {id: 'v1'}) RETURN e.name, e.asserted") == [["n", True]]
            assert not {"summary", "properties"} & {r[1] for r in store._rows("CALL TABLE_INFO('Entity') RETURN *")}
        finally:
            store.close()
    store = KuzuProjectionStore(path)
    try:
        assert [m["name"] for m in store.migrations()] == [m.name for m in MIGRATIONS]
        assert store._rows("MATCH (e:Entity) RETURN count(e)") == [[0]]
        assert "pk" in {row[1] for row in store._rows("CALL TABLE_INFO('Entity') RETURN *")}
        assert store.migrate() == []
    finally:
        store.close()


def test_a_projector_attaches_the_graph_once_it_is_released(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        fabric.append("a", "fact.asserted", {"subject": "db", "predicate": "host", "object": "alpha"})
    holder = subprocess.Popen(
        [sys.executable, "-m", "tests.projection._holder", str(root)],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "ready"
    with MemoryFabric.from_path(root) as fabric:
        try:
            fabric.append("a", "fact.asserted", {"subject": "db", "predicate": "host", "object": "beta"})
            assert "held by another process" in fabric.memory_status()["degraded"]
        finally:
            holder.stdin.close()
            holder.wait(timeout=60)
        fabric.append("a", "fact.asserted", {"subject": "db", "predicate": "host", "object": "gamma"})
        status = fabric.memory_status()
        assert status["degraded"] is None
        assert status["graph_cursors"]["a"] == status["sessions"]["a"]["last_projected_seq"] == 3
        current = fabric.projector.catalog.current("a\x1ffact\x1fdb host")
        assert current is not None and current.summary == "db host gamma"


def test_erase_replays_the_session_and_an_erasure_record_reaches_other_stores(tmp_path: Path) -> None:
    """``projector.erase`` drops a session's derived rows and re-projects it (no duplicates, same graph); a store
    that meets an ``eventloom.erased`` record during catch-up does the same, once."""
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        _mixed_history(fabric, "a", 60)
        _mixed_history(fabric, "b", 30, seed=5)
        before = fabric.memory_status()
        digest = fabric.projection_digest()
        fabric.projector.erase("a", [3, 4], None)
        after = fabric.memory_status()
        assert {k: after[k] for k in ("entities", "edges", "sessions")} == {
            k: before[k] for k in ("entities", "edges", "sessions")
        }
        assert fabric.projection_digest() == digest
        report = fabric.erase_range("a", 3, 4, actor="test")  # records, scrubs, then calls projector.erase
        assert report["erased"] == 2 and report["record"].startswith("eventloom://a/events/61#")
        assert fabric.projector.derived.meta("erased:a") == "61"  # its own record is then covered
        erased_status = fabric.memory_status()
    copy = tmp_path / "other"
    copy.mkdir()
    for log in root.glob("*.jsonl"):  # another store that never saw the erasure: it meets the record
        (copy / log.name).write_bytes(log.read_bytes())
    with MemoryFabric.from_path(copy) as other:
        erased = []
        original = other.projector.erase
        other.projector.erase = lambda *args: (erased.append(args[:2]), original(*args))[1]  # type: ignore[method-assign]
        other.project()
        assert erased == [("a", [3, 4])]
        other.project()
        assert erased == [("a", [3, 4])]  # applied once
        assert other.memory_status()["entities"] == erased_status["entities"]


def test_status_never_builds_a_graph_that_was_never_used(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        _mixed_history(fabric, "a", 30)
        status = fabric.memory_status()
        assert status["graph_materialised"] is False and status["graph_cursors"] == {}
        assert status["sessions"]["a"]["projection_lag"] == 0 and status["entities"] > 0
        assert not (root / ".zaxy" / "graph.kuzu").exists()
        assert fabric.traverse("a", "T-1", "task") is not None  # a graph operation materialises it
        status = fabric.memory_status()
        assert status["graph_materialised"] is True and status["graph_cursors"] == {"a": 30}
