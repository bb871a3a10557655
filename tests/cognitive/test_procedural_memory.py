"""Procedural memory on a real fabric: skills and procedure candidates classified (applicable, diagnostic,
excluded with reasons), checkout's skills / skill_analytics / procedural_memory blocks and Applicable Skills lines,
plan_from_procedures, and an accepted procedure becoming a skill *proposal* (never an applied skill)."""

from __future__ import annotations

import pytest

from zaxy_agents.errors import ConflictError, NotFoundError
from zaxy_agents.fabric import MemoryFabric

S = "dev"
GOAL = "fix a failing python test"


def _memory(memory: MemoryFabric) -> dict:
    run = memory.append(S, "command.completed", {"command": "pytest -x", "exit_code": 0})
    steps = ["Reproduce the failing python test", "Fix the code", "Run pytest"]
    memory.record_skill(
        S, "proposed", "test-first", summary="Fix a failing python test", procedure=steps, citations=[run.citation]
    )
    memory.record_skill(S, "validated", "test-first", reason="worked")
    for score in (0.9, 0.8):
        memory.record_skill(S, "outcome_recorded", "test-first", success_score=score, task="python test fix")
    memory.record_skill(
        S, "proposed", "print-debug", summary="Fix a failing python test by printing", procedure=["print"]
    )
    memory.record_skill(
        S,
        "proposed",
        "bisect",
        summary="python test failing: bisect",
        procedure=["git bisect"],
        citations=[run.citation],
    )
    for score in (0.9, 0.9):
        memory.record_skill(S, "outcome_recorded", "bisect", success_score=score)
    memory.record_skill(
        S, "proposed", "retry", summary="retry the failing python test", procedure=["rerun"], citations=[run.citation]
    )
    memory.record_skill(S, "validated", "retry", reason="ok")
    memory.record_skill(
        S, "contradicted", "retry", contradiction_reason="flaky tests hide bugs", citations=[run.citation]
    )
    memory.record_skill(
        S, "proposed", "slow", summary="fix failing python test slowly", procedure=["a"], citations=[run.citation]
    )
    memory.record_skill(S, "validated", "slow", reason="ok")
    memory.record_skill(S, "revised", "slow", version="2", procedure=["b"], reason="faster")
    for score in (0.1, 0.2):
        memory.record_skill(S, "outcome_recorded", "slow", success_score=score)
    accepted = memory.consolidation_candidate(
        S, candidate_type="procedure", title="Fix a failing python test: pytest, edit, pytest",
        summary="pytest, edit, pytest", source_events=[run.citation], confidence=0.7,
    )  # fmt: skip
    memory.consolidation_review(S, accepted["candidate_id"], decision="accepted", rationale="our routine")
    pending = memory.consolidation_candidate(
        S, candidate_type="procedure", title="Fix a failing python test by deleting it",
        summary="rm test", source_events=[run.citation], confidence=0.3,
    )  # fmt: skip
    return {"accepted": accepted["candidate_id"], "pending": pending["candidate_id"]}


def test_checkout_blocks_and_plan(memory: MemoryFabric) -> None:
    ids = _memory(memory)
    packet = memory.checkout("how do I fix a failing python test?", session=S)
    diagnostics = packet.diagnostics.model_dump()
    skills = diagnostics["skills"]
    assert [item["skill_id"] for item in skills["items"]] == ["test-first", "slow"]
    assert skills["items"][0]["procedure"][0] == "Reproduce the failing python test" and skills["items"][0]["citation"]
    lines = [line for line in packet.prompt.splitlines() if "Applicable Skills: test-first v1 [validated" in line]
    assert lines and "1. Reproduce the failing python test 2. Fix the code 3. Run pytest" in lines[0]
    analytics = diagnostics["skill_analytics"]
    assert [c["skill_id"] for c in analytics["promotion_candidates"]] == ["bisect"]
    assert [(c["skill_id"], c["back_to"]) for c in analytics["rollback_candidates"]] == [("slow", "1")]
    assert analytics["contradiction_count"] == 1 and analytics["scores"]["test-first"] == 0.85
    procedural = diagnostics["procedural_memory"]
    reasons = {
        row["id"]: (klass, row["reason"])
        for klass in ("applicable", "diagnostic", "excluded")
        for row in procedural[klass]
    }
    assert reasons["print-debug"] == ("excluded", "uncited: no evidence citations")
    assert reasons["retry"] == ("excluded", "contradicted")
    assert reasons["bisect"][0] == "diagnostic" and reasons[ids["pending"]][0] == "diagnostic"
    assert reasons[ids["accepted"]] == ("applicable", "accepted in review and cited")
    plan = memory.plan_from_procedures(S, GOAL)
    assert plan["plan"]["id"] == "test-first" and [s["index"] for s in plan["plan"]["steps"]] == [1, 2, 3]
    assert all(step["citation"] == plan["plan"]["citation"] for step in plan["plan"]["steps"])
    assert {item.get("skill_id") for item in plan["excluded"]} >= {"print-debug", "retry"}
    assert [p["candidate_id"] for p in plan["skill_proposals"]] == [ids["accepted"]]
    assert plan["authority_status"] == "non_authoritative"
    assert memory.plan_from_procedures(S, "bake bread")["plan"] is None


def test_an_accepted_procedure_becomes_a_skill_proposal(memory: MemoryFabric) -> None:
    ids = _memory(memory)
    with pytest.raises(ConflictError) as pending:
        memory.skill_from_procedure(S, ids["pending"])
    assert pending.value.field == "candidate_id"
    proposed = memory.skill_from_procedure(S, ids["accepted"])
    assert proposed["status"] == "proposed" and proposed["procedure"] == ["pytest, edit, pytest"]
    event = memory.log.resolve(proposed["citation"])
    assert event.type == "skill.proposed" and len(event.payload["citations"]) == 2  # the candidate and its trace
    plan = memory.plan_from_procedures(S, GOAL)
    assert plan["skill_proposals"] == []
    diagnostic = {item.get("skill_id") for item in plan["diagnostic"]}
    assert proposed["skill_id"] in diagnostic  # a proposal, not an applicable skill
    with pytest.raises(ConflictError):
        memory.skill_from_procedure(S, ids["accepted"])
    with pytest.raises(NotFoundError):
        memory.skill_from_procedure(S, "cand_" + "0" * 24)
