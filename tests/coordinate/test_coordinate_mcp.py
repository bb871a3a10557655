"""Coordinate over a real stdio MCP client: a mission end to end, and each authority rule refused.

One ``zaxy serve --profile full`` subprocess; the incident mission of docs/coordinate.md: three workers, one
wrong finding rejected, the right one promoted, a handoff whose checkout shows only promoted state.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp._client import StdioClient, serve_params

M = "incident-42"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StdioClient]:
    root = tmp_path_factory.mktemp("coordinate")
    params = serve_params(root / "eventloom", "--session-id", "ops", "--profile", "full")
    with StdioClient(params, errlog=root / "server.log") as client:
        yield client


def _refused(client: StdioClient, tool: str, arguments: dict[str, Any], code: str, field: str | None = None) -> None:
    result = client.call(tool, arguments)
    assert result.isError, result.structuredContent
    error = result.structuredContent["error"]
    assert error["code"] == code, error
    if field is not None:
        assert error.get("field") == field, error


@pytest.fixture(scope="module")
def mission(client: StdioClient) -> dict[str, Any]:
    log = client.ok("memory_append", {"event_type": "command.completed", "payload": {"command": "grep 500 app.log"}})
    test = client.ok(
        "memory_append", {"event_type": "command.completed", "payload": {"command": "pytest -k pool", "exit_code": 0}}
    )
    started = client.ok(
        "coordination_start",
        {
            "mission_id": M,
            "title": "Checkout 500s",
            "objective": "Find why checkout returns 500 since the deploy",
            "coordinator": "lead",
            "reviewers": ["sre"],
        },
    )
    for worker in ("db", "net", "cache"):
        client.ok("coordination_worker_create", {"mission_id": M, "worker_id": worker, "actor": "lead"})
    assigned = client.ok("coordination_assign", {"mission_id": M, "worker_id": "db", "task": "Check the DB pool"})
    right = client.ok(
        "coordination_report_finding",
        {
            "mission_id": M,
            "worker_id": "db",
            "subject": "root cause",
            "claim": "The DB connection pool is exhausted (max 10) since the deploy",
            "evidence": [log["citation"], test["citation"]],
            "confidence": 0.8,
            "test_backed": True,
            "assignment_id": assigned["assignment_id"],
        },
    )
    wrong = client.ok(
        "coordination_report_finding",
        {"mission_id": M, "worker_id": "net", "subject": "root cause", "claim": "DNS flaps", "confidence": 0.3},
    )
    return {"started": started, "right": right, "wrong": wrong, "log": log, "assigned": assigned}


def test_a_finding_is_pending_and_never_accepted_state_before_review(
    client: StdioClient, mission: dict[str, Any]
) -> None:
    assert (mission["right"]["review_status"], mission["right"]["authority_status"]) == (
        "pending",
        "non_authoritative",
    )
    assert mission["right"]["citation"].startswith(f"eventloom://coordinate.{M}.db/events/")
    again = client.ok(
        "coordination_report_finding",
        {"mission_id": M, "worker_id": "net", "subject": "root cause", "claim": "DNS flaps", "confidence": 0.3},
    )
    assert again["created"] is False and again["finding_id"] == mission["wrong"]["finding_id"]
    checkout = client.ok("coordination_checkout", {"mission_id": M, "worker_id": "cache"})
    assert checkout["accepted_state"] == [] and "pending" not in checkout["diagnostics"]
    assert "DNS flaps" not in checkout["prompt"] and "pool is exhausted" not in checkout["prompt"]
    with_diagnostics = client.ok(
        "coordination_checkout", {"mission_id": M, "worker_id": "cache", "include_diagnostics": True}
    )
    pending = with_diagnostics["diagnostics"]["pending"]
    assert {row["row_status"] for row in pending} == {"non_authoritative"} and len(pending) == 2
    assert with_diagnostics["diagnostics"]["conflict_count"] == 1  # two claims about the root cause


def test_authority_rules_are_refused_and_write_nothing(client: StdioClient, mission: dict[str, Any]) -> None:
    right = mission["right"]["finding_id"]
    before = client.ok("coordination_merge_brief", {"mission_id": M})
    # promotion without review
    _refused(client, "coordination_promote", {"mission_id": M, "finding_id": right, "promoted_by": "lead"}, "conflict")
    # review by a role without the right (another worker), and by the finding's own worker
    review = {"mission_id": M, "finding_id": right, "status": "accepted", "rationale": "looks right"}
    _refused(client, "coordination_review_finding", {**review, "reviewer": "net"}, "unauthorized", "reviewer")
    _refused(client, "coordination_review_finding", {**review, "reviewer": "db"}, "unauthorized", "reviewer")
    _refused(client, "coordination_review_finding", {**review, "reviewer": "stranger"}, "unauthorized")
    # a worker reporting as another, an unknown mission, a worker of no mission reading pending findings
    _refused(
        client, "coordination_assign", {"mission_id": M, "worker_id": "db", "task": "x", "actor": "net"}, "unauthorized"
    )
    _refused(client, "coordination_checkout", {"mission_id": "nope", "worker_id": "db"}, "not_found", "mission_id")
    _refused(client, "coordination_checkout", {"mission_id": M, "include_diagnostics": True}, "unauthorized")
    # a raw append cannot forge mission state
    forged = {"event_type": "coordination.finding.promoted", "payload": {"mission_id": M}}
    _refused(client, "memory_append", forged, "invalid_request", "event_type")
    after = client.ok("coordination_merge_brief", {"mission_id": M})
    assert after["counts"] == before["counts"] and after["ignored_events"] == []


def test_review_promote_handoff_and_proof_trace(client: StdioClient, mission: dict[str, Any]) -> None:
    right, wrong = mission["right"]["finding_id"], mission["wrong"]["finding_id"]
    client.ok(
        "coordination_review_finding",
        {"mission_id": M, "finding_id": wrong, "status": "rejected", "rationale": "no evidence", "reviewer": "sre"},
    )
    accepted = client.ok(
        "coordination_review_finding",
        {"mission_id": M, "finding_id": right, "status": "accepted", "rationale": "logs + test", "reviewer": "sre"},
    )
    promoted = client.ok("coordination_promote", {"mission_id": M, "finding_id": right, "promoted_by": "sre"})
    assert promoted["authority_status"] == "accepted_mission_state"
    # a handoff citing the wrong event (the review, not a promotion) is refused
    _refused(
        client,
        "coordination_handoff",
        {"mission_id": M, "summary": "x", "promoted_refs": [accepted["citation"]]},
        "invalid_request",
        "promoted_refs[0]",
    )
    handoff = client.ok(
        "coordination_handoff",
        {"mission_id": M, "summary": "Pool raised to 50", "next_steps": ["watch p99"], "to": "night shift"},
    )
    assert handoff["promoted_refs"] == [
        {"session": f"coordinate.{M}", "seq": promoted["seq"], "hash": promoted["hash"]}
    ]
    assert handoff["handoff_event_ref"]["seq"] == handoff["seq"]
    # the next shift's checkout: promoted state and the handoff only
    checkout = client.ok("coordination_checkout", {"mission_id": M})
    assert [row["finding_id"] for row in checkout["accepted_state"]] == [right]
    assert promoted["citation"] in checkout["prompt"] and "DNS flaps" not in checkout["prompt"]
    assert checkout["latest_handoff"]["citation"] == handoff["citation"]
    assert checkout["purpose"]["preset"] == "coordinate"
    trace = client.ok("coordination_proof_trace", {"mission_id": M, "handoff_id": handoff["handoff_id"]})
    assert trace["verified"] is True
    assert [s["step"] for s in trace["steps"]] == [
        "reported",
        "evidence",
        "evidence",
        "reviewed",
        "promoted",
        "handed_off",
    ]
    assert trace["steps"][1]["citation"] == mission["log"]["citation"]
    by_seq = client.ok("coordination_proof_trace", {"mission_id": M, "proof_seq": promoted["seq"]})
    assert [c["finding_id"] for c in by_seq["claims"]] == [right]
    ledger = {
        row["worker_id"]: row for row in client.ok("coordination_performance_ledger", {"mission_id": M})["workers"]
    }
    assert (ledger["db"]["promoted"], ledger["db"]["test_backed_rate"]) == (1, 1.0)
    assert (ledger["net"]["rejected"], ledger["net"]["missing_evidence"]) == (1, 1)
    assert ledger["cache"]["reported"] == 0 and ledger["cache"]["accepted_rate"] is None
    _refused(client, "coordination_promote", {"mission_id": M, "finding_id": right, "promoted_by": "sre"}, "conflict")


def test_approval_packet_round_trip_and_stale_packets(client: StdioClient, mission: dict[str, Any]) -> None:
    fresh = client.ok(
        "coordination_report_finding",
        {"mission_id": M, "worker_id": "cache", "subject": "cache", "claim": "Cache hit rate fell to 20%"},
    )
    packet = client.ok("coordination_approval_packet", {"mission_id": M})
    assert [item["finding_id"] for item in packet["items"]] == [fresh["finding_id"]]
    decision = {"finding_id": fresh["finding_id"], "status": "accepted", "rationale": "dashboards", "promote": True}
    applied = client.ok(
        "coordination_apply_approval",
        {"mission_id": M, "packet_id": packet["packet_id"], "decisions": [decision], "actor": "sre"},
    )
    assert len(applied["reviews"]) == 1 and len(applied["promotions"]) == 1
    _refused(
        client,
        "coordination_apply_approval",
        {"mission_id": M, "packet_id": packet["packet_id"], "decisions": [decision], "actor": "sre"},
        "conflict",
        "packet_id",
    )
    brief = client.ok("coordination_merge_brief", {"mission_id": M})
    assert brief["counts"]["promoted"] == 2 and brief["counts"]["rejected"] == 1


def test_missions_are_isolated(client: StdioClient, mission: dict[str, Any], tmp_path: Path) -> None:
    client.ok("coordination_start", {"mission_id": "other", "title": "Other", "objective": "Other work"})
    client.ok("coordination_worker_create", {"mission_id": "other", "worker_id": "spy"})
    # a worker of another mission cannot read this mission's pending findings
    _refused(
        client,
        "coordination_checkout",
        {"mission_id": M, "worker_id": "spy", "include_diagnostics": True},
        "not_found",
        "worker_id",
    )
    _refused(client, "coordination_start", {"mission_id": M, "title": "again", "objective": "again"}, "conflict")
