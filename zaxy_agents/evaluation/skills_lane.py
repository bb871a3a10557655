"""Internal skills guardrail lane: only validated or accepted, cited procedures are served as instructions.

Deterministic fixtures (skills in every lifecycle state, procedure candidates in every review state) are written
through the real engine; checkouts and plans are taken through the fabric. Metrics (each the pass rate of its
checks; the lane passes at 1.0 on all):

- ``classification``: each fixture procedure is applicable, diagnostic or excluded as seed 002 beta.2 says, with
  the expected reason;
- ``excluded_never_served``: contradicted, deprecated, uncited, stale and pending procedures never appear in
  checkout's skills block, its Applicable Skills lines or a plan's steps;
- ``review_gate``: an accepted procedure becomes a skill *proposal* (diagnostic, not served) until validated; a
  pending one is refused with nothing written; validation makes it applicable;
- ``analytics``: outcome and contradiction counts, promotion and rollback candidates are the expected ones;
- ``citations``: every served skill and plan step cites an event that resolves.

This is an internal regression lane, not an external benchmark.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from zaxy_agents.errors import ZaxyError
from zaxy_agents.fabric import MemoryFabric

from .lane_scoring import LaneScore

S = "skills-dev"
GOAL = "fix a failing python test"
QUESTION = "How do I fix a failing python test?"
EXPECTED = {
    "test-first": ("applicable", "validated and cited"),
    "slow-fix": ("applicable", "revised and cited"),
    "bisect": ("diagnostic", "proposed: not validated yet"),
    "print-debug": ("excluded", "uncited: no evidence citations"),
    "retry-flaky": ("excluded", "contradicted"),
    "skip-test": ("excluded", "deprecated"),
}


def run_skills_lane(eventloom_path: str | Path | None = None) -> dict[str, Any]:
    """Build the fixtures in a fresh Eventloom and score every guardrail."""
    score = LaneScore("skills")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="zaxy-skills-lane-") as scratch:
        root = Path(eventloom_path) if eventloom_path else Path(scratch) / "loom"
        with MemoryFabric.from_path(root) as fabric:
            ids = _fixtures(fabric)
            _score_classification(fabric, score, ids)
            _score_served(fabric, score, ids)
            _score_review_gate(fabric, score, ids)
    return score.report(fixtures=len(EXPECTED) + 3, took_s=round(time.perf_counter() - started, 3))


def _skill(fabric: MemoryFabric, skill_id: str, summary: str, steps: list[str], cite: str | None, *then: Any) -> None:
    fabric.record_skill(S, "proposed", skill_id, summary=summary, procedure=steps, citations=[cite] if cite else None)
    for action, fields in then:
        fabric.record_skill(S, action, skill_id, **fields)


def _fixtures(fabric: MemoryFabric) -> dict[str, str]:
    run = fabric.append(S, "command.completed", {"command": "pytest -x tests/test_api.py", "exit_code": 0}).citation
    steps = ["Reproduce the failing python test", "Fix the code", "Run pytest"]
    _skill(fabric, "test-first", "fix a failing python test", steps, run, ("validated", {"reason": "worked"}))
    for value in (0.9, 0.8):
        fabric.record_skill(S, "outcome_recorded", "test-first", success_score=value)
    _skill(fabric, "slow-fix", "fix a failing python test slowly", ["a"], run, ("validated", {"reason": "ok"}))
    fabric.record_skill(S, "revised", "slow-fix", version="2", procedure=["b"], reason="faster")
    for value in (0.1, 0.2):
        fabric.record_skill(S, "outcome_recorded", "slow-fix", success_score=value)
    _skill(fabric, "bisect", "failing python test: bisect", ["git bisect"], run)
    for value in (0.9, 0.9):
        fabric.record_skill(S, "outcome_recorded", "bisect", success_score=value)
    _skill(fabric, "print-debug", "fix a failing python test by printing", ["print"], None)
    _skill(
        fabric,
        "retry-flaky",
        "rerun the failing python test",
        ["rerun"],
        run,
        ("validated", {"reason": "ok"}),
        ("contradicted", {"contradiction_reason": "reruns hide bugs", "citations": [run]}),
    )
    _skill(
        fabric,
        "skip-test",
        "skip the failing python test",
        ["pytest.skip"],
        run,
        ("validated", {"reason": "ok"}),
        ("deprecated", {"reason": "hides failures"}),
    )
    accepted = fabric.consolidation_candidate(
        S,
        candidate_type="procedure",
        title="Fix a failing python test: pytest, edit, pytest",
        summary="pytest, edit, pytest",
        source_events=[run],
        confidence=0.7,
    )["candidate_id"]
    fabric.consolidation_review(S, accepted, decision="accepted", rationale="our routine")
    pending = fabric.consolidation_candidate(
        S,
        candidate_type="procedure",
        title="Fix a failing python test by deleting it",
        summary="rm the test",
        source_events=[run],
        confidence=0.3,
    )["candidate_id"]
    rejected = fabric.consolidation_candidate(
        S,
        candidate_type="procedure",
        title="Fix a failing python test by commenting it out",
        summary="comment",
        source_events=[run],
        confidence=0.3,
    )["candidate_id"]
    fabric.consolidation_review(S, rejected, decision="rejected", rationale="no")
    return {"accepted": accepted, "pending": pending, "rejected": rejected}


def _classes(fabric: MemoryFabric) -> dict[str, tuple[str, str]]:
    block = fabric.checkout(QUESTION, session=S).diagnostics.model_dump()["procedural_memory"]
    return {
        row["id"]: (klass, row["reason"]) for klass in ("applicable", "diagnostic", "excluded") for row in block[klass]
    }


def _score_classification(fabric: MemoryFabric, score: LaneScore, ids: dict[str, str]) -> None:
    classes = _classes(fabric)
    for skill_id, expected in EXPECTED.items():
        score.check(
            "classification", classes.get(skill_id) == expected, f"{skill_id}: {expected} (got {classes.get(skill_id)})"
        )
    for name, klass in (("accepted", "applicable"), ("pending", "diagnostic"), ("rejected", "excluded")):
        got = classes.get(ids[name], ("?", ""))[0]
        score.check("classification", got == klass, f"the {name} procedure candidate is {klass} (got {got})")


def _score_served(fabric: MemoryFabric, score: LaneScore, ids: dict[str, str]) -> None:
    packet = fabric.checkout(QUESTION, session=S)
    diagnostics = packet.diagnostics.model_dump()
    served = {item["skill_id"] for item in diagnostics["skills"]["items"]}
    lines = [line for line in packet.prompt.splitlines() if "Applicable Skills:" in line]
    plan = fabric.plan_from_procedures(S, GOAL)
    never = [skill_id for skill_id, (klass, _) in EXPECTED.items() if klass != "applicable"]
    for skill_id in never:
        score.check("excluded_never_served", skill_id not in served, f"{skill_id} is not in the skills block")
        score.check(
            "excluded_never_served",
            not any(f" {skill_id} " in f" {line} " or f"{skill_id} v" in line for line in lines),
            f"{skill_id} has no Applicable Skills line",
        )
    plan_id = (plan["plan"] or {}).get("id")
    score.check("excluded_never_served", plan_id == "test-first", f"the plan follows test-first (got {plan_id})")
    score.check(
        "excluded_never_served",
        ids["pending"] not in {item.get("candidate_id") for item in plan["applicable"]},
        "a pending procedure is never applicable in a plan",
    )
    analytics = diagnostics["skill_analytics"]
    score.check(
        "analytics",
        [item["skill_id"] for item in analytics["promotion_candidates"]] == ["bisect"],
        "bisect (proposed, outcomes 0.9, 0.9) is the promotion candidate",
    )
    score.check(
        "analytics",
        [(item["skill_id"], item["back_to"]) for item in analytics["rollback_candidates"]] == [("slow-fix", "1")],
        "slow-fix v2 (outcomes 0.1, 0.2) is a rollback candidate back to v1",
    )
    score.check("analytics", analytics["contradiction_count"] == 1, "one contradiction among the matching skills")
    score.check("analytics", analytics["scores"].get("test-first") == 0.85, "test-first scores 0.85")
    cited = [item["citation"] for item in diagnostics["skills"]["items"]]
    cited += [step["citation"] for step in (plan["plan"] or {}).get("steps", [])]
    for citation in cited:
        try:
            fabric.log.resolve(citation)
            resolves = True
        except ZaxyError:
            resolves = False
        score.check("citations", resolves, f"{citation} resolves")


def _score_review_gate(fabric: MemoryFabric, score: LaneScore, ids: dict[str, str]) -> None:
    head = fabric.log.head(S)
    try:
        fabric.skill_from_procedure(S, ids["pending"])
        refused = False
    except ZaxyError as exc:
        refused = exc.field == "candidate_id" and fabric.log.head(S) == head
    score.check("review_gate", refused, "a pending procedure cannot become a skill, nothing written")
    proposal = fabric.skill_from_procedure(S, ids["accepted"], skill_id="pytest-edit-pytest")
    score.check("review_gate", proposal["status"] == "proposed", "an accepted procedure becomes a skill proposal")
    served = {
        item["skill_id"] for item in fabric.checkout(QUESTION, session=S).diagnostics.model_dump()["skills"]["items"]
    }
    score.check("review_gate", "pytest-edit-pytest" not in served, "the proposal is not served before validation")
    fabric.record_skill(S, "validated", "pytest-edit-pytest", reason="reviewed")
    served = {
        item["skill_id"] for item in fabric.checkout(QUESTION, session=S).diagnostics.model_dump()["skills"]["items"]
    }
    score.check("review_gate", "pytest-edit-pytest" in served, "once validated it is served")
