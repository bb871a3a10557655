"""`zaxy benchmark coordinate`: 1.0 on the real engine, and below 1.0 when a guardrail is removed."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_zaxy
from tests.test_docs_benchmarks import documented_checks, run_counts
from zaxy_agents.coordinate import mission as mission_module
from zaxy_agents.coordinate import service
from zaxy_agents.coordinate.mission import Mission
from zaxy_agents.evaluation.coordinate_lane import run_coordinate_lane


def test_the_lane_passes_through_the_cli() -> None:
    result = run_zaxy("benchmark", "coordinate", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["passed"] and set(report["metrics"]) == {"refused_writes", "forgery_ignored", "accepted_state"}
    assert all(value == 1.0 for value in report["metrics"].values())
    assert run_counts(report) == documented_checks("coordinate")  # the result column of docs/benchmarks.md


def test_the_lane_fails_when_anyone_may_do_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Mission, "may", lambda self, actor, permission: True)
    report = run_coordinate_lane()
    assert not report["passed"]
    assert report["metrics"]["refused_writes"] < 1.0 and report["metrics"]["forgery_ignored"] < 1.0
    assert any("review by a stranger" in failure["check"] for failure in report["failures"])


def test_the_lane_fails_when_promotions_need_no_accepting_review(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mission_module, "_promotion_problem", lambda mission, finding, event: None)
    report = run_coordinate_lane()
    assert not report["passed"] and report["metrics"]["forgery_ignored"] < 1.0


def test_the_lane_fails_when_stale_packets_are_applied(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service.views, "packet_id", lambda mission: "apr_" + "0" * 16)
    report = run_coordinate_lane()
    assert not report["passed"] and any("stale" in f["check"] for f in report["failures"])
