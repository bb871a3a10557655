"""The catalog's read caches after commits: a projected batch drops exactly the entries it changed.

Every case compares what the long-lived catalog (caches warm from before the writes) serves with what a fresh
catalog over the same file reads, for every identity of the sessions involved: a stale entry fails the test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.sqlite_catalog import SqliteCatalog


def _served(catalog: Any, sessions: list[str]) -> dict[str, Any]:
    """Everything the catalog's caches serve for these sessions (reading it also fills the caches)."""
    seen: dict[str, Any] = {"cursors": dict(catalog.cursors), "events": catalog.event_count}
    for session in sessions:
        for kind in catalog.entity_type_counts(session):
            seen[f"{session} recent {kind}"] = catalog.recent_versions(session, kind, 500, None)
            seen[f"{session} recent keys {kind}"] = catalog.recent_keys(session, kind, 500)
        for key in catalog.session_keys(session, limit=10_000):
            history = [version.id for version in catalog.history(key)]
            versions = [catalog.version(version_id) for version_id in history]
            events = [(v.session, v.source_event_seq) for v in versions if v is not None]
            seen[key] = {
                "state": catalog.key_state(key),
                "current": catalog.current(key),
                "versions": versions,
                "many": catalog.versions(history),
                "sources": catalog.version_sources([*history, "no such version"]),
                "keys": [catalog.version_key(version_id) for version_id in [*history, "no such version"]],
                "events": [catalog.event_versions(*event) for event in events],
                "events_many": catalog.events_versions(events),
                "ends": catalog.neighbour_keys(key),  # the graph lanes' light read, before the edges are cached
                "out": catalog.out_edges(key),
                "in": catalog.in_edges(key),
                "degree": catalog.degree(key),
                "feedback": catalog.feedback(key),
                "named": sorted(catalog.keys_named(versions[-1].name)) if versions and versions[-1] else [],
                "named_many": catalog.keys_named_many([v.name for v in versions if v] + ["no such name"]),
            }
    return seen


def _fresh(fabric: MemoryFabric) -> SqliteCatalog:
    """A catalog over the same file with cold caches (reading turn summaries from the same log)."""
    return SqliteCatalog(fabric.projector.derived, fabric.projector.catalog.log_texts)


def _seed(fabric: MemoryFabric) -> None:
    for session in ("a", "b"):
        fabric.append(session, "task.created", {"task_id": "T-1", "title": f"Ship the {session} release"})
        fabric.append(session, "fact.asserted", {"subject": "db", "predicate": "host", "object": "alpha"})
        fabric.append(session, "decision.recorded", {"decision": "Use WAL", "topic": "storage", "task_id": "T-1"})
    fabric.project()


