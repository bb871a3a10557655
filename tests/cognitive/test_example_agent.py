"""examples/causal_review_agent.py: a real LangGraph agent with Zaxy's MCP tools and a scripted model explains a
failure causally and proposes a procedure; a human then reviews it through the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT, run_zaxy_json


def test_agent_explains_the_failure_and_proposes_a_procedure_for_review(tmp_path: Path) -> None:
    root = tmp_path / "eventloom"
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "examples" / "causal_review_agent.py"), "--eventloom-path", str(root)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["tools_called"] == [
        "memory_checkout",
        "memory_append",
        "memory_causal_predecessors",
        "memory_consolidation_candidate",
    ]
    edge = summary["causal_edge"]
    assert (edge["source"]["name"], edge["relation_type"], edge["target"]["name"]) == (
        "ci token expired",
        "caused",
        "make deploy #2",
    )
    assert edge["evidence"].startswith("eventloom://ops/events/2#") and edge["evidence_resolves"]
    assert edge["authority_status"] == "non_authoritative" and "non-authoritative" in summary["answer"]
    candidate = summary["candidate"]["candidate"]
    assert candidate["review_status"] == "pending" and candidate["candidate_type"] == "procedure"
    assert [c.split("#")[0] for c in candidate["source_events"]] == [
        "eventloom://ops/events/2",
        "eventloom://ops/events/3",
        "eventloom://ops/events/4",
    ]

    path = ["--eventloom-path", str(root)]
    code, packet = run_zaxy_json("memory", "checkout", "how do we recover a failed deploy?", "-s", "ops", *path)
    assert code == 0 and "Recover a deploy rejected with 401" not in packet["prompt"]  # pending: not memory
    code, reviewed = run_zaxy_json(
        "memory", "consolidation", "review", candidate["candidate_id"], "-s", "ops",
        "--decision", "accepted", "--rationale", "matches the runbook", *path,
    )  # fmt: skip
    assert code == 0 and reviewed["authority_status"] == "non_authoritative"
    code, packet = run_zaxy_json("memory", "checkout", "how do we recover a failed deploy?", "-s", "ops", *path)
    assert code == 0
    assert "[procedure, accepted, non-authoritative] Recover a deploy rejected with 401" in packet["prompt"]
    assert packet["diagnostics"]["causal_context"]["count"] >= 1
