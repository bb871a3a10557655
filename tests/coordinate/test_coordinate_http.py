"""Coordinate over HTTP with two tokens: the ordinary token reports and reads, only the admin token reviews,
promotes, exports or applies approvals, whatever actor the call claims."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.mcp._http_serve import http_serve

AGENT_TOKEN = "agent-token-0123456789abcdef"
ADMIN_TOKEN = "admin-token-0123456789abcdef"
M = "http-mission"


async def _calls(base: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    headers = {"Authorization": f"Bearer {token}", "x-zaxy-session-id": "ops"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(f"{base}/mcp", http_client=http) as (read, write, _),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        return [await client.call_tool(name, arguments) for name, arguments in calls]


def _ok(result: Any) -> dict[str, Any]:
    assert not result.isError, result.structuredContent
    return result.structuredContent


def test_only_the_admin_token_reviews_and_promotes(tmp_path: Path) -> None:
    env = {"ZAXY_AUTH_TOKEN": AGENT_TOKEN, "ZAXY_ADMIN_TOKEN": ADMIN_TOKEN}
    with http_serve(tmp_path / "eventloom", "--profile", "full", env=env) as base:
        start = {"mission_id": M, "title": "HTTP", "objective": "Two tokens", "reviewers": ["sre"]}
        (denied_start,) = asyncio.run(_calls(base, AGENT_TOKEN, [("coordination_start", start)]))
        assert denied_start.isError and denied_start.structuredContent["error"]["code"] == "unauthorized"
        asyncio.run(
            _calls(
                base,
                ADMIN_TOKEN,
                [("coordination_start", start), ("coordination_worker_create", {"mission_id": M, "worker_id": "w1"})],
            )
        )
        report = {"mission_id": M, "worker_id": "w1", "subject": "cause", "claim": "pool exhausted"}
        (reported,) = asyncio.run(_calls(base, AGENT_TOKEN, [("coordination_report_finding", report)]))
        finding = _ok(reported)["finding_id"]
        review = {"mission_id": M, "finding_id": finding, "status": "accepted", "rationale": "ok", "reviewer": "sre"}
        denied = asyncio.run(
            _calls(
                base,
                AGENT_TOKEN,
                [
                    ("coordination_review_finding", review),  # claims to be the reviewer: the token decides
                    ("coordination_approval_packet", {"mission_id": M}),
                    ("coordination_merge_brief", {"mission_id": M}),
                    (
                        "coordination_record_synthesis_artifact",
                        {"mission_id": M, "checkout": {}, "decision_scope": "merge_brief", "actor": "sre"},
                    ),
                    ("coordination_checkout", {"mission_id": M, "worker_id": "w1"}),
                ],
            )
        )
        for result in denied[:4]:
            assert result.isError and result.structuredContent["error"]["code"] == "unauthorized"
        assert _ok(denied[4])["accepted_state"] == []
        reviewed, promoted, checkout = asyncio.run(
            _calls(
                base,
                ADMIN_TOKEN,
                [
                    ("coordination_review_finding", review),
                    ("coordination_promote", {"mission_id": M, "finding_id": finding, "promoted_by": "sre"}),
                    ("coordination_checkout", {"mission_id": M}),
                ],
            )
        )
        assert _ok(reviewed)["status"] == "accepted" and _ok(promoted)["authority_status"] == "accepted_mission_state"
        assert [row["finding_id"] for row in _ok(checkout)["accepted_state"]] == [finding]
