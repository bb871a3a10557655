"""The internal lanes can fail: breaking a guardrail drops a metric below 1.0 and the command exits 1."""

from __future__ import annotations

import pytest
import typer

from tests.test_docs_benchmarks import documented_checks, run_counts
from zaxy_agents.checkout import facts
from zaxy_agents.cli import lane_commands
from zaxy_agents.evaluation.causal_lane import run_causal_lane
from zaxy_agents.evaluation.consolidation_lane import run_consolidation_lane
from zaxy_agents.eventloom.evidence import EvidenceCheck
from zaxy_agents.fabric.synthesis_ops import SynthesisService
from zaxy_agents.skillmemory import memory as skill_memory
from zaxy_agents.synthesis.artifact import read_bundle


def test_causal_lane_catches_trusting_unresolvable_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(EvidenceCheck, "__call__", lambda self, session, seq, digest: True)
    report = run_causal_lane()
    assert not report["passed"]
    assert report["metrics"]["stale_distractor_rejection"] < 1.0
    assert any("moon phase" in failure["check"] for failure in report["failures"])


def test_consolidation_lane_catches_an_open_review_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(facts, "admissible", lambda catalog, version, as_of=None: True)
    report = run_consolidation_lane()
    assert not report["passed"] and report["metrics"]["authority_boundary"] < 1.0
    assert any("forged" in failure["check"] for failure in report["failures"])


def test_a_failing_lane_exits_one(capsys: pytest.CaptureFixture[str]) -> None:
    failing = {
        "lane": "causal",
        "internal": True,
        "metrics": {"predecessor_hit": 0.5},
        "checks": {"predecessor_hit": {"passed": 1, "total": 2}},
        "failures": [{"metric": "predecessor_hit", "check": "x -> y found"}],
        "passed": False,
        "took_s": 0.1,
    }
    with pytest.raises(typer.Exit) as info:
        lane_commands.run_lane(lambda: failing, json_output=False)
    assert info.value.exit_code == 1
    out = capsys.readouterr().out
    assert "predecessor_hit" in out and "x -> y found" in out and "below 1.0" in out


def test_synthesis_lane_passes_and_catches_unchecked_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    from zaxy_agents.evaluation.synthesis_lane import run_synthesis_lane

    passing = run_synthesis_lane()
    assert passing["passed"] and run_counts(passing) == documented_checks("synthesis")  # docs/benchmarks.md
    # break the guardrail: record a checkout's bundle without re-reading the events its rows cite
    monkeypatch.setattr(
        SynthesisService, "_checked_bundle", lambda self, checkout, session: (read_bundle(checkout), "syn-trip")
    )
    report = run_synthesis_lane()
    assert not report["passed"] and report["metrics"]["citation_integrity"] < 1.0


def test_skills_lane_passes_and_catches_a_contradicted_skill_served(monkeypatch: pytest.MonkeyPatch) -> None:
    from zaxy_agents.evaluation.skills_lane import run_skills_lane

    passing = run_skills_lane()
    assert passing["passed"] and run_counts(passing) == documented_checks("skills")  # docs/benchmarks.md
    classify = skill_memory._classify_skill

    def contradicted_still_applicable(procedure, closed, log):  # the guardrail broken
        classify(procedure, closed, log)
        if procedure.status == "contradicted":
            procedure.klass, procedure.reason = "applicable", "contradicted but served"

    monkeypatch.setattr(skill_memory, "_classify_skill", contradicted_still_applicable)
    report = run_skills_lane()
    assert not report["passed"] and report["metrics"]["excluded_never_served"] < 1.0
