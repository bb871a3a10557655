"""examples/incident-review: a real LangGraph agent (create_agent, scripted offline model) with the causal and
consolidation memory tools explains a failure causally and proposes a procedure; a human then reviews it through
the real CLI."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import run_example, run_zaxy_json


def test_agent_explains_the_failure_and_proposes_a_procedure_for_review(tmp_path: Path) -> None:
    root = tmp_path / "eventloom"
    out = run_example("incident-review", root)
    assert "tools: memory_query, memory_append, memory_causal_predecessors, memory_consolidation_candidate" in out
    failure = r"eventloom://ops/events/2#[0-9a-f]{12}"
    assert re.search(
        rf"The deploy failed because ci token expired \(caused, confidence 0.85, evidence {failure}\)", out
    )
    edge = rf"causal edge: ci token expired -\[caused\]-> make deploy #2 \(evidence {failure}, proposed"
    assert re.search(edge + r", non_authoritative\)", out)
    candidate = re.search(r"candidate: (cand_[0-9a-f]{24}) 'Recover a deploy rejected with 401' \(pending\)", out)
    assert candidate, out

    path = ["--eventloom-path", str(root)]
    code, status = run_zaxy_json("memory", "consolidation", "status", "-s", "ops", *path)
    assert code == 0 and [c["source_events"][0].split("#")[0] for c in status["candidates"]] == [
        "eventloom://ops/events/2"
    ]
    code, packet = run_zaxy_json("memory", "checkout", "how do we recover a failed deploy?", "-s", "ops", *path)
    assert code == 0 and "Recover a deploy rejected with 401" not in packet["prompt"]  # pending: not memory
    code, reviewed = run_zaxy_json(
        "memory", "consolidation", "review", candidate.group(1), "-s", "ops",
        "--decision", "accepted", "--rationale", "matches the runbook", *path,
    )  # fmt: skip
    assert code == 0 and reviewed["authority_status"] == "non_authoritative"
    code, packet = run_zaxy_json("memory", "checkout", "how do we recover a failed deploy?", "-s", "ops", *path)
    assert code == 0
    assert "[procedure, accepted, non-authoritative] Recover a deploy rejected with 401" in packet["prompt"]
    assert packet["diagnostics"]["causal_context"]["count"] >= 1
