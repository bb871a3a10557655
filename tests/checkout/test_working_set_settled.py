"""The working set skips the versions that can no longer change it (their buckets are full), and a whole memory or a
wide scope is read through per-session partials. Both checked against a reference copy of the loop that reads every
version of every session, on a seeded multi-session memory asked as a whole, per session and at a past moment:
blocked and open tasks, commands failing and fixed in other sessions, goal facts and plain facts, identities
asserted many times (the per-session scan cut), closed identities, and event times that tie across sessions and
run against the append order."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from zaxy_agents.checkout import working_set
from zaxy_agents.checkout.facts import stable_facts
from zaxy_agents.checkout.models import WorkingSet
from zaxy_agents.checkout.working_set import (
    BLOCKED,
    DONE,
    SCAN_PER_TYPE,
    WORKING_TYPES,
    _push,
    build_working_set,
)
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection import session_memo


def _reference(catalog, sessions: set[str] | None, as_of: str | None = None) -> WorkingSet:  # type: ignore[no-untyped-def]
    """build_working_set before the skip: every candidate's properties read, in the same order."""
    current = []
    for session in sorted(sessions if sessions is not None else catalog.sessions):
        for entity_type in WORKING_TYPES:
            current += catalog.recent_versions(session, entity_type, SCAN_PER_TYPE, as_of)
    current.sort(key=lambda v: (v.valid_from, v.source_event_seq), reverse=True)
    working, succeeded = WorkingSet(), set()
    for version in current:
        kind, properties = version.entity_type, json.loads(version.properties_json or "{}")
        if kind == "task":
            status = str(properties.get("status") or "").lower()
            if status in BLOCKED:
                _push(working.blockers, version, properties)
            elif status not in DONE:
                _push(working.tasks, version, properties)
        elif kind == "decision":
            _push(working.decisions, version, properties)
        elif kind == "file":
            _push(working.artifacts, version, properties)
        elif kind == "command_run":
            command = str(properties.get("command", ""))
            if properties.get("exit_code") == 0:
                succeeded.add(command)
            elif properties.get("exit_code") is not None and command not in succeeded:
                _push(working.blockers, version, properties)
        elif kind == "session" or (kind == "fact" and properties.get("predicate") in {"goal", "objective"}):
            _push(working.goals, version, properties)
        elif kind in {"document", "document_chunk"} and version.source_path:
            _push(working.source_anchors, version, properties)
    return working


def _seed(memory: MemoryFabric, sessions: int, events: int, seed: int) -> None:
    """Work events in many sessions; event times drawn from a few minutes (ties across sessions, out of append
    order); task ids repeat (identities with many versions push others out of a session's scan)."""
    rng = random.Random(seed)
    for number in range(sessions):
        session = f"s{number}"
        for i in range(events):
            at = {"occurred_at": f"2026-01-01T00:{rng.randrange(12):02d}:00+00:00"} if rng.random() < 0.7 else {}
            roll = rng.random()
            if roll < 0.3:
                status = rng.choice(["open", "blocked", "done", "waiting", ""])
                payload = {"task_id": f"T-{rng.randrange(30)}", "title": f"task {i}", **at}
                memory.append(session, "task.created", {**payload, **({"status": status} if status else {})})
            elif roll < 0.55:
                command = f"pytest -k c{rng.randrange(6)}"
                memory.append(session, "command.completed", {"command": command, "exit_code": rng.choice((0, 1)), **at})
            elif roll < 0.75:
                predicate = rng.choice(["goal", "port", "objective", "owner"])
                memory.append(
                    session,
                    "fact.asserted",
                    {"subject": f"svc {rng.randrange(9)}", "predicate": predicate, "object": str(i), **at},
                )
            elif roll < 0.8:
                memory.append(
                    session, "memory.invalidated", {"entity_name": f"T-{rng.randrange(30)}", "entity_type": "task"}
                )
            else:
                memory.append(session, "decision.recorded", {"decision": f"d {i}", "topic": f"t {i}", **at})


def test_skipping_settled_versions_keeps_the_working_set(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        _seed(memory, sessions=6, events=40, seed=24)
        memory.project()
        catalog = memory.projector.catalog
        for scope in (None, {"s0"}, {"s1", "s4"}):
            assert build_working_set(catalog, scope) == _reference(catalog, scope)
        whole = build_working_set(catalog, None)
        assert whole.blockers and whole.tasks and whole.goals  # the seeded memory exercises the skipped kinds


def test_a_wide_scope_gives_the_same_working_set_and_stable_tier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole memory and a wide scope (per-session partials merged): same buckets, same order, ties included, and
    the same stable-fact tier as the per-session loop; a past moment keeps the per-session reads and still matches."""
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        _seed(memory, sessions=40, events=30, seed=7)
        memory.project()
        catalog = memory.projector.catalog
        wide = {f"s{n}" for n in range(0, 40, 2)} | {"no such session"}
        for scope in (None, {"s0"}, {"s1", "s4"}, wide):
            assert build_working_set(catalog, scope) == _reference(catalog, scope)
        with monkeypatch.context() as patch:  # every memo off: the per-session loop
            patch.setattr(session_memo, "_entries", lambda by_catalog, catalog: None)
            looped = {
                scope: stable_facts(catalog, None if scope is None else set(scope), None)
                for scope in (None, frozenset(wide))
            }
        for scope, expected in looped.items():
            assert stable_facts(catalog, None if scope is None else set(scope), None) == expected
        assert looped[None][0]  # the stable tier has facts to compare
        moment = "2026-01-01T00:06:00+00:00"
        assert build_working_set(catalog, None, moment) == _reference(catalog, None, moment)
        whole = build_working_set(catalog, None)
        assert whole.blockers and whole.tasks and whole.goals and whole.decisions


@pytest.mark.parametrize("prefix", [1, 3, 1000])
def test_the_walk_past_the_merged_prefix_of_work_heads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: int
) -> None:
    """The merge tree keeps only the first ``WORK_PREFIX`` work heads across sessions; a walk that goes past them
    continues in the full merge from the same position: with a prefix of 1 or 3 (the walk always goes past it) and
    of 1,000 (never cut) the whole memory's working set is the per-session loop's, before and after an append."""
    monkeypatch.setattr(working_set, "WORK_PREFIX", prefix)
    path = tmp_path / "loom"
    with MemoryFabric.from_path(path) as memory:
        _seed(memory, sessions=16, events=30, seed=5)
        memory.project()
        catalog = memory.projector.catalog
        assert build_working_set(catalog, None) == _reference(catalog, None)
        memory.append("s3", "task.created", {"task_id": "T-new", "title": "a new open task", "status": "open"})
        memory.project()
        assert build_working_set(catalog, None) == _reference(catalog, None)
        assert build_working_set(catalog, None).tasks[0].text.startswith("a new open task")
