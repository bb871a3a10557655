"""Synthesis tools through the real MCP client: the checkout's diagnostics.synthesis, memory_synthesis_artifact
(artifact once, candidate outcome), memory_synthesis_evidence (row feedback), the gate on memory_append, and the
checkout's session owning the artifact (over HTTP it must be the caller's)."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.conftest import connected, error, make_app, ok
from zaxy_agents.mcp.caller import Caller

TOOLS = ["memory_synthesis_artifact", "memory_synthesis_evidence"]
QUESTION = "How much did we spend on the release party in total?"


async def test_artifact_and_evidence_over_mcp(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full", capture=False)
    try:
        async with connected(app) as client:
            assert set(TOOLS) <= {tool.name for tool in (await client.list_tools()).tools}
            for text in ("Release party catering cost $1,200.", "Release party venue cost $800."):
                await ok(client, "memory_append", {"event_type": "note.recorded", "payload": {"text": text}})
            checkout = await ok(client, "memory_checkout", {"query": QUESTION})
            synthesis = checkout["diagnostics"]["synthesis"]
            top = synthesis["answer_candidates"][0]
            assert (top["candidate_type"], top["answer_text"], top["rank"]) == ("sum", "$2,000", 1)
            assert {"fact_id", "source_group", "citation", "value", "label", "reason"} <= set(
                synthesis["ledger_rows"][0]
            )
            recorded = await ok(
                client, "memory_synthesis_artifact", {"checkout": checkout, "candidate": top, "outcome": "used"}
            )
            assert recorded["created"] and recorded["outcome"]["event_type"] == "memory.synthesis.used"
            assert recorded["session"] == "s1" and recorded["authority_status"] == "non_authoritative"
            row = synthesis["ledger_rows"][1]
            feedback = await ok(
                client,
                "memory_synthesis_evidence",
                {"checkout": checkout, "row": row["row_id"], "outcome": "excluded", "reason": "venue was refunded"},
            )
            assert feedback["event_type"] == "memory.evidence.excluded" and not feedback["artifact_created"]
            assert feedback["artifact_id"] == recorded["artifact_id"] and feedback["row_citation"] == row["citation"]
            edited = {**checkout, "diagnostics": {**checkout["diagnostics"], "synthesis": {**synthesis}}}
            edited["diagnostics"]["synthesis"]["answer_candidates"] = [{**top, "answer_value": 5}]
            refused = await error(client, "memory_synthesis_artifact", {"checkout": edited})
            assert refused["code"] == "conflict" and refused["field"].endswith("answer_candidates")
            other = await error(client, "memory_synthesis_artifact", {"checkout": checkout, "session_id": "s2"})
            assert other["field"] == "session_id"
            lone = await error(client, "memory_synthesis_artifact", {"checkout": checkout, "outcome": "used"})
            assert lone["field"] == "candidate"
            forged = await error(
                client, "memory_append", {"event_type": "memory.synthesis.used", "payload": {"outcome": "used"}}
            )
            assert forged["field"] == "event_type" and "memory_synthesis_artifact" in forged["message"]
            replay = await ok(client, "memory_replay", {})
            types = [event["type"] for event in replay["events"]]
            assert types.count("memory.synthesis.artifact.created") == 1
            assert {"memory.synthesis.used", "memory.evidence.excluded"} <= set(types)
    finally:
        app.close()


async def test_the_checkout_session_must_be_the_callers_over_http(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full", capture=False)
    try:
        alice = Caller(session="alice", transport="http", restricted=True, admin=False)
        bob = Caller(session="bob", transport="http", restricted=True, admin=False)
        await app.call_tool("memory_append", {"type": "note.recorded", "payload": {"text": "Taxi cost $35."}}, alice)
        checkout = await app.call_tool("memory_checkout", {"query": "How much did the taxi cost?"}, alice)
        packet = checkout.structuredContent
        assert packet["diagnostics"]["synthesis"]["answer_candidates"]
        denied = await app.call_tool("memory_synthesis_artifact", {"checkout": packet}, bob)
        assert denied.isError and denied.structuredContent["error"]["code"] == "unauthorized"
        assert not (await app.call_tool("memory_synthesis_artifact", {"checkout": packet}, alice)).isError
    finally:
        app.close()
