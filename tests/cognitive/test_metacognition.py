"""Metacognition in the engine: the guardrail lane through the real CLI (and that it fails when a guardrail
breaks), replayable projection, as_of reads, derived re-verification reasons."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.conftest import run_zaxy_json
from tests.test_docs_benchmarks import documented_checks, run_counts
from zaxy_agents.evaluation.metacognition_lane import run_metacognition_lane
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.metacognition import context
from zaxy_agents.metacognition.state import conflict_clusters, derived_needs
from zaxy_agents.retrieval import entity_index


def test_the_lane_scores_one_through_the_cli() -> None:
    code, body = run_zaxy_json("benchmark", "metacognition")
    assert code == 0, body["failures"]
    assert sum(run_counts(body).values()) == documented_checks("metacognition")  # as docs/benchmarks.md states
    assert body["internal"] is True and body["passed"] is True and set(body["metrics"].values()) == {1.0}
    assert set(body["metrics"]) == {
        "unknown_guardrail",
        "recall_boundary",
        "conflict_clusters",
        "trajectory",
        "reverification",
        "contract_gate",
        "belief_review_gate",
    }


def test_the_lane_catches_a_known_unknown_answered_from_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(context, "matches", lambda item, query_terms: False)
    report = run_metacognition_lane()
    assert not report["passed"] and report["metrics"]["unknown_guardrail"] < 1.0
    assert any("not answered from memory" in failure["check"] for failure in report["failures"])


def test_the_lane_catches_uncertainty_recalled_as_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entity_index, "UNREVIEWED", frozenset({"consolidation_candidate", "consolidation_review"}))
    report = run_metacognition_lane()
    assert not report["passed"] and report["metrics"]["recall_boundary"] < 1.0
    assert report["metrics"]["belief_review_gate"] < 1.0  # a belief proposal recalled as evidence


def test_records_replay_to_the_same_state_and_read_as_of(memory: MemoryFabric) -> None:
    note = memory.append("s", "note.recorded", {"text": "the vendor has not answered"})
    first = memory.record_known_unknown(
        "s", question="Which region hosts the backups?", reason="vendor silent", source_events=[note.citation]
    )
    memory.claim_confidence("s", "backup region", confidence=0.2, rationale="guess", source_events=[note.citation])
    memory.resolve_known_unknown("s", first["unknown_id"], resolution="dismissed", rationale="not needed")
    before = (memory.known_unknowns("s", status="all"), memory.confidence_trajectory("s", "backup region"))
    digest = memory.projection_digest()
    assert memory.reproject() == digest
    after = (memory.known_unknowns("s", status="all"), memory.confidence_trajectory("s", "backup region"))
    assert after == before
    then = memory.known_unknowns("s", as_of=first["known_unknown"]["recorded_at"])
    assert then["open_count"] == 1 and then["items"][0]["status"] == "open"
    reopened = memory.record_known_unknown(
        "s", question="Which region hosts the backups?", reason="asked again", source_events=[note.citation]
    )
    assert reopened["created"] and reopened["status"] == "open"


def test_derived_needs_name_their_reasons(memory: MemoryFabric) -> None:
    memory.append("a", "fact.asserted", {"key": "db", "fact": "db is postgres 14"})
    memory.append("b", "fact.asserted", {"key": "db", "fact": "db is postgres 16"})
    memory.project(["a", "b"])
    catalog = memory.projector.catalog
    clusters = conflict_clusters(catalog, ["a", "b"], None)
    assert [c["claim_key"] for c in clusters] == ["fact:db"]
    later = datetime.now(UTC) + timedelta(days=100)
    needs = derived_needs(
        catalog, ["a", "b"], None, memory.evidence_resolves, max_age_days=90, clusters=clusters, now=later
    )
    assert {n["session"]: n["reasons"] for n in needs} == {"a": ["contradicted", "old"], "b": ["contradicted", "old"]}
    broken = derived_needs(catalog, ["a"], None, lambda s, q, h: False, max_age_days=None, clusters=[])
    assert broken[0]["reasons"] == ["unresolvable"]
    assert memory.reverification_needs("a")["derived"] == []  # fresh, resolvable, uncontested
