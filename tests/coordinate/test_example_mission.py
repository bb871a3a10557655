"""examples/incident-mission: a real LangGraph supervisor graph with a Send fan-out of create_agent workers
(scripted offline models) records a mission; the next shift's checkout shows only promoted state."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_example
from zaxy_agents.fabric import MemoryFabric


def test_the_mission_promotes_only_what_the_evidence_backs(tmp_path: Path) -> None:
    root = tmp_path / "eventloom"
    out = run_example("incident-mission", root)
    assert "review: promoted=1, deferred=1, rejected=1" in out, out
    accepted = out.split("## Accepted Mission State")[1].split("##")[0]
    assert "DB connection pool" in accepted and "DNS" not in out.split("# Coordinate Checkout")[1]
    with MemoryFabric.from_path(root) as memory:
        brief = memory.coordination.merge_brief("checkout-500s")
        (promoted,) = brief["findings"]["promoted"]
        assert promoted["worker_id"] == "db" and len(promoted["evidence"]) == 2
        (rejected,) = brief["findings"]["rejected"]
        assert rejected["worker_id"] == "net" and rejected["reviews"][0]["reviewer"] == "sre"
        handoff = memory.coordination.checkout("checkout-500s")["latest_handoff"]
        trace = memory.coordination.proof_trace("checkout-500s", handoff_id=handoff["handoff_id"])
        assert trace["verified"] and [c["finding_id"] for c in trace["claims"]] == [promoted["finding_id"]]
