"""The backend object and its graph store: same graph, same answers and same digest as the reference for the same
log; declared capabilities that really work; the whole fabric running on it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from zaxy_agents.config import ZaxySettings
from zaxy_agents.fabric import MemoryFabric

from ..protocols import Capability, StorageBackend
from .core import Check, Subject, expect, opened, overridden
from .harness import BackendHarness
from .sample import SESSIONS, copy_log, write_sample


@contextmanager
def fabric_on(harness: BackendHarness) -> Iterator[MemoryFabric]:
    """A MemoryFabric on the harness's backend (no embedder: the checks need no model)."""
    backend = harness.backend()
    settings = ZaxySettings.resolve(backend.settings.eventloom_dir, backend=backend.settings.backend, embedder="none")
    with MemoryFabric(settings, backend=backend) as fabric:
        yield fabric


@contextmanager
def projected_pair(subject: Subject) -> Iterator[tuple[MemoryFabric, MemoryFabric]]:
    """The reference and the subject holding the same sample log, both projected."""
    with (
        subject.reference() as reference,
        subject.fresh() as harness,
        fabric_on(reference) as expected,
        fabric_on(harness) as actual,
    ):
        write_sample(expected.log)
        copy_log(expected.log, actual.log)
        for fabric in (expected, actual):
            fabric.project()
            fabric.projector.flush()
        yield expected, actual


def graph_matches_reference(subject: Subject) -> None:
    with projected_pair(subject) as (expected, actual):
        store = actual.projector.store
        expect(store is not None, f"the graph store did not open: {actual.projector.degraded}")
        expect(actual.projection_digest() == expected.projection_digest(), "the graph dump differs from the reference")
        assert store is not None and expected.projector.store is not None
        heads = {s.session: (s.event_count, s.head_hash) for s in actual.sessions()}
        expect(store.cursors() == heads, f"cursors {store.cursors()} do not match the log heads {heads}")
        mine, theirs = store.stats(), expected.projector.store.stats()
        expect(
            (mine.events, mine.entities, mine.current_entities, mine.edges, mine.inferred_edges)
            == (theirs.events, theirs.entities, theirs.current_entities, theirs.edges, theirs.inferred_edges),
            f"stats differ: {mine} vs {theirs}",
        )
        expect(mine.events == sum(count for count, _hash in heads.values()), "every event is in the graph")


def graph_queries_match_reference(subject: Subject) -> None:
    with projected_pair(subject) as (expected, actual):
        mine, theirs = actual.projector.store, expected.projector.store
        assert mine is not None and theirs is not None
        history = mine.entity_history("user city", "fact", SESSIONS[0])
        expect([v.summary for v in history] == ["user city Lisbon", "user city Porto"], "two versions, oldest first")
        expect(history[0].valid_to == history[1].valid_from, "a superseded version closes when the next begins")
        expect(history == theirs.entity_history("user city", "fact", SESSIONS[0]), "entity_history differs")
        moment = history[0].valid_from
        ours, reference = (sorted((v.source_event_seq, v.id) for v in s.entities_as_of(moment)) for s in (mine, theirs))
        expect(ours == reference, f"entities_as_of differs: {ours} vs {reference}")
        start = [history[1].key]
        for depth, as_of in ((1, None), (2, None), (2, moment)):
            ours = [
                (h.entity.id, h.depth, h.direction, h.via.id) for h in mine.traverse(start, depth=depth, as_of=as_of)
            ]
            reference = [
                (h.entity.id, h.depth, h.direction, h.via.id) for h in theirs.traverse(start, depth=depth, as_of=as_of)
            ]
            expect(ours == reference, f"traverse(depth={depth}, as_of={as_of}) differs: {ours} vs {reference}")
        expect(mine.traverse(start, depth=1) != [], "the fact reaches its topic in one hop")
        # The same entities; scores and order are the engine's own (PostgreSQL ranks with tsvector).
        found, expected = (
            {v.id for v, _ in s.search_entities("gateway deploy", session=SESSIONS[1])} for s in (mine, theirs)
        )
        expect(found == expected, f"search_entities finds other entities: {found} vs {expected}")
        names = [v.name for v, _score in mine.search_entities("make deploy", session=SESSIONS[1])]
        expect("make deploy #6" in names, f"search_entities finds the command by its words: {names}")


def rebuild_is_deterministic(subject: Subject) -> None:
    with projected_pair(subject) as (expected, actual):
        before = actual.projection_digest()
        expect(actual.reproject() == before == expected.reproject(), "rebuilding gives the same digest")
        expect(actual.memory_status()["events"] == 22, "the rebuilt projection holds every event")


def status(subject: Subject) -> None:
    with subject.fresh() as harness, fabric_on(harness) as fabric:
        write_sample(fabric.log)
        report = fabric.backend_status()
        expect((report.session_count, report.event_count) == (2, 22), f"status counts the memory: {report}")
        expect(report.schema_ok and not report.problems, f"a fresh backend has no schema problem: {report.problems}")
        userinfo = harness.backend().settings.backend.partition("://")[2].partition("@")
        password = userinfo[0].partition(":")[2] if userinfo[1] else ""
        expect(not password or f":{password}@" not in report.location, "the location never shows a password")


