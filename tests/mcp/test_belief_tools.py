"""Belief-update proposals through the real MCP client: propose (cited, pending, non-authoritative), checkout's
diagnostics.belief_update_proposals and guidance, review (a disposition, admin over HTTP, never a promotion)."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.conftest import connected, error, make_app, ok
from zaxy_agents.mcp.caller import Caller

TOOLS = ["memory_propose_belief_update", "memory_review_belief_update", "memory_belief_update_proposals"]


async def test_propose_review_and_list(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full", capture=False)
    core = make_app(tmp_path / "core", profile="core", capture=False)
    try:
        async with connected(core) as client:
            assert not set(TOOLS) & {tool.name for tool in (await client.list_tools()).tools}
        async with connected(app) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(TOOLS) <= set(tools) and tools["memory_belief_update_proposals"].annotations.readOnlyHint
            fact = await ok(
                client,
                "memory_append",
                {"event_type": "fact.asserted", "payload": {"key": "db", "fact": "db is MySQL"}},
            )
            note = await ok(
                client, "memory_append", {"event_type": "note.recorded", "payload": {"text": "ops moved db to pg"}}
            )
            proposed = await ok(
                client,
                "memory_propose_belief_update",
                {
                    "claim": "db is Postgres",
                    "rationale": "ops note says the move happened",
                    "confidence": 0.7,
                    "citations": [note["citation"], {"seq": fact["seq"], "hash": fact["hash"]}],
                    "phase": "reflection",
                    "claim_key": "fact:db",
                },
            )
            assert proposed["created"] and proposed["review_status"] == "pending"
            assert proposed["authority_status"] == "non_authoritative"
            packet = await ok(client, "memory_checkout", {"query": "which db do we use?"})
            block = packet["diagnostics"]["belief_update_proposals"]
            assert (block["proposal_count"], block["pending_count"], block["authority_status"]) == (
                1,
                1,
                "non_authoritative",
            )
            assert "treat belief updates as proposals until reviewed and promoted" in packet["prompt"]
            assert [f["summary"] for f in packet["current_facts"]] == ["db is MySQL"]  # not a fact update
            reviewed = await ok(
                client,
                "memory_review_belief_update",
                {"proposal_id": proposed["proposal_id"], "status": "accepted", "rationale": "confirmed"},
            )
            assert reviewed["promoted"] is False and reviewed["proposal"]["review_status"] == "accepted"
            packet = await ok(client, "memory_checkout", {"query": "which db do we use?"})
            assert [f["summary"] for f in packet["current_facts"]] == ["db is MySQL"]
            listed = await ok(client, "memory_belief_update_proposals", {"status": "accepted"})
            assert listed["accepted_count"] == 1 and listed["items"][0]["review_citation"] == reviewed["citation"]
            again = await error(
                client,
                "memory_review_belief_update",
                {"proposal_id": proposed["proposal_id"], "status": "accepted", "rationale": "again"},
            )
            assert again["code"] == "conflict"
            promote = await error(
                client,
                "memory_review_belief_update",
                {"proposal_id": proposed["proposal_id"], "status": "promoted", "rationale": "x"},
            )
            assert promote["field"] == "status"
            uncited = await error(
                client,
                "memory_propose_belief_update",
                {"claim": "x", "rationale": "y", "confidence": 0.5, "citations": []},
            )
            assert uncited["field"] == "citations"
            forged = await error(
                client,
                "memory_append",
                {
                    "event_type": "belief.update.proposed",
                    "payload": {"claim": "x", "review_status": "accepted", "authority_status": "authoritative"},
                },
            )
            assert forged["field"].startswith("payload")
    finally:
        app.close()
        core.close()


async def test_reviews_need_the_admin_token_over_http(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full", capture=False)
    try:
        agent = Caller(session="bob", transport="http", restricted=True, admin=False)
        admin = Caller(session="bob", transport="http", restricted=True, admin=True)
        note = (
            await app.call_tool("memory_append", {"type": "note.recorded", "payload": {"text": "evidence"}}, agent)
        ).structuredContent
        proposed = (
            await app.call_tool(
                "memory_propose_belief_update",
                {"claim": "c", "rationale": "r", "confidence": 0.5, "citations": [note["citation"]]},
                agent,
            )
        ).structuredContent
        review = {"proposal_id": proposed["proposal_id"], "status": "accepted", "rationale": "mine"}
        denied = await app.call_tool("memory_review_belief_update", review, agent)
        assert denied.isError and denied.structuredContent["error"]["code"] == "unauthorized"
        raw = await app.call_tool(
            "memory_append", {"type": "belief.update.reviewed", "payload": {"status": "accepted"}}, agent
        )
        assert raw.isError and raw.structuredContent["error"]["field"] == "event_type"  # no way around the gate
        assert not (await app.call_tool("memory_review_belief_update", review, admin)).isError
    finally:
        app.close()
