"""A whole-memory checkout keeps each session's partial result of its per-session blocks (working set, stable and
reviewed tiers, metacognitive state, belief / reasoning counts, skills, consolidation candidates) until the
session's catalog epoch moves. Checked two ways on a seeded multi-session memory:

- each memoised block against a reference copy of the per-session loop it replaces (whole memory, scoped,
  ``as_of``), and conflict clusters read through the name lookup against the loop over every session;
- whole packets of one warm process against the same checkout with every memo switched off, after an append in
  one session, after an erasure through the real erase path (the erased event vanishes from every block), and
  after another process (another store on the same folder) projected a change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zaxy_agents.checkout import facts
from zaxy_agents.checkout.facts import REVIEWED_TYPES, STABLE_LIMIT, STABLE_TYPES
from zaxy_agents.checkout.working_set import build_working_set
from zaxy_agents.consolidation.acceptance import admissible
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.metacognition import state as metacognition_state
from zaxy_agents.metacognition.state import claim_versions, conflict_clusters
from zaxy_agents.projection import session_memo
from zaxy_agents.projection.catalog import SessionEpochs
from zaxy_agents.projection.model import entity_key

from .test_working_set_settled import _reference, _seed

SESSIONS = 12


def _reference_ranked(catalog, scope: set[str] | None, as_of: str | None, types: tuple[str, ...]) -> list[Any]:  # type: ignore[no-untyped-def]
    """The stable / reviewed tier as the per-session loop read it before the memo."""
    versions = []
    for session in sorted(scope if scope is not None else catalog.sessions):
        for entity_type in types:
            for key in catalog.recent_keys(session, entity_type, scan=200)[:STABLE_LIMIT]:
                version = catalog.version_at(key, as_of)
                if version is not None and (entity_type not in REVIEWED_TYPES or admissible(catalog, version, as_of)):
                    versions.append(version)
    ranked = sorted(versions, key=lambda v: (-v.importance, v.entity_type, v.name, v.id))[:STABLE_LIMIT]
    return sorted(ranked, key=lambda v: (v.entity_type, v.name, v.id))


def _reference_claim(catalog, sessions: list[str], entity_type: str, name: str, as_of: str | None) -> list[Any]:  # type: ignore[no-untyped-def]
    found = []
    for session in sorted(sessions):
        version = catalog.version_at(entity_key(session, entity_type, name), as_of)
        if version is not None and version.asserted and not version.invalidated:
            found.append(version)
    return found


def _seed_cognition(memory: MemoryFabric) -> str:
    """Conflicting claims across sessions, known unknowns, re-verification requests, belief proposals."""
    first = memory.append("s0", "fact.asserted", {"key": "db engine", "fact": "the database is postgres 15"})
    for number, engine in ((1, "postgres 16"), (3, "mysql 8"), (5, "postgres 15")):
        memory.append(f"s{number}", "fact.asserted", {"key": "db engine", "fact": f"the database is {engine}"})
    for number in (2, 7):
        memory.record_known_unknown(
            f"s{number}", question=f"which region hosts replica {number}", reason="?", source_events=[first.citation]
        )
    memory.request_reverification("s4", "fact:db engine", reason="versions differ", source_events=[first.citation])
    memory.propose_belief_update(
        "s6", claim="the database is postgres 16", rationale="s1 says so", confidence=0.6, citations=[first.citation]
    )
    return first.citation


def _dump(packet: Any) -> dict[str, Any]:
    data = packet.model_dump()
    data["diagnostics"].pop("took_ms", None)
    return data


@pytest.fixture
def seeded(tmp_path: Path) -> Path:
    path = tmp_path / "loom"
    with MemoryFabric.from_path(path) as memory:
        _seed(memory, sessions=SESSIONS, events=30, seed=11)
        _seed_cognition(memory)
        memory.project()
    return path


def test_memoised_blocks_match_the_per_session_loops(seeded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with MemoryFabric.from_path(seeded) as memory:
        memory.project()
        catalog = memory.projector.catalog
        assert isinstance(catalog, SessionEpochs)
        wide = {f"s{n}" for n in range(0, SESSIONS, 2)} | {"no such session"}
        moment = "2026-01-01T00:06:00+00:00"
        for _ in range(2):  # computed, then served from the memo
            for scope in (None, {"s0"}, {"s1", "s4"}, wide):
                assert build_working_set(catalog, scope) == _reference(catalog, scope)
                for types in (STABLE_TYPES, tuple(sorted(REVIEWED_TYPES))):
                    assert facts.ranked(catalog, scope, None, types) == _reference_ranked(catalog, scope, None, types)
                    assert facts.ranked(catalog, scope, moment, types) == _reference_ranked(
                        catalog, scope, moment, types
                    )
            assert build_working_set(catalog, None, moment) == _reference(catalog, None, moment)
        sessions = catalog.sessions
        for batched in (1, 4, 10**9):  # every claim's current versions in one read, from 4 holders, never
            monkeypatch.setattr(metacognition_state, "BATCHED_CURRENTS", batched)
            for as_of in (None, moment):
                for name in ("db engine", "DB  Engine", "no such claim"):
                    expected = _reference_claim(catalog, sessions, "fact", name, as_of)
                    assert claim_versions(catalog, sessions, f"fact:{name}", as_of) == expected
        clusters = conflict_clusters(catalog, sessions, None, names=[("fact", "db engine")])
        assert [m["session"] for m in clusters[0]["members"]] == ["s0", "s1", "s3", "s5"]
        whole = build_working_set(catalog, None)
        assert whole.blockers and whole.tasks and whole.goals and whole.decisions
        assert facts.ranked(catalog, None, None, STABLE_TYPES)  # the stable tier has facts to compare


def test_whole_memory_packets_match_unmemoised_after_append_erasure_and_another_writer(
    seeded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unmemoised(memory: MemoryFabric, question: str, **options: Any) -> dict[str, Any]:
        with monkeypatch.context() as patch:
            patch.setattr(session_memo, "_entries", lambda by_catalog, catalog: None)
            return _dump(memory.checkout(question, max_tokens=4000, **options))

    def both(memory: MemoryFabric, question: str, **options: Any) -> dict[str, Any]:
        memoised = _dump(memory.checkout(question, max_tokens=4000, **options))
        assert memoised == unmemoised(memory, question, **options)
        return memoised

    question = "which database engine do we use and what region hosts the replica"
    with MemoryFabric.from_path(seeded) as memory:
        first = both(memory, question)
        clusters = first["diagnostics"]["metacognition"]["conflict_clusters"]
        assert "fact:db engine" in {cluster["claim_key"] for cluster in clusters}
        assert first["diagnostics"]["metacognition"]["known_unknown_count"] == 2
        assert first["diagnostics"]["belief_update_proposals"]["proposal_count"] == 1
        assert both(memory, question) == first  # served from the memo

        decision = memory.append("s3", "decision.recorded", {"decision": "adopt sqlite wal", "topic": "storage"})
        after_append = both(memory, question)
        assert decision.citation in after_append["prompt"]
        assert after_append["working_set"]["decisions"][0]["citation"] == decision.citation
        memory.record_known_unknown(
            "s9", question="who owns billing", reason="never said", source_events=[decision.citation]
        )
        assert both(memory, question)["diagnostics"]["metacognition"]["known_unknown_count"] == 3
        both(memory, question, scope=["s3", "s9"])
        both(memory, question, as_of="2026-01-01T00:08:00+00:00")

        memory.erase_events("s3", [decision.seq])
        after_erasure = both(memory, question)
        assert decision.citation not in after_erasure["prompt"]
        assert "adopt sqlite wal" not in str(after_erasure)

        with MemoryFabric.from_path(seeded) as other:  # another store on the same folder writes and projects
            foreign = other.append("s8", "decision.recorded", {"decision": "move to kafka", "topic": "queues"})
            other.project()
        after_foreign = both(memory, question)
        assert foreign.citation in after_foreign["prompt"]
