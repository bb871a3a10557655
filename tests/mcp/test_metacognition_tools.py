"""Metacognition tools through the real MCP client (in-process memory streams): record and read known unknowns,
confidence assessments, conflict clusters and re-verification needs; checkout's diagnostics.metacognition and
its guardrail; structured errors naming the field."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.conftest import connected, error, make_app, ok

TOOLS = [
    "memory_record_known_unknown",
    "memory_known_unknowns",
    "memory_confidence_trajectory",
    "memory_reverification_needs",
    "memory_claim_confidence",
    "memory_confidence",
]


async def test_full_profile_lists_the_metacognition_tools_and_core_does_not(tmp_path: Path) -> None:
    full = make_app(tmp_path / "full", profile="full", capture=False)
    core = make_app(tmp_path / "core", profile="core", capture=False)
    try:
        async with connected(full) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(TOOLS) <= set(tools)
            assert tools["memory_known_unknowns"].annotations.readOnlyHint is True
            assert tools["memory_record_known_unknown"].annotations.readOnlyHint is False
            schema = tools["memory_record_known_unknown"].inputSchema
            assert schema["additionalProperties"] is False
            assert {"question", "reason", "source_events", "claim_key"} <= set(schema["properties"])
            assert schema["properties"]["source_events"]["minItems"] == 1
            operations = tools["memory_confidence"].inputSchema["properties"]["operation"]["enum"]
            assert operations == ["claim", "trajectory", "reverification", "known_unknowns", "record_known_unknown"]
        async with connected(core) as client:
            assert not set(TOOLS) & {tool.name for tool in (await client.list_tools()).tools}
    finally:
        full.close()
        core.close()


async def test_a_research_agent_records_what_it_does_not_know(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full", capture=False, session_id="research")
    try:
        async with connected(app) as client:
            fact = await ok(
                client,
                "memory_append",
                {"event_type": "fact.asserted", "payload": {"key": "launch date", "fact": "Launch is on March 3"}},
            )
            other = await ok(
                client,
                "memory_append",
                {
                    "event_type": "fact.asserted",
                    "payload": {"key": "launch date", "fact": "Launch is on April 9"},
                    "session_id": "source-b",
                },
            )
            note = await ok(
                client,
                "memory_append",
                {"event_type": "note.recorded", "payload": {"text": "Neither source names the budget owner"}},
            )
            recorded = await ok(
                client,
                "memory_record_known_unknown",
                {
                    "question": "Who owns the marketing budget?",
                    "reason": "no source names an owner",
                    "source_events": [note["citation"]],
                    "claim_key": "fact:budget owner",
                    "priority": "high",
                },
            )
            assert recorded["created"] and recorded["status"] == "open"
            assert recorded["authority_status"] == "non_authoritative"
            again = await ok(
                client,
                "memory_confidence",
                {
                    "operation": "record_known_unknown",
                    "question": "who owns the  marketing budget?",
                    "reason": "asked twice",
                    "source_events": [{"seq": note["seq"], "hash": note["hash"]}],
                    "claim_key": "fact:budget owner",
                },
            )
            assert again["operation"] == "record_known_unknown" and not again["created"]
            assert again["unknown_id"] == recorded["unknown_id"]

            # the guardrail: checkout does not answer an open known unknown from memory
            packet = await ok(client, "memory_checkout", {"query": "Who owns the marketing budget?"})
            block = packet["diagnostics"]["metacognition"]
            assert [u["unknown_id"] for u in block["relevant_known_unknowns"]] == [recorded["unknown_id"]]
            assert packet["quality"]["answerability"] != "answer_from_memory"
            assert any("open known unknown" in warning for warning in packet["warnings"])
            assert any(
                "diagnostic uncertainty signals, not as accepted facts" in line for line in packet["prompt"].split("\n")
            )

            listed = await ok(client, "memory_known_unknowns", {})
            assert listed["open_count"] == 1 and listed["items"][0]["citation"] == recorded["citation"]

            # an assessment point, then the trajectory and the claim's doubts (contradicted across sessions)
            claim = await ok(
                client,
                "memory_claim_confidence",
                {
                    "claim_key": "fact:launch date",
                    "confidence": 0.3,
                    "rationale": "two sources disagree",
                    "source_events": [fact["citation"], other["citation"]],
                    "scope": ["source-b"],
                },
            )
            assert claim["recorded"] and claim["assessed_confidence"] == 0.3 and not claim["supported"]
            assert claim["conflict_cluster"]["status"] == "unresolved"
            assert {m["citation"] for m in claim["conflict_cluster"]["members"]} == {
                fact["citation"],
                other["citation"],
            }
            await ok(
                client,
                "memory_claim_confidence",
                {
                    "claim_key": "fact:launch date",
                    "confidence": 0.8,
                    "rationale": "the press release confirms March 3",
                    "source_events": [fact["citation"]],
                },
            )
            trajectory = await ok(client, "memory_confidence_trajectory", {"claim_key": "fact:launch date"})
            assert [p["confidence"] for p in trajectory["points"]] == [0.3, 0.8]
            assert trajectory["trend"] == "rising" and trajectory["current_confidence"] == 0.8
            needs = await ok(client, "memory_confidence", {"operation": "reverification", "scope": ["source-b"]})
            assert needs["conflict_cluster_count"] == 1
            assert {tuple(n["reasons"]) for n in needs["derived"]} == {("contradicted",)}

            # resolving through the log (memory_append: the contract is checked before the append)
            resolved = await ok(
                client,
                "memory_append",
                {
                    "event_type": "metacognition.known_unknown.resolved",
                    "payload": {
                        "unknown_id": recorded["unknown_id"],
                        "resolution": "dismissed",
                        "rationale": "out of scope for this report",
                        "authority_status": "non_authoritative",
                    },
                },
            )
            listed = await ok(client, "memory_known_unknowns", {"status": "all"})
            assert (listed["open_count"], listed["resolved_count"]) == (0, 1)
            assert listed["items"][0]["resolution_citation"] == resolved["citation"]
    finally:
        app.close()


async def test_bad_input_is_a_structured_error_naming_the_field(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full", capture=False)
    try:
        async with connected(app) as client:
            note = await ok(client, "memory_append", {"event_type": "note.recorded", "payload": {"text": "x"}})
            uncited = await error(
                client, "memory_record_known_unknown", {"question": "q?", "reason": "r", "source_events": []}
            )
            assert uncited["field"] == "source_events"
            dangling = await error(
                client,
                "memory_record_known_unknown",
                {"question": "q?", "reason": "r", "source_events": [note["citation"].replace("/1#", "/9#")]},
            )
            assert dangling["field"].startswith("source_events")
            forged = await error(
                client,
                "memory_append",
                {
                    "event_type": "metacognition.known_unknown.recorded",
                    "payload": {
                        "unknown_id": "unk_" + "0" * 24,
                        "question": "q?",
                        "reason": "r",
                        "source_events": [{"seq": note["seq"], "hash": note["hash"]}],
                        "status": "open",
                        "authority_status": "non_authoritative",
                    },
                },
            )
            assert forged["field"] == "payload" and "unknown_id must be" in forged["message"]
            authoritative = await error(
                client,
                "memory_append",
                {
                    "event_type": "metacognition.confidence.assessed",
                    "payload": {
                        "claim_key": "fact:x",
                        "confidence": 0.9,
                        "rationale": "sure",
                        "source_events": [{"seq": note["seq"], "hash": note["hash"]}],
                        "authority_status": "authoritative",
                    },
                },
            )
            assert authoritative["field"] == "payload.authority_status"
            half = await error(client, "memory_claim_confidence", {"claim_key": "fact:x", "rationale": "why"})
            assert half["field"] == "confidence"
            missing = await error(client, "memory_confidence", {"operation": "trajectory"})
            assert "claim_key" in missing["message"]
            foreign = await error(client, "memory_confidence", {"operation": "known_unknowns", "question": "q?"})
            assert "do not apply" in foreign["message"]
            replay = await ok(client, "memory_replay", {})
            assert [event["type"] for event in replay["events"]] == ["note.recorded"]  # nothing half-written
    finally:
        app.close()