def test_a_projected_append_is_served_and_other_sessions_keep_their_entries(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        _seed(fabric)
        catalog = fabric.projector.catalog
        _served(catalog, ["a", "b"])  # warm every cache
        kept = catalog.version(catalog.key_state("b\x1ffact\x1fdb host").current)
        kept_recent = catalog.recent_versions("b", "fact", 500, None)
        old_a = catalog.current("a\x1ffact\x1fdb host")
        assert kept is not None and old_a is not None
        assert catalog.keys_named("Turn  #6") == set()  # cached as unknown before the identity exists

        # a closure (the fact's new value), a new identity, a new edge onto an existing task, a new turn
        fact = fabric.append("a", "fact.asserted", {"subject": "db", "predicate": "host", "object": "beta"})
        fabric.append("a", "decision.recorded", {"decision": "Keep backups", "topic": "ops", "task_id": "T-1"})
        turn = fabric.append("a", "transcript.turn", {"role": "user", "text": "the quokka migration starts Monday"})
        fabric.project()

        fresh = _fresh(fabric)
        served = _served(catalog, ["a", "b"])
        assert served == _served(fresh, ["a", "b"])
        identities = [entry for entry in served.values() if isinstance(entry, dict) and "ends" in entry]
        assert any(entry["ends"] for entry in identities)  # the decision -> task edges
        for key in fresh.session_keys("a", limit=10_000):  # the light read: the records' ends, in their order
            assert fresh.neighbour_keys(key) == EntityCatalog.neighbour_keys(fresh, key)
            assert fresh.degree(key) == len(fresh.out_edges(key)) + len(fresh.in_edges(key))
        assert catalog.keys_named("turn #6") == fresh.keys_named("turn #6") == {"a\x1fturn\x1fturn #6"}
        current = catalog.current("a\x1ffact\x1fdb host")
        assert current is not None and current.source_event_seq == fact.seq
        closed = catalog.event_versions("a", old_a.source_event_seq)
        assert [v.valid_to for v in closed] != [None] * len(closed)  # the old event's version shows its closure
        hits = fabric.query("quokka migration", sessions=["a"]).hits
        assert any(hit.seq == turn.seq for hit in hits)  # the new event is found
        # session b was not written: its cached version is the same object, not a re-read
        assert catalog.version(kept.id) is kept
        assert all(a is b for a, b in zip(catalog.recent_versions("b", "fact", 500, None), kept_recent, strict=True))


def test_a_commit_by_another_store_drops_every_cache(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        _seed(fabric)
        catalog = fabric.projector.catalog
        _served(catalog, ["a", "b"])
        catalog.refresh()
        fabric.append("a", "transcript.turn", {"role": "user", "text": "an own write"})
        fabric.project()
        assert not catalog.refresh()  # this store's own commit already kept the caches exact
        with MemoryFabric.from_path(root) as other:  # its own derived-state connection: a foreign commit
            other.append("b", "fact.asserted", {"subject": "db", "predicate": "host", "object": "gamma"})
            other.project()
        assert catalog.refresh()  # another connection committed: every cache is dropped
        assert _served(catalog, ["a", "b"]) == _served(_fresh(fabric), ["a", "b"])
        current = catalog.current("b\x1ffact\x1fdb host")
        assert current is not None and "gamma" in current.summary


def test_an_erasure_drops_the_light_version_lookups_too(tmp_path: Path) -> None:
    """``version_sources`` / ``version_key`` (the keyword and graph lanes' light reads) forget an erased event's
    versions like every other cache: nothing erased is located from memory afterwards."""
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        _seed(fabric)
        catalog = fabric.projector.catalog
        task = catalog.current("a\x1ftask\x1ft-1")
        assert task is not None
        assert catalog.version_sources([task.id])[task.id][1:3] == ("a", task.source_event_seq)
        assert catalog.version_key(task.id) == task.key
        _served(catalog, ["a", "b"])  # warm every cache
        fabric.erase_events("a", [task.source_event_seq], reason="test")
        fabric.project()
        assert task.id not in catalog.version_sources([task.id])
        assert catalog.version_key(task.id) is None
        assert _served(catalog, ["a", "b"]) == _served(_fresh(fabric), ["a", "b"])


def test_a_turn_keeps_its_sessions_lists_of_other_types(tmp_path: Path) -> None:
    """A session's recent lists are per entity type: a turn (an agent writes one every turn) drops the session's
    ``turn`` lists only; a fact drops its ``fact`` lists. Each served list equals a fresh catalog's."""
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        _seed(fabric)
        catalog = fabric.projector.catalog
        fabric.append("a", "transcript.turn", {"role": "user", "text": "first words"})
        fabric.project()
        facts, tasks = catalog.recent_versions("a", "fact", 500, None), catalog.recent_keys("a", "task", 500)
        turns = catalog.recent_versions("a", "turn", 500, None)
        fabric.append("a", "transcript.turn", {"role": "user", "text": "the quokka migration starts Monday"})
        fabric.project()
        fresh = _fresh(fabric)
        assert all(a is b for a, b in zip(catalog.recent_versions("a", "fact", 500, None), facts, strict=True))
        assert catalog.recent_keys("a", "task", 500) == tasks == fresh.recent_keys("a", "task", 500)
        now = catalog.recent_versions("a", "turn", 500, None)
        assert now == fresh.recent_versions("a", "turn", 500, None) and len(now) == len(turns) + 1
        fabric.append("a", "fact.asserted", {"subject": "db", "predicate": "host", "object": "beta"})
        fabric.project()
        assert catalog.recent_versions("a", "fact", 500, None) == fresh.recent_versions("a", "fact", 500, None)
        assert "beta" in catalog.recent_versions("a", "fact", 500, None)[0].summary
        assert _served(catalog, ["a", "b"]) == _served(fresh, ["a", "b"])
