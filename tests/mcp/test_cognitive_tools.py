"""Causal and consolidation tools through the real MCP client: in-process memory streams and one stdio server."""

from __future__ import annotations

from pathlib import Path

from tests.mcp._client import StdioClient, serve_params
from tests.mcp.conftest import connected, error, make_app, ok
from zaxy_agents.mcp.caller import Caller

COGNITIVE_TOOLS = [
    "memory_causal_successors",
    "memory_causal_predecessors",
    "memory_consolidation_candidate",
    "memory_consolidation_propose_from_log",
    "memory_consolidation_review",
    "memory_consolidation_status",
    "memory_consolidation",
]
STEPS = [
    ("tool.call.completed", {"tool": "read_file"}),
    ("file.edit.applied", {"path": "x.py"}),
    ("command.completed", {"command": "pytest -q", "exit_code": 0}),
    ("task.completed", {"task_id": "T"}),
]


async def _explained_failure(client) -> tuple[dict, dict]:
    failure = await ok(
        client, "memory_append", {"type": "command.completed", "payload": {"command": "make deploy", "exit_code": 2}}
    )
    (event,) = (await ok(client, "memory_replay", {"limit": 1}))["events"]
    explanation = {
        "cause": {"name": "expired token", "entity_type": "fact"},
        "effect": {"name": "make deploy #1", "entity_type": "command_run"},
        "relation": "caused",
        "confidence": 0.9,
        "evidence": {"seq": event["seq"], "hash": event["hash"]},
    }
    explained = await ok(client, "memory_append", {"type": "outcome.explained", "payload": explanation})
    return failure, explained


async def test_full_profile_lists_the_cognitive_tools_and_core_does_not(tmp_path: Path) -> None:
    full = make_app(tmp_path / "full", profile="full")
    core = make_app(tmp_path / "core", profile="core")
    try:
        async with connected(full) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(COGNITIVE_TOOLS) <= set(tools)
            assert tools["memory_causal_predecessors"].annotations.readOnlyHint is True
            assert tools["memory_consolidation_review"].annotations.readOnlyHint is False
            schema = tools["memory_consolidation_candidate"].inputSchema
            assert schema["additionalProperties"] is False and "title" in schema["properties"]
            assert schema["properties"]["source_events"]["minItems"] == 1
        async with connected(core) as client:
            assert not set(COGNITIVE_TOOLS) & {tool.name for tool in (await client.list_tools()).tools}
    finally:
        full.close()
        core.close()


