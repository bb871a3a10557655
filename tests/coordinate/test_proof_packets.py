"""coordination_record_synthesis_artifact on a real fabric: a synthesis answer (a checkout's answer candidate) bound
to a mission decision by a proof packet, the trace by artifact_id, worker-local rows kept non-authoritative, refused
calls that write nothing, and a hand-written proof packet that the replay ignores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zaxy_agents.errors import ConflictError, InvalidRequestError, NotFoundError, UnauthorizedError, ZaxyError
from zaxy_agents.fabric import MemoryFabric

MISSION = "outage"
QUESTION = "How much did the outage cost in refunds in total?"


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemoryFabric]:
    with MemoryFabric.from_path(tmp_path / ".eventloom") as fabric:
        yield fabric


def _mission(memory: MemoryFabric) -> dict[str, Any]:
    """Two refund turns; worker ``fin`` reports their total (accepted and promoted by ``sre``), worker ``ops``
    reports a wrong one that stays pending; ``sre`` hands off."""
    monday = memory.append("ops", "transcript.turn", {"role": "user", "text": "The outage cost $1,200 in refunds."})
    tuesday = memory.append("ops", "transcript.turn", {"role": "user", "text": "Outage refunds were $800 on Tuesday."})
    c = memory.coordination
    c.start("Outage", "What did the outage cost?", mission_id=MISSION, coordinator="lead", reviewers=["sre"])
    c.worker_create(MISSION, "fin", actor="lead")
    c.worker_create(MISSION, "ops", actor="lead")
    right = c.report_finding(
        MISSION, "fin", "refunds", "Refunds total $2,000", evidence=[monday.citation, tuesday.citation]
    )
    wrong = c.report_finding(MISSION, "ops", "refunds", "Refunds were $500 in total")
    c.review_finding(MISSION, right["finding_id"], "accepted", "both days are cited", reviewer="sre")
    promotion = c.promote(MISSION, right["finding_id"], promoted_by="sre")
    handoff = c.handoff(MISSION, "Refund cost is known", actor="sre")
    return {"right": right, "wrong": wrong, "promotion": promotion, "handoff": handoff}


def _heads(memory: MemoryFabric) -> tuple[Any, ...]:
    return tuple(getattr(memory.head(session), "seq", None) for session in ("ops", f"coordinate.{MISSION}"))


def test_a_handoff_proof_packet_binds_the_answer_and_traces_verified(memory: MemoryFabric) -> None:
    state = _mission(memory)
    checkout = memory.checkout(QUESTION, session="ops").model_dump(mode="json")
    top = checkout["diagnostics"]["synthesis"]["answer_candidates"][0]
    assert top["answer_text"] == "$2,000"

    bound = memory.coordination.record_synthesis_artifact(
        MISSION,
        checkout,
        decision_scope="handoff",
        handoff_id=state["handoff"]["handoff_id"],
        candidate=top["candidate_id"],
        outcome="used",
        actor="sre",
    )
    assert bound["event_type"] == "coordination.proof_packet.created"
    assert bound["accepted_finding_ids"] == [state["right"]["finding_id"]]
    assert bound["handoff_event_ref"] == state["handoff"]["handoff_event_ref"]
    assert bound["outcome"]["event_type"] == "memory.synthesis.used"
    assert bound["artifact_citation"].startswith("eventloom://ops/")  # the checkout's session owns the artifact

    trace = memory.coordination.proof_trace(MISSION, artifact_id=bound["artifact_id"])
    assert trace["verified"]
    steps = [step["step"] for step in trace["steps"]]
    assert steps[-2:] == ["synthesis_artifact", "proof_packet"] and "promoted" in steps and "handed_off" in steps
    assert [claim["claim"] for claim in trace["claims"]] == ["Refunds total $2,000"]
    assert trace["artifact"]["answer_candidates"][0]["answer_text"] == "$2,000"
    assert [o["event_type"] for o in trace["artifact"]["outcomes"]] == ["memory.synthesis.used"]
    (packet,) = trace["proof_packets"]
    assert packet["proof_id"] == bound["proof_id"] and packet["diagnostic_pending_ids"] == [
        state["wrong"]["finding_id"]
    ]
    assert packet["conflict_ids"] == sorted([state["right"]["finding_id"], state["wrong"]["finding_id"]])
    # the handoff's own trace links back the proof packet bound to it later
    by_handoff = memory.coordination.proof_trace(MISSION, handoff_id=state["handoff"]["handoff_id"])
    assert [p["proof_id"] for p in by_handoff["proof_packets"]] == [bound["proof_id"]]
    by_seq = memory.coordination.proof_trace(MISSION, proof_seq=bound["seq"])
    assert by_seq["verified"] and by_seq["proof_packets"][0]["artifact_id"] == bound["artifact_id"]


def test_rows_that_rest_on_worker_local_state_stay_non_authoritative(memory: MemoryFabric) -> None:
    _mission(memory)
    local = memory.append(
        f"coordinate.{MISSION}.ops", "transcript.turn", {"role": "assistant", "text": "Outage refunds: $500 more."}
    )
    checkout = memory.checkout(QUESTION).model_dump(mode="json")  # whole memory: the worker's turn is a row too
    cited = {row["citation"] for row in checkout["diagnostics"]["synthesis"]["ledger_rows"]}
    assert local.citation in cited

    bound = memory.coordination.record_synthesis_artifact(MISSION, checkout, decision_scope="accepted_checkout")
    (row,) = bound["non_authoritative_rows"]
    assert row["citation"] == local.citation and row["authority_status"] == "non_authoritative"
    assert row["reason"] == "worker-local event outside any reported finding"
    assert bound["artifact_citation"].startswith(f"eventloom://coordinate.{MISSION}/")  # no session: the mission's


def test_refused_calls_write_nothing(memory: MemoryFabric) -> None:
    state = _mission(memory)
    checkout = memory.checkout(QUESTION, session="ops").model_dump(mode="json")
    before = _heads(memory)
    c = memory.coordination
    refusals: list[tuple[type[ZaxyError], str, dict[str, Any]]] = [
        (UnauthorizedError, "actor", {"decision_scope": "merge_brief", "actor": "fin"}),  # a worker binds nothing
        (UnauthorizedError, "actor", {"decision_scope": "approval_packet", "actor": "outsider"}),
        (InvalidRequestError, "handoff_id", {"decision_scope": "handoff"}),
        (InvalidRequestError, "handoff_id", {"decision_scope": "merge_brief", "handoff_id": "hnd_" + "0" * 16}),
        (NotFoundError, "handoff_id", {"decision_scope": "handoff", "handoff_id": "hnd_" + "0" * 16}),
        (InvalidRequestError, "decision_scope", {"decision_scope": "everything"}),
        (
            InvalidRequestError,
            "candidate",
            {"decision_scope": "merge_brief", "candidate": "ans_" + "0" * 16, "outcome": "used"},
        ),
    ]
    for error, field, arguments in refusals:
        with pytest.raises(error) as raised:
            c.record_synthesis_artifact(MISSION, checkout, **arguments)
        assert raised.value.field == field, (arguments, raised.value)
    tampered = {**checkout, "diagnostics": {**checkout["diagnostics"]}}
    synthesis = dict(checkout["diagnostics"]["synthesis"])
    synthesis["answer_candidates"] = [{**synthesis["answer_candidates"][0], "answer_value": 9999}]
    tampered["diagnostics"]["synthesis"] = synthesis
    with pytest.raises(ConflictError):
        c.record_synthesis_artifact(MISSION, tampered, decision_scope="merge_brief")
    assert _heads(memory) == before
    assert c.merge_brief(MISSION)["ignored_events"] == []
    assert state["handoff"]["handoff_id"] in {h["handoff_id"] for h in [c.checkout(MISSION)["latest_handoff"]]}


def test_a_hand_written_proof_packet_is_ignored_on_replay(memory: MemoryFabric) -> None:
    state = _mission(memory)
    checkout = memory.checkout(QUESTION, session="ops").model_dump(mode="json")
    genuine = memory.coordination.record_synthesis_artifact(MISSION, checkout, decision_scope="merge_brief")
    packet = list(memory.replay(f"coordinate.{MISSION}"))[-1].payload
    # the same packet, claiming the pending wrong finding was accepted (its "promotion" is the right one's)
    forged = {
        **packet,
        "proof_id": "prf_" + "f" * 16,
        "accepted_finding_ids": [state["wrong"]["finding_id"]],
        "artifact_id": "syn_" + "f" * 24,
    }
    memory.append(f"coordinate.{MISSION}", "coordination.proof_packet.created", forged, actor="lead")
    ignored = memory.coordination.merge_brief(MISSION)["ignored_events"]
    assert [i["event_type"] for i in ignored] == ["coordination.proof_packet.created"]
    assert "without citing its promotion" in ignored[0]["reason"]
    with pytest.raises(NotFoundError):
        memory.coordination.proof_trace(MISSION, artifact_id="syn_" + "f" * 24)
    assert memory.coordination.proof_trace(MISSION, artifact_id=genuine["artifact_id"])["verified"]