def declared_capabilities(subject: Subject) -> None:
    with subject.fresh() as harness:
        backend = harness.backend()
        methods = {
            Capability.SHARED_VECTORS: "open_vectors",
            Capability.GROUP_COMMIT: "group_commit_log",
            Capability.MIGRATIONS: "migrate",
            Capability.GRAPH_SCHEMA_PLAN: "graph_schema_plan",
        }
        for capability, method in methods.items():
            if capability in backend.capabilities:
                expect(overridden(backend, StorageBackend, method), f"{capability} declared, {method} not overridden")
        expect(bool(backend.name) and bool(backend.location), "a backend has a name and a printable location")
        graph = backend.open_graph()
        try:
            shared = Capability.SHARED_GRAPH in backend.capabilities
            expect(
                graph.shared == shared, f"SHARED_GRAPH declared {shared}, the graph store says shared={graph.shared}"
            )
        finally:
            graph.close()
            backend.close()


def group_commit(subject: Subject) -> None:
    with subject.fresh() as harness, opened(harness) as log:
        backend = harness.backend()
        grouped = backend.group_commit_log(log)
        event = grouped.append_many("s", [{"type": "note.added", "payload": {"pending": True}}])[0]
        grouped.sync()
        expect(log.get("s", event.seq).hash == event.hash, "group-committed appends are in the same log")
        backend.close()


def shared_vectors(subject: Subject) -> None:
    with subject.fresh() as harness:
        backend = harness.backend()
        first, second = backend.open_vectors(), backend.open_vectors()
        try:
            vectors = np.eye(2, 4, dtype=np.float32)
            first.save("model@1", [("s", 1), ("s", 2)], vectors)
            rows = list(second.since("model@1", 0))
            expect([key for _id, key, _v in rows] == [("s", 1), ("s", 2)], "another worker sees saved vectors")
            expect(np.allclose(rows[1][2], vectors[1]), "vectors come back unchanged")
            expect(list(second.since("model@1", rows[-1][0])) == [], "since() returns only newer rows")
            first.drop("model@1")
            expect(list(second.since("model@1", 0)) == [], "drop removes a model's vectors")
        finally:
            first.close()
            second.close()


def migrations(subject: Subject) -> None:
    with subject.fresh() as harness:
        backend = harness.backend()
        backend.migrate()
        expect(backend.migrate() == [], "migrating twice applies nothing the second time")
        with opened(harness) as log:
            report = backend.status(log)
        expect(report.schema_ok and all(m.state == "applied" for m in report.migrations), f"all applied: {report}")


def persistent(subject: Subject) -> None:
    with subject.fresh() as harness:
        with opened(harness) as log:
            event = log.append("s", "note.added", {"kept": True})
        with opened(harness) as reopened:  # a new backend object on the same location
            expect(reopened.resolve(event.citation).hash == event.hash, "memory survives reopening the location")


def graph_schema_plan(subject: Subject) -> None:
    with subject.fresh() as harness:
        plan = type(harness.backend()).graph_schema_plan()
        expect(bool(plan["migrations"]) and all(m["statements"] for m in plan["migrations"]), f"a plan: {plan}")


def fabric_end_to_end(subject: Subject) -> None:
    with subject.fresh() as harness, fabric_on(harness) as fabric:
        write_sample(fabric.log)
        packet = fabric.checkout("where does the user live?", session=SESSIONS[0])
        facts = [fact.summary for fact in packet.current_facts]
        expect("user city Porto" in facts and "user city Lisbon" not in facts, f"current facts only: {facts}")
        expect(all(item.resolvable for item in packet.provenance), "every citation in the packet resolves")
        hits = fabric.verbatim("gateway timeouts", sessions=[SESSIONS[0]]).hits
        expect(bool(hits) and fabric.resolve(hits[0].citation).seq == hits[0].seq, "verbatim hits cite their event")


CHECKS = (
    Check("graph.matches_reference", graph_matches_reference),
    Check("graph.queries_match_reference", graph_queries_match_reference),
    Check("graph.rebuild_is_deterministic", rebuild_is_deterministic),
    Check("backend.status", status),
    Check("backend.declared_capabilities", declared_capabilities),
    Check("backend.group_commit", group_commit, Capability.GROUP_COMMIT),
    Check("backend.shared_vectors", shared_vectors, Capability.SHARED_VECTORS),
    Check("backend.migrations", migrations, Capability.MIGRATIONS),
    Check("backend.persistent", persistent, Capability.PERSISTENT),
    Check("backend.graph_schema_plan", graph_schema_plan, Capability.GRAPH_SCHEMA_PLAN),
    Check("fabric.end_to_end", fabric_end_to_end),
)
