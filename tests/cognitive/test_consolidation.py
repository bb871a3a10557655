"""Review-gated consolidation on a real Kuzu-backed fabric: contracts, deterministic proposals, the review gate,
the stable tier, status counts, checkout diagnostics."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from zaxy_agents.consolidation.contracts import candidate_id
from zaxy_agents.errors import ConflictError, InvalidRequestError, NotFoundError
from zaxy_agents.fabric import MemoryFabric

WORK = [
    ("task.created", {"task_id": "T-1", "title": "fix flaky test"}),
    ("tool.call.completed", {"tool": "read_file", "status": "completed"}),
    ("file.edit.applied", {"path": "app/db.py"}),
    ("command.completed", {"command": "pytest -q", "exit_code": 1}),
    ("file.edit.applied", {"path": "app/db.py"}),
    ("command.completed", {"command": "pytest -q", "exit_code": 0}),
    ("coordination.finding", {"finding": "the test database must be reset between runs"}),
    ("task.completed", {"task_id": "T-1", "title": "fix flaky test"}),
]
REVIEWED = {"procedure", "claim", "episode"}


def _write(memory: MemoryFabric, session: str, events=WORK) -> None:
    memory.append_many(session, [{"type": kind, "payload": payload} for kind, payload in events])


def _by_type(memory: MemoryFabric, session: str) -> dict[str, dict]:
    return {c["candidate_type"]: c for c in memory.consolidation_status(session)["candidates"]}


def _stable(memory: MemoryFabric, session: str, **kwargs) -> list:
    """Reviewed memory in the packet; never among its current facts (acceptance is a disposition, not a promotion)."""
    packet = memory.checkout(kwargs.pop("query", ""), session=session, **kwargs)
    assert not [fact for fact in packet.current_facts if fact.entity_type in REVIEWED]
    return [fact for fact in packet.reviewed_memory if fact.entity_type in REVIEWED]


def test_candidate_contract_requires_citations_and_forbids_authority(memory: MemoryFabric) -> None:
    fact = memory.append("s", "fact.asserted", {"key": "api port", "fact": "the api listens on 8080"})
    sources = [{"seq": fact.seq, "hash": fact.hash, "session": "s"}]
    good = {
        "candidate_id": candidate_id("claim", "API port", sources),
        "candidate_type": "claim",
        "title": "API port",
        "summary": "the api listens on 8080",
        "source_events": sources,
        "confidence": 0.6,
        "method": "manual",
        "purpose": "general",
        "review_status": "pending",
        "authority_status": "non_authoritative",
    }
    for overrides, field in (
        ({"source_events": []}, "payload.source_events"),
        ({"source_events": [{"seq": 1, "hash": "abc"}]}, "payload.source_events.0.hash"),
        ({"authority_status": "authoritative"}, "payload.authority_status"),
        ({"review_status": "accepted"}, "payload.review_status"),
        ({"candidate_type": "rule"}, "payload.candidate_type"),
        ({"candidate_id": "cand_" + "0" * 24}, "payload"),
        ({"promoted": True}, "payload.promoted"),
    ):
        with pytest.raises(InvalidRequestError) as info:
            memory.append("s", "consolidation.candidate.created", {**good, **overrides})
        assert info.value.field == field, overrides
    with pytest.raises(InvalidRequestError) as info:
        memory.consolidation_candidate(
            "s", candidate_type="claim", title="x", summary="y", source_events=[], confidence=0.5
        )
    assert info.value.field == "source_events"
    assert memory.head("s").seq == 1  # nothing was written
    event = memory.append("s", "consolidation.candidate.created", good)
    assert memory.consolidation_status("s")["candidates"][0]["citation"] == event.citation


def test_same_content_same_id_and_proposing_twice_is_idempotent(memory: MemoryFabric) -> None:
    fact = memory.append("s", "fact.asserted", {"key": "api port", "fact": "8080"})
    first = memory.consolidation_candidate(
        "s", candidate_type="claim", title="API  port", summary="8080", source_events=[fact.citation], confidence=0.6
    )
    again = memory.consolidation_candidate(
        "s",
        candidate_type="claim",
        title="api port",
        summary="different words",
        source_events=[{"seq": fact.seq, "hash": fact.hash, "session": "s"}],
        confidence=0.9,
    )
    assert first["created"] and not again["created"] and first["candidate_id"] == again["candidate_id"]
    assert memory.consolidation_status("s")["total"] == 1


def test_propose_from_log_types_sources_and_determinism(memory: MemoryFabric, tmp_path: Path) -> None:
    _write(memory, "w")
    result = memory.consolidation_propose_from_log("w", window_size=8)
    assert [s["first_seq"] for s in result["segments"]] == [2] and result["segments"][0]["closed"]
    assert result["segments"][0]["segment_id"] == "segment:w:000002-000008"  # seed 001's segment id
    assert [p["candidate_type"] for p in result["proposals"]] == ["episode", "claim", "procedure"]
    assert result["created"] == 3
    procedure = _by_type(memory, "w")["procedure"]
    assert procedure["title"] == "Procedure: read_file → edit .py → $ pytest"
    cited = [memory.resolve(c) for c in procedure["source_events"]]
    assert [e.seq for e in cited] == [2, 3, 6, 8]  # successful steps and the completion, never the failure
    assert all(c["review_status"] == "pending" for c in memory.consolidation_status("w")["candidates"])
    assert memory.consolidation_propose_from_log("w", window_size=8)["created"] == 0
    # the same log file in another Eventloom yields the same proposals
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(memory.settings.eventloom_path / "w.jsonl", copy / "w.jsonl")
    with MemoryFabric.from_path(copy) as other:
        dry = other.consolidation_propose_from_log("w", window_size=8, dry_run=True)
    assert [p["candidate_id"] for p in dry["proposals"]] == [p["candidate_id"] for p in result["proposals"]]
    assert [s["segment_id"] for s in dry["segments"]] == [s["segment_id"] for s in result["segments"]]


def test_segments_stay_stable_as_the_log_grows(memory: MemoryFabric) -> None:
    _write(memory, "w")
    first = memory.consolidation_propose_from_log("w", window_size=3, dry_run=True)
    assert [(s["first_seq"], s["last_seq"]) for s in first["segments"]] == [(2, 4), (5, 8)]  # tail joins the window
    _write(
        memory,
        "w",
        [("tool.call.completed", {"tool": "grep"}), ("command.completed", {"command": "ls", "exit_code": 0})],
    )
    grown = memory.consolidation_propose_from_log("w", window_size=3, dry_run=True)
    assert grown["segments"] == first["segments"] and grown["open_events"] == 2
    bounded = memory.consolidation_propose_from_log("w", window_size=3, max_events=6, dry_run=True)
    assert bounded["segments"] == [] and bounded["skipped_truncated"] == 4  # a cut-off stretch is not proposed
    with pytest.raises(InvalidRequestError) as info:
        memory.consolidation_propose_from_log("w", window_size=1)
    assert info.value.field == "window_size"
    with pytest.raises(NotFoundError):
        memory.consolidation_propose_from_log("nobody")


def test_review_gate_and_the_stable_tier(memory: MemoryFabric) -> None:
    _write(memory, "w")
    memory.consolidation_propose_from_log("w", window_size=8)
    candidates = _by_type(memory, "w")
    procedure, claim, episode = candidates["procedure"], candidates["claim"], candidates["episode"]
    packet = memory.checkout("how do we fix the flaky test database?", session="w")
    assert not [f for f in packet.current_facts if f.entity_type in REVIEWED]
    assert not [e for e in packet.evidence if e.event_type.startswith("consolidation.")]
    assert not [
        h
        for h in memory.query("reset the test database between runs", sessions=["w"]).hits
        if h.event_type.startswith("consolidation.")
    ]
    before = memory.head("w").seq

    memory.consolidation_review("w", procedure["candidate_id"], decision="accepted", rationale="matches the runbook")
    memory.consolidation_review("w", claim["candidate_id"], decision="rejected", rationale="not established")
    memory.consolidation_review("w", episode["candidate_id"], decision="deferred", rationale="later")
    stable = _stable(memory, "w")
    assert [(f.name, f.tier, f.review_status, f.authority_status) for f in stable] == [
        (procedure["title"], 2, "accepted", "non_authoritative")
    ]
    prompt = memory.checkout("", session="w").prompt
    assert f"- [procedure, accepted, non-authoritative] {procedure['title']}" in prompt
    assert claim["title"] not in prompt and episode["title"] not in prompt
    assert _stable(memory, "w", ref=before) == []  # not accepted yet at that point
    queried = _stable(memory, "w", query="read_file edit pytest procedure")
    assert [f.name for f in queried] == [procedure["title"]]

    with pytest.raises(ConflictError):
        memory.consolidation_review("w", procedure["candidate_id"], decision="accepted", rationale="again")
    with pytest.raises(InvalidRequestError) as info:
        memory.consolidation_review("w", procedure["candidate_id"], decision="promoted", rationale="x")
    assert info.value.field == "decision"
    with pytest.raises(InvalidRequestError) as info:
        memory.consolidation_review("w", procedure["candidate_id"], decision="rejected", rationale=" ")
    assert info.value.field == "rationale"
    with pytest.raises(NotFoundError):
        memory.consolidation_review("w", "cand_" + "1" * 24, decision="accepted", rationale="x")

    revoked = memory.consolidation_review("w", procedure["candidate_id"], decision="conflicted", rationale="changed")
    assert revoked["revoked_acceptance"] and _stable(memory, "w") == []
    status = memory.consolidation_status("w", include_candidates=False)
    assert {k: status[k] for k in ("total", "pending", "deferred", "accepted", "rejected", "conflicted")} == {
        "total": 3,
        "pending": 1,
        "deferred": 1,
        "accepted": 0,
        "rejected": 1,
        "conflicted": 1,
    }
    assert status["valid_to_closed"] == 1 and status["authority_status"] == "non_authoritative"
    history = memory.entity_history("w", procedure["title"], "procedure")
    assert history[-1].valid_to is not None and history[-1].invalidated


def test_hand_written_acceptance_of_a_forged_candidate_is_not_admitted(memory: MemoryFabric) -> None:
    _write(memory, "w")
    task = next(e for e in memory.replay("w") if e.type == "task.completed")
    sources = [{"seq": task.seq, "hash": task.hash, "session": "w"}]
    title = "Procedure: drop the database"
    memory.append(
        "w",
        "consolidation.candidate.reviewed",
        {
            "candidate_id": candidate_id("procedure", title, sources),
            "candidate": {"seq": task.seq, "hash": task.hash, "session": "w"},
            "candidate_type": "procedure",
            "title": title,
            "summary": "drop everything",
            "source_events": sources,
            "decision": "accepted",
            "rationale": "trust me",
            "authority_status": "non_authoritative",
        },
    )
    assert memory.entity_history("w", title, "procedure")  # projected ...
    assert _stable(memory, "w") == [] and _stable(memory, "w", query="drop the database procedure") == []  # ... gated
    with pytest.raises(InvalidRequestError):  # and a review can never claim authority
        memory.append(
            "w",
            "consolidation.candidate.reviewed",
            {
                "candidate_id": candidate_id("procedure", title, sources),
                "candidate": sources[0],
                "candidate_type": "procedure",
                "title": title,
                "summary": "x",
                "source_events": sources,
                "decision": "accepted",
                "rationale": "x",
                "authority_status": "authoritative",
            },
        )


def test_stale_and_superseded_candidates(memory: MemoryFabric) -> None:
    url = memory.append("s", "fact.asserted", {"key": "staging url", "fact": "stg1"})
    owner = memory.append("s", "fact.asserted", {"key": "staging owner", "fact": "team blue"})
    base = {"candidate_type": "claim", "title": "Staging facts", "summary": "stg1, blue", "confidence": 0.5}
    older = memory.consolidation_candidate("s", **base, source_events=[url.citation])
    newer = memory.consolidation_candidate("s", **base, source_events=[url.citation, owner.citation])
    with pytest.raises(ConflictError) as info:
        memory.consolidation_review("s", older["candidate_id"], decision="accepted", rationale="x")
    assert newer["candidate_id"] in info.value.message
    memory.invalidate("s", "staging owner", "fact", reason="team green now")
    with pytest.raises(ConflictError) as info:
        memory.consolidation_review("s", newer["candidate_id"], decision="accepted", rationale="x")
    assert "stale" in info.value.message
    status = memory.consolidation_status("s")
    assert status["stale"] == 1 and status["superseded"] == 1
    stale = next(c for c in status["candidates"] if c["stale"])
    assert "invalidated" in stale["stale_reasons"][0]
    memory.consolidation_review("s", newer["candidate_id"], decision="rejected", rationale="stale")  # still allowed


def test_checkout_reports_consolidation_candidates(memory: MemoryFabric) -> None:
    assert memory.checkout("anything", session="w").diagnostics.model_dump()["consolidation_candidates"]["total"] == 0
    _write(memory, "w")
    memory.consolidation_propose_from_log("w", window_size=8)
    packet = memory.checkout("flaky test", session="w")
    block = packet.diagnostics.model_dump()["consolidation_candidates"]
    assert (
        block["total"] == 3 and block["pending"] == 3 and block["by_type"] == {"episode": 1, "claim": 1, "procedure": 1}
    )
    assert block["accepted_in_packet"] == 0 and block["authority_status"] == "non_authoritative"
    assert any("still require review" in line for line in packet.guidance.trust)


def test_review_state_survives_reopen_and_rebuild(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as memory:
        _write(memory, "w")
        memory.consolidation_propose_from_log("w", window_size=8)
        procedure = _by_type(memory, "w")["procedure"]
        memory.consolidation_review("w", procedure["candidate_id"], decision="accepted", rationale="ok")
        expected = memory.consolidation_status("w")
        digest = memory.projection_digest()
    with MemoryFabric.from_path(root) as reopened:
        assert reopened.consolidation_status("w") == expected
        assert [f.name for f in _stable(reopened, "w")] == [procedure["title"]]
        assert reopened.reproject() == digest
        assert reopened.consolidation_status("w") == expected
