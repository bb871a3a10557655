"""The working set and the stable / reviewed tiers are kept per entity type and per scope: a commit that only adds
versions of other types (an agent's ``turn`` versions, every turn) or only changes sessions outside the scope leaves
them as they were, read from memory; every write of a type they read, an erasure and another process's commit still
make them read again. Checked against reference copies of the per-session loops on a seeded multi-session memory,
with the catalog's reads counted."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from zaxy_agents.beliefs import context as beliefs_context
from zaxy_agents.checkout import facts, working_set
from zaxy_agents.checkout.facts import REVIEWED_TYPES, STABLE_TYPES
from zaxy_agents.checkout.working_set import build_working_set
from zaxy_agents.consolidation import status as consolidation_status
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.metacognition import context as metacognition_context
from zaxy_agents.projection import session_memo
from zaxy_agents.reasoning import context as reasoning_context
from zaxy_agents.skillmemory import memory as skill_memory

from .test_whole_memory_memo import _dump, _reference_ranked, _seed_cognition
from .test_working_set_settled import _reference, _seed

SCOPE = {"s1", "s2"}
READS = ("recent_heads_many", "recent_versions_many", "read_versions", "first_recent_keys_many", "current_ranks")


@contextmanager
def _counting(catalog: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The catalog reads the blocks make meanwhile and the working set's merged walks (a memoised block's
    refill)."""
    calls: list[str] = []
    with monkeypatch.context() as patch:
        for name in READS:
            method = getattr(catalog, name)
            patch.setattr(catalog, name, lambda *a, _m=method, _n=name, **k: calls.append(_n) or _m(*a, **k))
        walk = working_set._walk  # the merged walk of tasks and commands (its versions are kept apart)
        patch.setattr(working_set, "_walk", lambda *a, **k: calls.append("_walk") or walk(*a, **k))
        yield calls


def _blocks(catalog: Any, whole: bool = True) -> list[Any]:
    return [
        build_working_set(catalog, set(SCOPE)),
        facts.ranked(catalog, set(SCOPE), None, STABLE_TYPES),
        facts.ranked(catalog, set(SCOPE), None, tuple(sorted(REVIEWED_TYPES))),
        *([build_working_set(catalog, None)] if whole else []),
    ]


def _references(catalog: Any) -> list[Any]:
    return [
        _reference(catalog, set(SCOPE)),
        _reference_ranked(catalog, set(SCOPE), None, STABLE_TYPES),
        _reference_ranked(catalog, set(SCOPE), None, tuple(sorted(REVIEWED_TYPES))),
        _reference(catalog, None),
    ]


@pytest.fixture
def seeded(tmp_path: Path) -> Path:
    path = tmp_path / "loom"
    with MemoryFabric.from_path(path) as memory:
        _seed(memory, sessions=4, events=30, seed=5)
        memory.project()
    return path


