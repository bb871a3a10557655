"""Zaxy's own activity is never evidence of the user's work (issue 17): ``propose_from_log`` through a real MCP
client, with the server's lifecycle capture on, proposes no step, procedure or episode part made of memory_*
calls — neither the server's own ``capture: "lifecycle"`` events nor a host hook's record of ``mcp__zaxy__*``."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.conftest import connected, make_app, ok

USER_WORK = [
    ("tool.call.completed", {"tool": "read_file"}),
    ("file.edit.applied", {"path": "billing/db.py"}),
    ("command.completed", {"command": "pytest -q", "exit_code": 0}),
    ("task.completed", {"task_id": "T-1"}),
]


async def test_propose_from_log_ignores_zaxy_memory_tool_lifecycle_events(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full")  # lifecycle capture on (the default)
    try:
        async with connected(app) as client:
            for round_ in range(2):
                await ok(client, "memory_checkout", {"query": "what is next?"})
                # a host hook's record of the agent calling Zaxy through its MCP server name
                await ok(
                    client,
                    "memory_append",
                    {"type": "tool.call.completed", "payload": {"tool": "mcp__zaxy__memory_checkout"}},
                )
                await ok(client, "memory_consolidation_status", {})
                for kind, payload in USER_WORK:
                    await ok(client, "memory_append", {"type": kind, "payload": {**payload, "round": round_}})
            replayed = await ok(client, "memory_replay", {"limit": 50})
            lifecycle = [e for e in replayed["events"] if e["payload"].get("capture") == "lifecycle"]
            assert lifecycle, "the server's lifecycle capture must be on for this test"
            proposed = await ok(client, "memory_consolidation_propose_from_log", {"dry_run": True})
        procedures = [p for p in proposed["proposals"] if p["candidate_type"] == "procedure"]
        assert [p["title"] for p in procedures] == ["Procedure: read_file → edit .py → $ pytest"] * 2
        for proposal in proposed["proposals"]:
            assert "memory_" not in proposal["title"] and "memory_" not in proposal.get("summary", ""), proposal
        assert proposed["segment_count"] == 2
        assert all(segment["events"] == len(USER_WORK) for segment in proposed["segments"])
    finally:
        app.close()
