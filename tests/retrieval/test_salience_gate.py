"""Pins, restore and the write-time encoding gate through the Python API, the MCP server and the CLI: events
only (rebuilt by replay), tagging never dropping, and structured errors for memories that do not exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_zaxy_json
from tests.mcp.conftest import connected, make_app, ok
from zaxy_agents.errors import InvalidRequestError, NotFoundError
from zaxy_agents.fabric import MemoryFabric

NOTE = "Reviewed the atlas deployment checklist with the team"


def test_pin_restore_and_gate_through_the_python_api(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        fabric.append(
            "p", "fact.asserted", {"key": "legacy port", "fact": "legacy port is 7001", "valid_from": "2024-01-15"}
        )
        fabric.append("p", "note.recorded", {"text": NOTE})
        with pytest.raises(NotFoundError) as missing:
            fabric.pin("p", "no such memory")
        assert missing.value.field == "entity_name"
        assert fabric.pin("p", "legacy port", reason="audit").type == "memory.pinned"
        hit = fabric.query("legacy port", sessions=["p"], retrieval_profile="full").hits[0]
        assert hit.score_explanation["attenuation"]["exempt"] == "pinned"
        fabric.unpin("p", "legacy port")
        assert fabric.query("legacy port", sessions=["p"], retrieval_profile="full").hits[0].attenuated
        fabric.restore("p", "legacy port")
        assert not fabric.query("legacy port", sessions=["p"], retrieval_profile="full").hits[0].attenuated

        assert fabric.encoding_gate("p", "note.recorded", {"text": NOTE})["tag"] == "redundant"
        assert fabric.encoding_gate("p", "note.recorded", {"text": "Kubernetes upgrade is blocked"})["tag"] == "novel"
        duplicate = fabric.append_gated("p", "note.recorded", {"text": NOTE})
        assert duplicate.payload["encoding_gate"]["tag"] == "redundant"  # tagged, still appended
        assert duplicate.payload["encoding_gate"]["against"].startswith("eventloom://p/events/2#")
        assert [e.seq for e in fabric.replay("p")][-1] == duplicate.seq
        with pytest.raises(InvalidRequestError) as forged:
            fabric.append_gated("p", "note.recorded", {"text": "x", "encoding_gate": {"tag": "novel"}})
        assert forged.value.field == "payload.encoding_gate"


async def test_mcp_append_with_the_gate(tmp_path: Path) -> None:
    app = make_app(tmp_path / "loom", profile="core", capture=False, session_id="p")
    try:
        async with connected(app) as client:
            first = await ok(client, "memory_append", {"event_type": "note.recorded", "payload": {"text": NOTE}})
            assert "encoding_gate" not in first
            again = await ok(
                client,
                "memory_append",
                {"event_type": "note.recorded", "payload": {"text": NOTE}, "encoding_gate": True},
            )
            assert (
                again["encoding_gate"]["tag"] == "redundant" and again["encoding_gate"]["against"] == first["citation"]
            )
            # folded: the duplicate reinforces the memory it repeats instead of competing with it
            assert again["encoding_gate"]["reinforces"] == {"entity_name": "note.recorded #1", "entity_type": "event"}
            found = await ok(client, "memory_query", {"query": NOTE, "retrieval_profile": "full"})
            assert [hit["citation"] for hit in found["hits"]] == [first["citation"]]
            assert found["hits"][0]["salience"]["reinforcement"] > 1.0
            replayed = await ok(client, "memory_replay", {"session_id": "p"})
            assert [e["seq"] for e in replayed["events"]] == [first["seq"], again["seq"]]  # still in the log
            # a near copy with one value changed is tagged redundant but never folded: the new value is not lost
            long = "the atlas nightly export job writes parquet files to bucket {} every night at two"
            await ok(client, "memory_append", {"event_type": "note.recorded", "payload": {"text": long.format(7)}})
            near = await ok(
                client,
                "memory_append",
                {"event_type": "note.recorded", "payload": {"text": long.format(8)}, "encoding_gate": True},
            )
            assert near["encoding_gate"]["tag"] == "redundant" and "reinforces" not in near["encoding_gate"]
            found = await ok(client, "memory_query", {"query": "atlas nightly export bucket 8"})
            assert near["citation"] in [hit["citation"] for hit in found["hits"]]
    finally:
        app.close()
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:  # replay from scratch: the same fold
        fabric.reproject()
        assert [h.citation for h in fabric.query(NOTE, sessions=["p"], k=3).hits][:1] == [first["citation"]]
        assert again["citation"] not in [h.citation for h in fabric.query(NOTE, sessions=["p"], k=10).hits]


def test_cli_append_with_the_gate_and_the_gate_lane(tmp_path: Path) -> None:
    root = str(tmp_path / "loom")
    code, _ = run_zaxy_json("memory", "append", NOTE, "--kind", "note", "-s", "p", "--eventloom-path", root)
    assert code == 0
    code, again = run_zaxy_json(
        "memory", "append", NOTE, "--kind", "note", "-s", "p", "--encoding-gate", "--eventloom-path", root
    )
    assert code == 0 and again["event"]["payload"]["encoding_gate"]["tag"] == "redundant"
    code, lane = run_zaxy_json("benchmark", "gate", "--size", "6")
    assert code == 0 and lane["passed"] and list(lane["profiles"]) == ["plain", "balanced", "full"]
    plain = lane["profiles"]["plain"]
    assert plain["recall@5_gate_on"] == plain["recall@5_gate_off"] and plain["novel_tagged_redundant"] == 0
    assert plain["confusion"]["redundant"]["redundant"] >= 1
    # folded: duplicates reinforce the memory they repeat and no longer crowd the packet
    assert plain["folded_reinforced"] == plain["exact_duplicates"] >= 1
    assert plain["duplicate_evidence_gate_on"] == 0 < plain["duplicate_evidence_gate_off"]


def test_interference_proposes_a_belief_update(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        first = fabric.append("p", "fact.asserted", {"key": "gateway port", "fact": "the public gateway port is 8080"})
        clash = fabric.append_gated(
            "p", "fact.asserted", {"key": "edge port", "fact": "the public gateway port is 9090"}
        )
        assert clash.payload["encoding_gate"]["interferes_with"] == first.citation
        [proposal] = fabric.belief_proposals("p")["items"]
        assert proposal["citations"] == [first.citation, clash.citation] and proposal["review_status"] == "pending"
        facts = {fact.summary for fact in fabric.checkout("public gateway port", session="p").current_facts}
        assert facts == {"the public gateway port is 8080", "the public gateway port is 9090"}  # nothing promoted
        update = fabric.append_gated(
            "p", "fact.asserted", {"key": "gateway port", "fact": "the public gateway port is 7070"}
        )
        assert (
            "interferes_with" not in update.payload["encoding_gate"]
        )  # same identity: a supersession, not interference


async def test_cues_recorded_on_append_and_blended_at_checkout(tmp_path: Path) -> None:
    app = make_app(tmp_path / "loom", profile="core", capture=False, session_id="p")
    try:
        async with connected(app) as client:
            for text, workspace in (
                ("deploy needs the staging flag", "billing-api"),
                ("deploy needs the canary flag", "search-api"),
            ):
                await ok(
                    client,
                    "memory_append",
                    {"event_type": "note.recorded", "payload": {"text": text}, "cues": {"workspace": workspace}},
                )
            arguments = {"query": "deploy flag", "retrieval_profile": "full", "cues": {"workspace": "search-api"}}
            packet = await ok(client, "memory_checkout", arguments)
            assert packet["diagnostics"]["retrieval_profile"]["cue_matched"] == 1
            assert "canary" in packet["evidence"][0]["text"] and "search-api" not in packet["evidence"][0]["text"]
            assert packet["evidence"][0]["score_explanation"]["boosts"]["cue_overlap"] == 1.5
            plain = await ok(client, "memory_checkout", {**arguments, "retrieval_profile": "plain"})
            assert "cue_overlap" not in plain["evidence"][0]["score_explanation"]["boosts"]
            refused = await client.call_tool("memory_checkout", {"query": "x", "cues": {"repo": "y"}})
            assert refused.isError  # the MCP schema lists the four seed names only
            for workspace, first in (("search-api", "canary"), ("billing-api", "staging")):
                found = await ok(client, "memory_query", {"query": "deploy flag", "cues": {"workspace": workspace}})
                assert first in found["hits"][0]["text"]  # the default profile blends cues
                assert found["hits"][0]["score_explanation"]["boosts"]["cue_overlap"] == 1.5
    finally:
        app.close()
    with MemoryFabric.from_path(tmp_path / "loom") as fabric, pytest.raises(InvalidRequestError) as raised:
        fabric.query("deploy", cues={"colour": "y"})  # (repo and task are other names for workspace and mission)
    assert raised.value.field == "cues.colour"


def test_checkout_surfacing_is_weak_reinforcement_only_when_salience_ranks(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        fabric.append("p", "fact.asserted", {"key": "gateway port", "fact": "gateway port is 8080"})
        fabric.checkout("gateway port", session="p", retrieval_profile="balanced")
        assert [event.type for event in fabric.replay("p")] == ["fact.asserted"]  # balanced reads only
        before = fabric.checkout("gateway port", session="p", retrieval_profile="full").diagnostics.salience[0]
        [*_, surfaced] = fabric.replay("p")
        assert surfaced.type == "memory.surfaced" and surfaced.payload["memories"] == [
            {"entity_name": "gateway port", "entity_type": "fact"}
        ]
        after = fabric.checkout("gateway port", session="p", retrieval_profile="full").diagnostics.salience[0]
        assert before["reinforcement"] == 1.0 and after["reinforcement"] == pytest.approx(1.0953, abs=1e-4)
        fabric.checkout("gateway port", session="p", retrieval_profile="full", as_of="2020-01-01")
        assert [event.type for event in fabric.replay("p")].count("memory.surfaced") == 2  # a past view records none


def test_the_fold_never_loses_another_identity_or_a_revert(tmp_path: Path) -> None:
    """Only an exact copy (the same payload, cues aside) of a current memory of the same identity folds: the same
    words under another fact key or with another field, or a return to a superseded value, are tagged redundant
    but projected as the news they are."""
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        fabric.append("s", "fact.asserted", {"key": "db.port", "fact": "5432"})
        other = fabric.append_gated("s", "fact.asserted", {"key": "cache.port", "fact": "5432"})
        same = fabric.append_gated("s", "fact.asserted", {"key": "db.port", "fact": "5432"})
        assert other.payload["encoding_gate"]["tag"] == same.payload["encoding_gate"]["tag"] == "redundant"
        assert "reinforces" not in other.payload["encoding_gate"]
        assert same.payload["encoding_gate"]["reinforces"] == {"entity_name": "db.port", "entity_type": "fact"}
        dated = fabric.append_gated(
            "s", "fact.asserted", {"key": "db.port", "fact": "5432", "valid_from": "2026-01-01"}
        )
        assert "reinforces" not in dated.payload["encoding_gate"]  # the same words, another field: not a copy
        fabric.append("s", "fact.asserted", {"key": "db.port", "fact": "6543"})
        revert = fabric.append_gated("s", "fact.asserted", {"key": "db.port", "fact": "5432"})
        assert "reinforces" not in revert.payload["encoding_gate"]
        current = {h.entity["name"]: h.text for h in fabric.query("5432 6543 port", sessions=["s"]).hits}
        assert current == {"cache.port": "5432", "db.port": "5432"}  # both identities; the revert is current
