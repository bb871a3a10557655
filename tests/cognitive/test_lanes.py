"""The internal lanes can fail: breaking a guardrail drops a metric below 1.0 and the command exits 1."""

from __future__ import annotations

import pytest
import typer

from zaxy_agents.checkout import assemble
from zaxy_agents.cli import lane_commands
from zaxy_agents.evaluation.causal_lane import run_causal_lane
from zaxy_agents.evaluation.consolidation_lane import run_consolidation_lane
from zaxy_agents.eventloom.evidence import EvidenceCheck


def test_causal_lane_catches_trusting_unresolvable_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(EvidenceCheck, "__call__", lambda self, session, seq, digest: True)
    report = run_causal_lane()
    assert not report["passed"]
    assert report["metrics"]["stale_distractor_rejection"] < 1.0
    assert any("moon phase" in failure["check"] for failure in report["failures"])


def test_consolidation_lane_catches_an_open_review_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assemble, "admissible", lambda catalog, version, as_of=None: True)
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
        lane_commands._run(lambda: failing, json_output=False)
    assert info.value.exit_code == 1
    out = capsys.readouterr().out
    assert "predecessor_hit" in out and "x -> y found" in out and "below 1.0" in out
