"""The graph on PostgreSQL as a shared graph of record: the same graph as the embedded store for the same log,
concurrent workers that never write a batch twice, readers that see other workers' events, migrations."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.projection.test_projection_lifecycle import _mixed_history
from zaxy_agents.errors import SchemaMismatchError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.fabric.features import builtin_features
from zaxy_agents.projection.model import entity_key
from zaxy_agents.projection.planner import ProjectionPlanner
from zaxy_agents.projection.store_catchup import catch_up_session
from zaxy_agents.storage.conformance.harness import PostgresHarness
from zaxy_agents.storage.postgres import graph_admin as postgres_admin
from zaxy_agents.storage.postgres import graph_schema as postgres_schema
from zaxy_agents.storage.postgres import graph_store as postgres_store
from zaxy_agents.storage.postgres.graph_store import PostgresProjectionStore
from zaxy_agents.storage.postgres.migrations import Migration


@pytest.fixture
def pg(postgres_backend: PostgresHarness, monkeypatch: pytest.MonkeyPatch) -> PostgresHarness:
    monkeypatch.setenv("ZAXY_POSTGRES_SCHEMA", postgres_backend.schema)
    return postgres_backend


def _embedded_copy(pg_fabric: MemoryFabric, root: Path) -> MemoryFabric:
    """The PostgreSQL log exported byte for byte into an embedded Eventloom (its own Kuzu graph)."""
    pg_fabric.export_jsonl(output_dir=root)
    return MemoryFabric.from_path(root)


def _graph_history(fabric: MemoryFabric, session: str) -> None:
    _mixed_history(fabric, session, 250)
    names = [f"T-{i}" for i in range(20)]
    fabric.append_many(
        session,
        [
            {
                "type": "inference.edge.generated",
                "payload": {
                    "source": {"name": names[i % 20], "entity_type": "task"},
                    "target": {"name": names[(i * 7 + 3) % 20], "entity_type": "task"},
                    "relation_type": "depends_on" if i % 2 else "blocks",
                    "confidence": 0.5 + i / 100,
                    "inference_method": "test",
                    "evidence": {"seq": 1, "hash": "0" * 64},
                },
            }
            for i in range(40)
        ],
    )


def test_the_same_log_gives_the_same_graph_and_answers_on_both_stores(pg: PostgresHarness, tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "pg", backend=pg.dsn) as shared:
        _graph_history(shared, "a")
        _mixed_history(shared, "b", 120, seed=5)
        shared_digest = shared.projection_digest()
        with _embedded_copy(shared, tmp_path / "embedded") as embedded:
            assert embedded.projection_digest() == shared_digest
            assert list(embedded.projector.store.dump_lines()) == list(shared.projector.store.dump_lines())
            kuzu, postgres = embedded.projector.store, shared.projector.store
            moment = next(e for e in shared.replay("a") if e.seq == 150).timestamp
            compared = 0
            for seed in ("T-1", "T-4", "T-7", "T-13"):
                for kwargs in (
                    {"depth": 3},
                    {"depth": 2, "relation_types": ["depends_on"]},
                    {"depth": 3, "as_of": moment},
                    {"depth": 2, "relation_types": ["blocks", "observed_command"], "as_of": moment},
                ):
                    start = [entity_key("a", "task", seed)]
                    ours = [(h.entity.id, h.depth, h.via.id, h.direction) for h in postgres.traverse(start, **kwargs)]
                    theirs = [(h.entity.id, h.depth, h.via.id, h.direction) for h in kuzu.traverse(start, **kwargs)]
                    assert ours == theirs, (seed, kwargs)
                    compared += len(ours)
            assert compared > 50
            for name, kind in (("svc1 port", "fact"), ("T-3", "task"), ("topic 2", "decision")):
                assert postgres.entity_history(name, kind, "a") == kuzu.entity_history(name, kind, "a")
            for session, limit in (("a", 1000), (None, 1000), (None, 7)):  # version_order: the same list on both
                listed = [store.entities_as_of(moment, session=session, limit=limit) for store in (postgres, kuzu)]
                assert listed[0] == listed[1] and listed[0], (session, limit)
            assert {**vars(postgres.stats()), "backend": None} == {**vars(kuzu.stats()), "backend": None}


def test_batches_that_overlap_are_written_once_and_gaps_are_continued_from_the_store(
    pg: PostgresHarness, tmp_path: Path
) -> None:
    with MemoryFabric.from_path(tmp_path / "w", backend=pg.dsn, use_graph=False) as writer:
        _mixed_history(writer, "s", 60)
        log = writer.log

        def batches(*ranges: tuple[int, int]) -> list:
            planner, out = ProjectionPlanner(), []
            for first, last in ranges:
                for envelope in log.replay_envelopes("s", first, last):
                    planner.add(envelope, builtin_features().extractors.extract(envelope))
                out.append(planner.take_batch())
            return out

        store = PostgresProjectionStore(pg.dsn)
        try:
            a1, a2 = batches((1, 25), (26, 60))  # worker A
            b1, b2, b3 = batches((1, 10), (11, 40), (41, 60))  # worker B, other boundaries
            assert store.apply(a1) == {"s": "written"}
            assert store.apply(b1) == {"s": "skipped"}  # A wrote these events already
            assert store.apply(b2) == {"s": "behind"}  # starts inside what A wrote
            assert catch_up_session(store, log, builtin_features().extractors, "s", 40, batch_events=7) is None
            assert store.cursors()["s"][0] == 40
            assert store.apply(a2) == {"s": "behind"}
            assert catch_up_session(store, log, builtin_features().extractors, "s", 60, batch_events=1000) is None
            assert store.apply(b3) == {"s": "skipped"}
            pieced = list(store.dump_lines())
        finally:
            store.close()
        with _embedded_copy(writer, tmp_path / "embedded") as embedded:
            embedded.project()
            assert embedded.projector.flush()
            assert pieced == list(embedded.projector.store.dump_lines())


def _child(args: list[str], env: dict[str, str], **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.projection._graph_worker", *args],
        cwd=REPO_ROOT,
        env={**os.environ, **env},
        text=True,
        stdout=subprocess.PIPE,
        **kwargs,
    )


def test_worker_processes_share_one_graph_and_readers_see_new_events(pg: PostgresHarness, tmp_path: Path) -> None:
    def host(name: str) -> dict[str, str]:  # each worker its own local folder, as on separate hosts
        return {**pg.env(), "ZAXY_EVENTLOOM_PATH": str(tmp_path / name)}

    reader = _child(["read"], host("reader"), stdin=subprocess.PIPE)
    try:
        assert reader.stdout.readline().strip() == "ready"
        writers = [_child(["write", f"w{n}", "12"], host(f"host{n}")) for n in range(3)]
        for process in writers:
            assert process.communicate(timeout=180)[0].strip() == "done" and process.returncode == 0

        def ask(line: str) -> str:
            reader.stdin.write(line + "\n")
            reader.stdin.flush()
            return reader.stdout.readline().strip()

        summary, mentions = ask("current w1 w1 step").split("|")
        assert summary == "w1 step 11" and int(mentions) >= 1  # events appended after the reader opened
        assert ask("neighbours w2 T-1") == ",".join(sorted(f"make {i}" for i in range(12)))
        with MemoryFabric.from_path(tmp_path / "late", backend=pg.dsn) as late:
            late.append("w1", "fact.asserted", {"subject": "w1", "predicate": "step", "object": "final"})
        assert ask("current w1 w1 step").split("|")[0] == "w1 step final"
    finally:
        reader.stdin.close()
        reader.wait(timeout=60)
    with MemoryFabric.from_path(tmp_path / "check", backend=pg.dsn) as shared:
        shared.project()
        assert shared.projector.flush()
        with _embedded_copy(shared, tmp_path / "embedded") as embedded:
            embedded.project()
            assert embedded.projector.flush()
            assert list(shared.projector.store.dump_lines()) == list(embedded.projector.store.dump_lines())


def test_a_pending_projection_migration_is_refused_until_migrated(
    pg: PostgresHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryFabric.from_path(tmp_path / "loom", backend=pg.dsn) as fabric:
        fabric.append("s", "fact.asserted", {"fact": "before the upgrade"})
        fabric.project()
        assert fabric.projector.store is not None  # the shared graph is written when the graph is opened
    upgraded = (
        *postgres_schema.MIGRATIONS,
        Migration("projection", "0002_test_column", ("ALTER TABLE {schema}.projection_sources ADD COLUMN note text",)),
    )
    for module in (postgres_store, postgres_admin):
        monkeypatch.setattr(module, "MIGRATIONS", upgraded)
    with pytest.raises(SchemaMismatchError) as info:
        PostgresProjectionStore(pg.dsn)
    assert "0002_test_column" in info.value.message and "zaxy backend migrate" in info.value.remediation
    settings = MemoryFabric.from_path(tmp_path / "loom", backend=pg.dsn).settings
    with MemoryFabric.for_maintenance(settings) as maintenance:
        status = maintenance.backend_status()
    assert not status.schema_ok and any("0002_test_column is pending" in p for p in status.problems)
    with MemoryFabric.for_maintenance(settings, apply_migrations=True) as maintenance:
        assert maintenance.applied_migrations() == ["0002_test_column"]
        assert maintenance.backend_status().schema_ok
    with MemoryFabric.from_path(tmp_path / "loom", backend=pg.dsn) as fabric:
        assert [v.summary for v in fabric.entity_history("s", "before the upgrade", "fact")] == ["before the upgrade"]
