"""A Coordinate promotion is seed 004's strong reinforcement, seen through a real stdio MCP client.

The memory a promoted finding cites gains a ``memory.promoted`` event (replayable) and its salience shows it in
``memory_checkout`` diagnostics; a refused promotion, a rejected finding and an uncited memory gain nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.mcp._client import StdioClient, serve_params

M = "db-move"


def _reinforcement(client: StdioClient, name: str) -> float:
    checkout = client.ok("memory_checkout", {"query": "which database port and cache", "max_tokens": 4000})
    rows = {row["name"]: row for row in checkout["diagnostics"]["salience"]}
    return rows[name]["reinforcement"]


def _promoted_events(client: StdioClient) -> list[dict[str, Any]]:
    replay = client.ok("memory_replay", {"session_id": "ops"})
    return [event for event in replay["events"] if event["type"] == "memory.promoted"]


def test_a_promoted_finding_reinforces_the_memory_it_cites(tmp_path: Path) -> None:
    params = serve_params(tmp_path / "eventloom", "--session-id", "ops", "--profile", "full")
    with StdioClient(params, errlog=tmp_path / "server.log") as client:
        port = client.ok(
            "memory_append", {"event_type": "fact.asserted", "payload": {"key": "db port", "fact": "5433"}}
        )
        cache = client.ok(
            "memory_append", {"event_type": "fact.asserted", "payload": {"key": "cache", "fact": "redis"}}
        )
        client.ok("coordination_start", {"mission_id": M, "title": "t", "objective": "o", "reviewers": ["sre"]})
        for worker in ("db", "net"):
            client.ok("coordination_worker_create", {"mission_id": M, "worker_id": worker})
        report = {"mission_id": M, "subject": "port", "confidence": 0.7}
        right = client.ok(
            "coordination_report_finding",
            {**report, "worker_id": "db", "claim": "5433", "evidence": [port["citation"]]},
        )
        wrong = client.ok(
            "coordination_report_finding",
            {**report, "worker_id": "net", "claim": "the cache decides", "evidence": [cache["citation"]]},
        )
        before = (_reinforcement(client, "db port"), _reinforcement(client, "cache"))
        assert before == (1.0, 1.0)

        # refused: not reviewed yet; rejected: never promotable -> nothing reinforced
        refused = client.call(
            "coordination_promote", {"mission_id": M, "finding_id": right["finding_id"], "promoted_by": "coordinator"}
        )
        assert refused.isError and refused.structuredContent["error"]["code"] == "conflict"
        review = {"mission_id": M, "reviewer": "sre", "rationale": "checked"}
        client.ok("coordination_review_finding", {**review, "finding_id": wrong["finding_id"], "status": "rejected"})
        rejected = client.call(
            "coordination_promote", {"mission_id": M, "finding_id": wrong["finding_id"], "promoted_by": "coordinator"}
        )
        assert rejected.isError
        assert _promoted_events(client) == []
        assert (_reinforcement(client, "db port"), _reinforcement(client, "cache")) == before

        client.ok("coordination_review_finding", {**review, "finding_id": right["finding_id"], "status": "accepted"})
        promoted = client.ok(
            "coordination_promote", {"mission_id": M, "finding_id": right["finding_id"], "promoted_by": "coordinator"}
        )
        [event] = _promoted_events(client)
        assert promoted["reinforced"] == [
            {"event_type": "memory.promoted", "seq": event["seq"], "hash": event["hash"], "citation": event["citation"]}
        ]
        assert event["payload"]["memories"] == [{"entity_name": "db port", "entity_type": "fact"}]
        assert event["payload"]["promotion_ref"] == promoted["citation"]
        assert _reinforcement(client, "db port") > 1.5  # strong: 1 + ln(1 + 1.0)
        assert _reinforcement(client, "cache") == 1.0  # the rejected finding's evidence: untouched

        # the ledger is an ordinary event: a raw append cannot forge it
        forged = {"event_type": "memory.promoted", "payload": event["payload"]}
        error = client.call("memory_append", forged).structuredContent["error"]
        assert (error["code"], error["field"]) == ("invalid_request", "event_type")