def test_turns_and_writes_outside_the_scope_leave_the_blocks_in_memory(
    seeded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryFabric.from_path(seeded) as memory:
        memory.project()
        catalog = memory.projector.catalog
        assert _blocks(catalog) == _references(catalog)  # filled
        for session in ("s1", "s3"):  # an agent's turn in a scoped session; another session's turn
            memory.append(session, "transcript.turn", {"role": "user", "text": "which task is blocked?"})
            memory.project()
            with _counting(catalog, monkeypatch) as calls:
                assert _blocks(catalog) == _references(catalog)
            assert calls == []
        memory.append("s3", "task.created", {"task_id": "T-out", "title": "outside the scope", "status": "blocked"})
        memory.project()
        with _counting(catalog, monkeypatch) as calls:
            scoped = _blocks(catalog, whole=False)
        assert calls == []  # the scoped blocks are kept; the whole memory's working set is read again
        assert scoped == _references(catalog)[:3]
        assert "outside the scope" in str(build_working_set(catalog, None))


@pytest.mark.parametrize("writer", ["new task", "task completed", "task invalidated", "decision", "goal"])
def test_every_write_of_a_type_the_blocks_read_refreshes_them(
    seeded: Path, monkeypatch: pytest.MonkeyPatch, writer: str
) -> None:
    with MemoryFabric.from_path(seeded) as memory:
        memory.project()
        catalog = memory.projector.catalog
        before = _blocks(catalog)
        task = next(item for item in before[0].tasks + before[0].blockers)
        tasks = [v for s in sorted(SCOPE) for v in catalog.recent_versions(s, "task", 60, None)]
        version = next(v for v in tasks if v.citation == task.citation)
        name = version.name
        writes = {
            "new task": ("s2", "task.created", {"task_id": "T-new", "title": "brand new", "status": "blocked"}),
            "task completed": (version.session, "task.completed", {"task_id": name, "title": "done now"}),
            "task invalidated": (version.session, "memory.invalidated", {"entity_name": name, "entity_type": "task"}),
            "decision": ("s1", "decision.recorded", {"decision": "adopt wal mode", "topic": "storage"}),
            "goal": ("s2", "fact.asserted", {"subject": "project", "predicate": "goal", "object": "ship v2"}),
        }
        session, event_type, payload = writes[writer]
        memory.append(session, event_type, payload)
        memory.project()
        with _counting(catalog, monkeypatch) as calls:
            after = _blocks(catalog)
        assert after == _references(catalog)
        assert after != before  # the write changed what the blocks hold, and they were read again
        assert calls


def test_an_erasure_another_process_commit_and_a_rebuild_refresh_the_blocks(
    seeded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryFabric.from_path(seeded) as memory:
        memory.project()
        catalog = memory.projector.catalog
        decision = memory.append("s1", "decision.recorded", {"decision": "adopt wal mode", "topic": "storage"})
        memory.project()
        assert decision.citation in str(_blocks(catalog))
        memory.erase_events("s1", [decision.seq])
        after_erasure = _blocks(catalog)
        assert after_erasure == _references(catalog)
        assert decision.citation not in str(after_erasure)

        with MemoryFabric.from_path(seeded) as other:  # another store on the same folder writes and projects
            foreign = other.append("s2", "task.created", {"task_id": "T-far", "title": "foreign", "status": "blocked"})
            other.project()
        memory.project()
        after_foreign = _blocks(catalog)
        assert after_foreign == _references(catalog)
        assert foreign.citation in str(after_foreign)

        memory.reproject(digest=False)  # every derived row rebuilt from the log
        catalog = memory.projector.catalog
        assert _blocks(catalog) == _references(catalog) == after_foreign


def test_scoped_packets_match_unmemoised_after_each_cognitive_write_and_turns_recompute_nothing(
    seeded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The extension blocks (metacognition, reasoning and belief counts, skills, consolidation candidates) keep
    their shares per entity type too: after an agent's turn none is read again, after a write of a type one of
    them reads the packet is the one every memo switched off gives."""
    question = "which database engine do we use and what region hosts the replica"
    options: dict[str, Any] = {"session": "s1", "scope": sorted(SCOPE), "max_tokens": 4000}

    def checkout(memory: MemoryFabric) -> dict[str, Any]:
        memoised = _dump(memory.checkout(question, **options))
        with monkeypatch.context() as patch:
            patch.setattr(session_memo, "_entries", lambda by_catalog, catalog: None)
            assert memoised == _dump(memory.checkout(question, **options))
        return memoised

    refills = [
        (metacognition_context, "open_state"),
        (reasoning_context, "_read_counts"),
        (beliefs_context, "_read_counts"),
        (skill_memory, "_read_index"),
        (consolidation_status, "_closed_in"),
    ]
    with MemoryFabric.from_path(seeded) as memory:
        cited = _seed_cognition(memory)
        first = checkout(memory)
        memory.append("s1", "transcript.turn", {"role": "user", "text": question})
        memory.project()
        calls: list[str] = []
        with monkeypatch.context() as patch:
            for module, name in refills:
                function = getattr(module, name)
                patch.setattr(module, name, lambda *a, _f=function, _n=name, **k: calls.append(_n) or _f(*a, **k))
            memory.checkout(question, **options)
        assert calls == []
        memory.record_known_unknown("s2", question="which region hosts replica 9", reason="?", source_events=[cited])
        assert checkout(memory)["diagnostics"]["metacognition"]["known_unknown_count"] == (
            first["diagnostics"]["metacognition"]["known_unknown_count"] + 1
        )
        memory.request_reverification("s1", "fact:db engine", reason="stale", source_events=[cited])
        memory.propose_belief_update("s2", claim="engine is mysql", rationale="s3", confidence=0.4, citations=[cited])
        observed = memory.observe_primitive("s1", "memory_known_unknowns", {}, result={"known_unknowns": [cited]})
        assert observed is not None
        memory.record_skill(
            "s2", "proposed", "database engine replica", name="database engine replica",
            summary="which database engine and region host the replica", procedure=["check the database engine"],
        )  # fmt: skip
        memory.record_skill("s2", "validated", "database engine replica", citations=[cited])
        source = memory.append("s1", "decision.recorded", {"decision": "replica in eu-west", "topic": "database"})
        candidate = memory.consolidation_candidate(
            "s1", candidate_type="claim", title="replica region", summary="the replica is in eu-west",
            source_events=[source.citation], confidence=0.7,
        )  # fmt: skip
        last = checkout(memory)
        for block in ("metacognition", "belief_update_proposals", "reasoning_primitives", "skills"):
            assert last["diagnostics"][block] != first["diagnostics"][block], block
        assert last["diagnostics"]["consolidation_candidates"]["candidate_count"] == 1
        # accepted: reviewed memory in the packet; the acceptance revoked: it leaves, and its closed window counts
        memory.consolidation_review("s1", candidate["candidate_id"], decision="accepted", rationale="checked")
        accepted = checkout(memory)
        assert "the replica is in eu-west" in str(accepted["reviewed_memory"])
        memory.consolidation_review("s1", candidate["candidate_id"], decision="rejected", rationale="moved")
        revoked = checkout(memory)
        assert "the replica is in eu-west" not in str(revoked["reviewed_memory"])
        assert revoked["diagnostics"]["consolidation_candidates"]["valid_to_count"] == 1


def test_a_write_reads_again_only_the_working_set_parts_of_its_types(
    seeded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session's share of the working set has five parts, each read from its own types (decisions; files; goals
    from sessions and facts; source anchors from documents; tasks and commands): after a write only the parts of
    the written type are read again, for the written session only, and the result equals the loop's after each
    write of a sequence that changes every part in turn."""
    writes = [
        ("decision.recorded", {"decision": "adopt wal mode", "topic": "storage"}, {"decision"}),
        ("fact.asserted", {"subject": "project", "predicate": "goal", "object": "ship v3"}, {"session", "fact"}),
        ("task.created", {"task_id": "T-9", "title": "fresh", "status": "blocked"}, {"task", "command_run"}),
        ("command.completed", {"command": "pytest -k c1", "exit_code": 1}, {"task", "command_run"}),
        ("decision.recorded", {"decision": "drop the cache", "topic": "perf"}, {"decision"}),
    ]
    with MemoryFabric.from_path(seeded) as memory:
        memory.project()
        catalog = memory.projector.catalog
        assert _blocks(catalog) == _references(catalog)
        for event_type, payload, kinds in writes:
            memory.append("s1", event_type, payload)
            memory.project()
            read: list[tuple[tuple[str, ...], str]] = []
            with monkeypatch.context() as patch:
                for name in ("recent_heads_many", "recent_versions_many"):
                    method = getattr(catalog, name)

                    def counted(sessions: Any, kind: str, *rest: Any, _m: Any = method, _read: list[Any] = read) -> Any:
                        _read.append((tuple(sessions), kind))
                        return _m(sessions, kind, *rest)

                    patch.setattr(catalog, name, counted)
                working = build_working_set(catalog, None)
            assert working == _reference(catalog, None)
            assert read and {sessions for sessions, _ in read} == {("s1",)}
            assert {kind for _, kind in read} == kinds, event_type
