"""Causal memory, consolidation and mining on each Eventloom backend (PostgreSQL when a server is configured):
the features use only the EventLog protocol and the catalog, so they behave the same on both."""

from __future__ import annotations

from pathlib import Path

from zaxy_agents.config import ZaxySettings
from zaxy_agents.fabric import MemoryFabric

STEPS = [
    ("tool.call.completed", {"tool": "read_file"}),
    ("file.edit.applied", {"path": "x.py"}),
    ("command.completed", {"command": "pytest -q", "exit_code": 0}),
    ("task.completed", {"task_id": "T"}),
]


def test_cognitive_features_on_each_backend(backend, tmp_path: Path) -> None:
    settings = ZaxySettings.resolve(tmp_path / "derived")
    with MemoryFabric(settings, log=backend.open()) as memory:
        failure = memory.append("s", "command.completed", {"command": "make deploy", "exit_code": 2})
        explained = memory.explain_outcome(
            "s",
            cause={"name": "expired token", "entity_type": "fact"},
            effect={"name": "make deploy #1", "entity_type": "command_run"},
            relation="caused",
            confidence=0.9,
            evidence=failure.citation,
        )
        assert explained["causal_edge"] is not None
        hits = memory.causal_predecessors("s", "make deploy #1")["results"]
        assert [(h["source"]["name"], h["evidence"]["citation"], h["evidence_resolves"]) for h in hits] == [
            ("expired token", failure.citation, True)
        ]
        for session in ("a", "b"):
            memory.append_many(session, [{"type": kind, "payload": payload} for kind, payload in STEPS])
        proposed = memory.consolidation_propose_from_log("a")
        assert [p["candidate_type"] for p in proposed["proposals"]] == ["episode", "procedure"]
        procedure = proposed["proposals"][1]["candidate_id"]
        memory.consolidation_review("a", procedure, decision="accepted", rationale="our loop")
        packet = memory.checkout("", session="a")
        assert not [f for f in packet.current_facts if f.entity_type == "procedure"]  # a disposition, no promotion
        reviewed = [f for f in packet.reviewed_memory if f.entity_type == "procedure"]
        assert [(f.review_status, f.authority_status) for f in reviewed] == [("accepted", "non_authoritative")]
        mined = memory.mine_procedures(min_support=2)
        assert mined["created"] == 1 and mined["procedures"][0]["steps"] == ["read_file", "edit .py", "$ pytest"]
        assert memory.consolidation_status("a", include_candidates=False)["accepted"] == 1
