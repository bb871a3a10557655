"""Every tool through the real MCP client (in-process memory streams): results, errors, scoping, capture."""

from __future__ import annotations

import json
from pathlib import Path

from tests.mcp.conftest import connected, error, make_app, ok
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.mcp.caller import Caller


async def test_append_then_checkout_returns_the_current_fact_with_its_citation(app) -> None:
    async with connected(app) as client:
        old = await ok(
            client, "memory_append", {"type": "fact.asserted", "payload": {"key": "db", "fact": "the db is MySQL 8"}}
        )
        new = await ok(
            client,
            "memory_append",
            {"type": "fact.asserted", "payload": {"key": "db", "fact": "the db is Postgres 16"}},
        )
        assert new["citation"].startswith("eventloom://s1/events/")
        packet = await ok(client, "memory_checkout", {"query": "which db do we use?", "max_tokens": 400})
        facts = {fact["citation"]: fact["summary"] for fact in packet["current_facts"]}
        assert facts == {new["citation"]: "the db is Postgres 16"}
        assert old["citation"] not in packet["prompt"] and new["citation"] in packet["prompt"]
        assert packet["retention"]["superseded_excluded"] >= 1
        assert packet["diagnostics"]["budget_used"] <= 400
        text = (await client.call_tool("memory_checkout", {"query": "db"})).content[0].text
        assert text.startswith("# Memory Checkout") and "[zaxy] answerability" in text