async def test_causal_tools_walk_both_ways_with_citations(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full", capture=False)
    try:
        async with connected(app) as client:
            failure, _ = await _explained_failure(client)
            why = await ok(client, "memory_causal_predecessors", {"entity": "make deploy #1"})
            assert [(h["source"]["name"], h["relation_type"], h["evidence"]["citation"]) for h in why["results"]] == [
                ("expired token", "caused", failure["citation"])
            ]
            assert why["results"][0]["authority_status"] == "non_authoritative"
            what = await ok(
                client, "memory_causal_successors", {"entity": "expired token", "relation_types": ["caused"]}
            )
            assert what["results"][0]["target"]["name"] == "make deploy #1" and what["direction"] == "successors"
            assert (await ok(client, "memory_causal_successors", {"entity": "make deploy #1"}))["results"] == []
            bad = await error(client, "memory_causal_successors", {"entity": "x", "relation_types": ["vibes"]})
            assert bad["code"] == "invalid_request" and bad["field"].startswith("relation_types")
            missing = await error(client, "memory_causal_predecessors", {"entity": "nobody"})
            assert missing["code"] == "not_found" and missing["field"] == "entity_name"
            uncited = await error(
                client,
                "memory_append",
                {
                    "type": "causal.edge.generated",
                    "payload": {
                        "source": {"name": "a", "entity_type": "fact"},
                        "target": {"name": "b", "entity_type": "fact"},
                        "relation_type": "caused",
                        "graph_relation_type": "causal_caused",
                        "confidence": 0.5,
                        "causal_method": "m",
                        "review_status": "proposed",
                        "authority_status": "non_authoritative",
                    },
                },
            )
            assert uncited["code"] == "invalid_request" and uncited["field"] == "payload.evidence"
    finally:
        app.close()


async def test_consolidation_tools_and_the_umbrella(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full", capture=False)
    try:
        async with connected(app) as client:
            for kind, payload in STEPS:
                await ok(client, "memory_append", {"type": kind, "payload": payload})
            proposed = await ok(client, "memory_consolidation_propose_from_log", {})
            assert [p["candidate_type"] for p in proposed["proposals"]] == ["episode", "procedure"]
            procedure = proposed["proposals"][1]["candidate_id"]
            status = await ok(client, "memory_consolidation", {"operation": "status", "include_candidates": False})
            assert status["operation"] == "status" and status["pending"] == 2 and "candidates" not in status
            packet = await ok(client, "memory_checkout", {"query": "how do we ship?"})
            assert "[procedure, accepted" not in packet["prompt"]
            reviewed = await ok(
                client,
                "memory_consolidation",
                {"operation": "review", "candidate_id": procedure, "decision": "accepted", "rationale": "our loop"},
            )
            assert reviewed["status"] == "accepted" and reviewed["authority_status"] == "non_authoritative"
            packet = await ok(client, "memory_checkout", {"query": "how do we ship?"})
            assert (
                "[procedure, accepted, non-authoritative] Procedure: read_file → edit .py → $ pytest"
                in packet["prompt"]
            )
            assert packet["diagnostics"]["consolidation_candidates"]["accepted"] == 1
            again = await error(
                client,
                "memory_consolidation_review",
                {"candidate_id": procedure, "decision": "accepted", "rationale": "again"},
            )
            assert again["code"] == "conflict"
            claim = await ok(
                client,
                "memory_consolidation_candidate",
                {
                    "candidate_type": "claim",
                    "title": "pytest passes",
                    "summary": "the suite is green",
                    "source_events": [packet["provenance"][0]["citation"]],
                    "confidence": 0.6,
                },
            )
            assert claim["created"] and claim["candidate"]["review_status"] == "pending"
            statuses = await ok(client, "memory_consolidation_status", {"limit": 10})
            assert (statuses["total"], statuses["pending"], statuses["accepted"]) == (3, 2, 1)
            incomplete = await error(client, "memory_consolidation", {"operation": "review", "candidate_id": procedure})
            assert incomplete["code"] == "invalid_request" and "status" in incomplete["message"]
            foreign = await error(client, "memory_consolidation", {"operation": "status", "decision": "accepted"})
            assert "do not apply" in foreign["message"]
            uncited = await error(
                client,
                "memory_consolidation_candidate",
                {"candidate_type": "claim", "title": "t", "summary": "s", "source_events": [], "confidence": 0.5},
            )
            assert uncited["field"] == "source_events"
            promote = await error(
                client,
                "memory_consolidation_review",
                {"candidate_id": procedure, "decision": "promoted", "rationale": "x"},
            )
            assert promote["field"] == "decision"
    finally:
        app.close()


async def test_reviews_need_the_admin_token_over_http(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full", capture=False)
    try:
        agent = Caller(session="bob", transport="http", restricted=True, admin=False)
        admin = Caller(session="bob", transport="http", restricted=True, admin=True)
        for kind, payload in STEPS:
            assert not (await app.call_tool("memory_append", {"type": kind, "payload": payload}, agent)).isError
        proposed = (await app.call_tool("memory_consolidation_propose_from_log", {}, agent)).structuredContent
        candidate = proposed["proposals"][1]["candidate_id"]
        review = {"candidate_id": candidate, "decision": "accepted", "rationale": "mine"}
        for name, arguments in (
            ("memory_consolidation_review", review),
            ("memory_consolidation", {"operation": "review", **review}),
        ):
            denied = await app.call_tool(name, arguments, agent)
            assert denied.isError and denied.structuredContent["error"]["code"] == "unauthorized"
        raw = await app.call_tool(
            "memory_append", {"type": "consolidation.candidate.reviewed", "payload": {"decision": "accepted"}}, agent
        )
        assert raw.isError and raw.structuredContent["error"]["field"] == "event_type"  # no way around the gate
        assert not (await app.call_tool("memory_consolidation_review", review, admin)).isError
        other = await app.call_tool("memory_consolidation_status", {"session_id": "alice"}, agent)
        assert other.structuredContent["error"]["code"] == "unauthorized"
    finally:
        app.close()


def test_stdio_server_round_trip(tmp_path: Path) -> None:
    with StdioClient(serve_params(tmp_path / "eventloom", "--session-id", "ops", "--profile", "full")) as client:
        names = [tool.name for tool in client.list_tools()]
        assert set(COGNITIVE_TOOLS) <= set(names)
        failure = client.ok(
            "memory_append", {"type": "command.completed", "payload": {"command": "make deploy", "exit_code": 2}}
        )
        head = client.ok("memory_replay", {"limit": 1})["events"][0]
        client.ok(
            "memory_append",
            {
                "type": "outcome.explained",
                "payload": {
                    "cause": {"name": "expired token", "entity_type": "fact"},
                    "effect": {"name": "make deploy #1", "entity_type": "command_run"},
                    "relation": "caused",
                    "confidence": 0.9,
                    "evidence": {"seq": head["seq"], "hash": head["hash"]},
                },
            },
        )
        why = client.ok("memory_causal_predecessors", {"entity": "make deploy #1", "depth": 1})
        assert why["results"][0]["evidence"]["citation"] == failure["citation"]
        status = client.ok("memory_consolidation", {"operation": "status"})
        assert status["total"] == 0 and status["operation"] == "status"
