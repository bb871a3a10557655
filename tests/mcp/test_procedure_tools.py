"""Planning from procedures through the real MCP client: memory_plan_from_procedures (cited steps, diagnostic and
excluded procedures, read-only, observed as a planning primitive) and memory_skill_from_procedure (an accepted
procedure becomes a skill proposal; a pending one is refused)."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.conftest import connected, error, make_app, ok

TOOLS = ["memory_plan_from_procedures", "memory_skill_from_procedure"]


async def test_plan_and_skill_proposal_over_mcp(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full", capture=False, session_id="dev")
    try:
        async with connected(app) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(TOOLS) <= set(tools) and tools["memory_plan_from_procedures"].annotations.readOnlyHint
            run = await ok(
                client,
                "memory_append",
                {"event_type": "command.completed", "payload": {"command": "make release", "exit_code": 0}},
            )
            candidate = await ok(
                client,
                "memory_consolidation_candidate",
                {
                    "candidate_type": "procedure",
                    "title": "Cut a release: tag, build, publish",
                    "summary": "git tag, make release, twine upload",
                    "source_events": [run["citation"]],
                    "confidence": 0.7,
                    "method": "manual",
                },
            )
            before = await ok(client, "memory_plan_from_procedures", {"goal": "cut a release"})
            assert before["plan"] is None and before["diagnostic"][0]["candidate_id"] == candidate["candidate_id"]
            refused = await error(client, "memory_skill_from_procedure", {"candidate_id": candidate["candidate_id"]})
            assert refused["code"] == "conflict" and refused["field"] == "candidate_id"
            await ok(
                client,
                "memory_consolidation_review",
                {"candidate_id": candidate["candidate_id"], "status": "accepted", "rationale": "our release routine"},
            )
            plan = await ok(client, "memory_plan_from_procedures", {"goal": "cut a release"})
            assert plan["plan"]["id"] == candidate["candidate_id"] and plan["plan"]["steps"][0]["citation"]
            assert plan["skill_proposals"][0]["action"] == "memory_skill_from_procedure"
            skill = await ok(
                client,
                "memory_skill_from_procedure",
                {"candidate_id": candidate["candidate_id"], "skill_id": "release"},
            )
            assert (skill["skill_id"], skill["status"]) == ("release", "proposed")
            packet = await ok(client, "memory_checkout", {"query": "how do we cut a release?"})
            assert packet["diagnostics"]["skills"]["count"] == 0  # a proposal is not an applicable skill
            assert "release" in [row["id"] for row in packet["diagnostics"]["procedural_memory"]["diagnostic"]]
            primitives = packet["diagnostics"]["reasoning_primitives"]["primitive_counts"]
            assert primitives["plan_from_procedures"] == 2
    finally:
        app.close()
