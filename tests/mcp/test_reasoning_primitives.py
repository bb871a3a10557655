"""Reasoning-loop primitives through the real MCP client: calling a primitive tool records a
reasoning.primitive.called observation (primitive, deterministic phase, status, result and cited-evidence
counts), checkout reports diagnostics.reasoning_primitives with the seed's guidance, and nobody can forge one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp.conftest import connected, error, make_app, ok
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric


async def test_primitive_calls_are_observed_and_reported(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full", capture=False, session_id="agent")
    try:
        async with connected(app) as client:
            fact = await ok(
                client,
                "memory_append",
                {"event_type": "fact.asserted", "payload": {"key": "launch date", "fact": "Launch is on March 3"}},
            )
            await ok(client, "memory_claim_confidence", {"claim_key": "fact:launch date"})
            await ok(client, "memory_confidence", {"operation": "trajectory", "claim_key": "fact:launch date"})
            await ok(client, "memory_known_unknowns", {})
            await error(client, "memory_claim_confidence", {"claim_key": "fact:x", "rationale": "why"})  # not observed
            await ok(
                client,
                "memory_append",
                {
                    "event_type": "outcome.explained",
                    "payload": {
                        "cause": {"name": "launch date", "entity_type": "fact"},
                        "effect": {"name": "press release", "entity_type": "artifact"},
                        "relation_type": "caused",
                        "confidence": 0.6,
                        "evidence": {"source_event_seq": fact["seq"], "source_event_hash": fact["hash"]},
                    },
                },
            )
            await ok(client, "memory_checkout", {"query": "when is the launch?"})  # not a primitive
            replay = await ok(client, "memory_replay", {})
            observed = [e["payload"] for e in replay["events"] if e["type"] == "reasoning.primitive.called"]
            assert [(o["primitive"], o["phase"], o["status"]) for o in observed] == [
                ("get_claim_confidence", "planning", "ok"),
                ("confidence_trajectory", "review", "empty"),  # no assessment yet
                ("list_known_unknowns", "planning", "empty"),
                ("explain_outcome", "review", "ok"),
            ]
            assert observed[0]["cited_evidence_count"] >= 1 and fact["citation"] in observed[0]["citations"]
            assert all(o["authority_status"] == "non_authoritative" for o in observed)
            packet = await ok(client, "memory_checkout", {"query": "when is the launch?"})
            block = packet["diagnostics"]["reasoning_primitives"]
            assert block["context_count"] == 4 and block["authority_status"] == "non_authoritative"
            assert block["phase_counts"] == {"planning": 2, "review": 2}
            assert block["primitive_counts"] == {
                "confidence_trajectory": 1,
                "explain_outcome": 1,
                "get_claim_confidence": 1,
                "list_known_unknowns": 1,
            }
            assert "treat primitive observations as replayable reasoning trace evidence" in packet["prompt"]
            assert [f["summary"] for f in packet["current_facts"]] == ["Launch is on March 3"]
            forged = await error(
                client,
                "memory_append",
                {"event_type": "reasoning.primitive.called", "payload": {"primitive": "x", "phase": "review"}},
            )
            assert forged["field"] == "event_type"
    finally:
        app.close()


def test_the_contract_routes_each_primitive_to_its_phase(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        payload = {
            "primitive": "get_claim_confidence",
            "phase": "reflection",
            "status": "ok",
            "result_count": 1,
            "cited_evidence_count": 0,
            "tool": "memory_claim_confidence",
            "authority_status": "non_authoritative",
        }
        with pytest.raises(InvalidRequestError, match="planning"):
            memory.append("s", "reasoning.primitive.called", payload)
        assert memory.observe_primitive("s", "memory_checkout", {"query": "x"}, result={}) is None
        seen = memory.observe_primitive("s", "memory_known_unknowns", {}, result={"items": [1, 2]})
        assert seen is not None and (seen["phase"], seen["status"]) == ("planning", "ok")