async def test_structured_errors_for_bad_arguments_unknown_tools_and_missing_entities(app) -> None:
    async with connected(app) as client:
        extra = await error(client, "memory_checkout", {"query": "x", "bogus": 1})
        assert extra["code"] == "invalid_request" and extra["field"] == "bogus"
        wrong_type = await error(client, "memory_query", {"query": "x", "k": "ten"})
        assert wrong_type["code"] == "invalid_request" and wrong_type["field"] == "k"
        too_long = await error(client, "memory_checkout", {"query": "x" * 4001})
        assert too_long["field"] == "query"
        bad_session = await error(client, "memory_checkout", {"session_id": "../etc"})
        assert bad_session["field"] == "session_id"
        bad_type = await error(client, "memory_append", {"type": "NotDotted", "payload": {}})
        assert bad_type["field"] == "type"
        deep = {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": 1}}}}}}}}}
        assert (await error(client, "memory_append", {"type": "note.recorded", "payload": deep}))["field"] == "payload"
        unknown = await error(client, "memory_teleport", {})
        assert unknown["code"] == "unknown_tool"
        missing = await error(client, "memory_invalidate", {"entity": "nothing", "reason": "gone"})
        assert missing["code"] == "not_found"
        bad_signal = await error(client, "memory_feedback", {"entity": "x", "signal": "meh"})
        assert bad_signal["code"] == "invalid_request" and bad_signal["field"] == "signal"


async def test_profiles_change_listing_not_capability(app) -> None:
    async with connected(app) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        assert listed[0] == "memory_checkout" and len(listed) == 8 and "memory_replay" not in listed
        await ok(client, "memory_append", {"type": "decision.recorded", "payload": {"decision": "ship on Fridays"}})
        replay = await ok(client, "memory_replay", {"limit": 5})  # unlisted under core, callable by name
        assert replay["events"][0]["type"] == "decision.recorded"
        capabilities = await ok(client, "memory_capabilities")
        server = capabilities["server"]
        assert server["profile"] == "core" and server["listed_tools"] == listed
        assert set(server["unlisted_tools"]) >= {"memory_replay", "context_after_turn", "memory_skill"}
        assert server["process"]["role"] == "owner" and capabilities["degraded"] is None


async def test_full_profile_lists_every_tool(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full")
    try:
        async with connected(app) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert names[0] == "memory_checkout" and len(names) >= 14
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert tools["memory_query"].annotations.readOnlyHint is True
            assert tools["memory_append"].annotations.readOnlyHint is False
            assert (await ok(client, "memory_capabilities"))["server"]["unlisted_tools"] == []
    finally:
        app.close()


async def test_restricted_callers_never_reach_another_session(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom")
    try:
        alice = Caller(session="alice", transport="http", restricted=True, admin=False)
        bob = Caller(session="bob", transport="http", restricted=True, admin=False)
        admin_bob = Caller(session="bob", transport="http", restricted=True, admin=True)
        secret = {"type": "fact.asserted", "payload": {"key": "launch", "fact": "launch code is 1234"}}
        assert not (await app.call_tool("memory_append", secret, alice)).isError
        for arguments in (
            {"query": "launch code", "session_id": "alice"},
            {"query": "launch code", "scope": ["alice"]},
        ):
            denied = await app.call_tool("memory_checkout", arguments, bob)
            assert denied.isError and denied.structuredContent["error"]["code"] == "unauthorized"
        write = await app.call_tool("memory_append", {**secret, "session_id": "alice"}, bob)
        assert write.structuredContent["error"]["code"] == "unauthorized"
        own = await app.call_tool("memory_checkout", {"query": "launch code"}, bob)
        assert not own.isError and "1234" not in json.dumps(own.structuredContent)
        replay = await app.call_tool("memory_replay", {}, bob)
        assert replay.structuredContent["error"]["code"] == "unauthorized"
        assert not (await app.call_tool("memory_replay", {}, admin_bob)).isError
        capabilities = await app.call_tool("memory_capabilities", {}, bob)
        assert "eventloom_path" not in capabilities.structuredContent
    finally:
        app.close()


async def test_lifecycle_capture_records_keys_not_values_and_stays_out_of_retrieval(tmp_path: Path) -> None:
    root = tmp_path / "eventloom"
    app = make_app(root)
    try:
        async with connected(app) as client:
            await ok(client, "memory_append", {"type": "note.recorded", "payload": {"text": "zebra-unique-value"}})
            await ok(client, "memory_checkout", {"query": "zebra"})
            await error(client, "memory_checkout", {"query": "zebra", "nope": True})
    finally:
        app.close()  # drains the capture queue
    with MemoryFabric.from_path(root) as fabric:
        events = list(fabric.replay("s1"))
        captured = [e for e in events if e.type == "tool.call.completed"]
        assert [(e.payload["tool"], e.payload["status"]) for e in captured] == [
            ("memory_append", "ok"),
            ("memory_checkout", "ok"),
            ("memory_checkout", "error"),
        ]
        assert captured[0].payload["argument_keys"] == ["payload", "type"]
        assert all(e.payload["capture"] == "lifecycle" and e.actor == "zaxy-mcp" for e in captured)
        assert "zebra-unique-value" not in json.dumps([e.payload for e in captured])
        assert captured[2].payload["error_code"] == "invalid_request"
        hits = fabric.query("memory_checkout memory_append ok", sessions=["s1"]).hits
        assert all(hit.event_type != "tool.call.completed" for hit in hits)


async def test_capture_can_be_switched_off(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MCP_LIFECYCLE_CAPTURE_ENABLED", "false")
    root = tmp_path / "eventloom"
    app = make_app(root)
    try:
        async with connected(app) as client:
            await ok(client, "memory_append", {"type": "note.recorded", "payload": {"text": "hello"}})
            assert (await ok(client, "memory_capabilities"))["server"]["lifecycle_capture"] is False
    finally:
        app.close()
    with MemoryFabric.from_path(root) as fabric:
        assert [e.type for e in fabric.replay("s1")] == ["note.recorded"]


async def test_feeling_of_knowing_predicts_from_memory_and_leaves_a_marker(app) -> None:
    async with connected(app) as client:
        await ok(
            client,
            "memory_append",
            {"type": "fact.asserted", "payload": {"subject": "payments-service", "fact": "retries capped at 5"}},
        )
        likely = await ok(client, "memory_feeling_of_knowing", {"query": "how often does payments-service retry?"})
        unlikely = await ok(client, "memory_feeling_of_knowing", {"query": "favourite colour of the mascot"})
        assert likely["verdict"] == "likely" and unlikely["verdict"] == "unlikely"
        assert likely["experimental"] is True and likely["signals"]["entity_matches"] == ["payments-service"]
        replay = await ok(client, "memory_replay", {})
        markers = [e for e in replay["events"] if e["type"] == "metacognition.fok.predicted"]
        assert [m["payload"]["verdict"] for m in markers] == ["likely", "unlikely"]
        assert markers[0]["citation"] == likely["marker"]


async def test_lifecycle_tools_turns_subagents_and_skills(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full")
    try:
        await _lifecycle_scenario(app)
    finally:
        app.close()


async def _lifecycle_scenario(app) -> None:
    async with connected(app) as client:
        await ok(client, "memory_append", {"type": "fact.asserted", "payload": {"key": "cap", "fact": "cap is 5"}})
        await ok(client, "memory_checkout", {"query": "cap"})
        await ok(client, "memory_append", {"type": "fact.asserted", "payload": {"key": "cap", "fact": "cap is 7"}})
        turn = await ok(
            client,
            "context_after_turn",
            {
                "user_text": "raise the cap",
                "assistant_text": "Raised it to 7.",
                "tools_used": [{"name": "Edit", "summary": "config.py"}],
            },
        )
        assert turn["since"]["basis"] == "last_checkout" and len(turn["recorded"]) == 3
        assert [item["summary"] for item in turn["new_or_updated"]] == ["cap is 7"]
        assert turn["superseded"][0]["summary"] == "cap is 5"

        await ok(client, "memory_append", {"session_id": "sub-1", "type": "task.created", "payload": {"task_id": "T9"}})
        cleanup = await ok(
            client,
            "subagent_cleanup",
            {
                "subagent_id": "researcher",
                "status": "completed",
                "summary": "read the docs",
                "subagent_session": "sub-1",
            },
        )
        assert cleanup["handed_over"] == ["T9"] and cleanup["event"].startswith("eventloom://s1/")
        bootstrap = await ok(client, "memory_bootstrap", {})
        assert "T9" in bootstrap["prompt"]

        await ok(client, "memory_skill", {"action": "proposed", "skill": "deploy", "description": "make deploy"})
        applied = await ok(client, "memory_skill", {"action": "applied", "skill_id": "deploy", "task": "T9"})
        assert (applied["type"], applied["version"]) == ("skill.applied", "1")
        await ok(client, "memory_skill", {"action": "deprecated", "skill_id": "deploy", "reason": "CI does it"})
        gone = await error(client, "memory_skill", {"action": "applied", "skill_id": "nothing"})
        assert gone["code"] == "not_found"
        needs_summary = await error(client, "memory_skill", {"action": "proposed", "skill_id": "x"})
        assert needs_summary["field"] == "summary"
        hits = await ok(client, "memory_verbatim", {"query": "raise the cap"})
        assert turn["recorded"][0] in [hit["citation"] for hit in hits["hits"]]
