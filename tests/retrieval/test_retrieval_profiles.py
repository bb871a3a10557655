"""Retrieval profiles (plain, balanced, full) through every surface, and the attenuation floor they switch on:
labelled in explicit search, left out of checkout, pinned and authority-bearing memories exempt, restorable, and
rebuilt the same by replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_zaxy_json
from tests.mcp.conftest import connected, make_app, ok
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric

OLD = "2024-01-15T09:00:00Z"


def _memory(fabric: MemoryFabric) -> None:
    fabric.append("p", "fact.asserted", {"key": "gateway port", "fact": "gateway port is 8080"})
    fabric.append(
        "p", "fact.asserted", {"key": "legacy port", "fact": "legacy gateway port is 7001", "valid_from": OLD}
    )
    fabric.append(
        "p", "decision.recorded", {"topic": "gateway owner", "decision": "gateway owned by ops", "valid_from": OLD}
    )


def _attenuated(fabric: MemoryFabric, profile: str) -> dict[str, bool]:
    hits = fabric.query("gateway port owner", sessions=["p"], retrieval_profile=profile).hits
    return {hit.text: hit.attenuated for hit in hits}


def test_profiles_switch_features_and_the_floor_is_a_ranking_policy(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        _memory(fabric)
        plain = fabric.query("gateway port", sessions=["p"], retrieval_profile="plain")
        assert plain.retrieval_profile == {
            "name": "plain",
            "salience": False,
            "ppr": False,
            "attenuation_floor": 0.0,
            "cue_weight": 0.0,
        }
        assert all("salience" not in hit.score_explanation["boosts"] for hit in plain.hits)
        assert "ppr" not in plain.lane_counts
        assert fabric.query("gateway port", sessions=["p"]).retrieval_profile["name"] == "balanced"
        full = fabric.query("gateway port", sessions=["p"], retrieval_profile="full")
        assert all("salience" in hit.score_explanation["boosts"] for hit in full.hits if hit.entity)
        # explicit search keeps the old fact, labelled; the decision (authority) is exempt
        assert _attenuated(fabric, "plain") == dict.fromkeys(_attenuated(fabric, "plain"), False)
        labels = _attenuated(fabric, "full")
        assert labels["legacy gateway port is 7001"] is True
        assert labels["gateway port is 8080"] is False
        assert labels["gateway owned by ops"] is False
        # checkout (default ranking) leaves it out and counts it
        packet = fabric.checkout("legacy gateway port", session="p", retrieval_profile="full")
        assert "legacy gateway port is 7001" not in packet.prompt
        assert packet.diagnostics.retrieval_profile["attenuated_excluded"] == 1
        assert packet.retention.attenuated_excluded == 1
        assert "legacy gateway port is 7001" in fabric.checkout("legacy gateway port", session="p").prompt
        with pytest.raises(InvalidRequestError) as raised:
            fabric.checkout("x", session="p", retrieval_profile="fancy")
        assert raised.value.field == "retrieval_profile"


def test_pin_unpin_restore_and_replay(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        _memory(fabric)
        fabric.append("p", "memory.pinned", {"entity_name": "legacy port", "entity_type": "fact", "reason": "audit"})
        hits = fabric.query("legacy gateway port", sessions=["p"], retrieval_profile="full").hits
        assert not [hit for hit in hits if "pinned" in hit.text]  # the pin is a marker, not a memory
        pinned = next(hit for hit in hits if hit.text == "legacy gateway port is 7001")
        assert pinned.score_explanation["attenuation"]["exempt"] == "pinned" and not pinned.attenuated
        fabric.append("p", "memory.unpinned", {"entity_name": "legacy port", "entity_type": "fact"})
        assert _attenuated(fabric, "full")["legacy gateway port is 7001"] is True
        fabric.append("p", "memory.restored", {"entity_name": "legacy port", "entity_type": "fact"})
        assert _attenuated(fabric, "full")["legacy gateway port is 7001"] is False
        packet = fabric.checkout("legacy gateway port", session="p", retrieval_profile="full")
        assert "legacy gateway port is 7001" in packet.prompt
        salience = {row["name"]: row for row in packet.diagnostics.salience}
        assert salience["legacy port"]["reinforcement"] > 1.0  # restore is strong reinforcement, shown per memory
        before = fabric.query("gateway port owner", sessions=["p"], retrieval_profile="full").model_dump()
        fabric.reproject()
        after = fabric.query("gateway port owner", sessions=["p"], retrieval_profile="full").model_dump()
        strip = lambda r: [(h["citation"], h["attenuated"], h["salience"]) for h in r["hits"]]  # noqa: E731
        assert strip(after) == strip(before)  # salience and attenuation are rebuilt by replay


def test_cli_retrieval_profile(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        _memory(fabric)
    code, query = run_zaxy_json(
        "memory", "query", "legacy gateway port", "--retrieval-profile", "full", "--eventloom-path", str(root)
    )
    assert code == 0 and query["retrieval_profile"]["name"] == "full"
    assert [hit["attenuated"] for hit in query["hits"] if "legacy" in hit["text"]] == [True]
    code, packet = run_zaxy_json(
        "memory", "checkout", "gateway port", "-s", "p", "--retrieval-profile", "plain", "--eventloom-path", str(root)
    )
    assert code == 0 and packet["diagnostics"]["retrieval_profile"]["name"] == "plain"
    code, error = run_zaxy_json("memory", "query", "x", "--retrieval-profile", "fancy", "--eventloom-path", str(root))
    assert code != 0 and error["error"]["field"] == "retrieval_profile"


async def test_mcp_retrieval_profile(tmp_path: Path) -> None:
    app = make_app(tmp_path / "loom", profile="core", capture=False, session_id="p")
    try:
        async with connected(app) as client:
            for event_type, payload in (
                ("fact.asserted", {"key": "gateway port", "fact": "gateway port is 8080"}),
                ("fact.asserted", {"key": "legacy port", "fact": "legacy gateway port is 7001", "valid_from": OLD}),
            ):
                await ok(client, "memory_append", {"event_type": event_type, "payload": payload})
            packet = await ok(client, "memory_checkout", {"query": "legacy gateway port", "retrieval_profile": "full"})
            assert packet["diagnostics"]["retrieval_profile"]["attenuated_excluded"] == 1
            found = await ok(client, "memory_query", {"query": "legacy gateway port", "retrieval_profile": "full"})
            assert [hit.get("attenuated", False) for hit in found["hits"] if "legacy" in hit["text"]] == [True]
            assembled = await ok(client, "context_assemble", {"query": "gateway port", "retrieval_profile": "plain"})
            assert assembled["items"]
            refused = await client.call_tool("memory_query", {"query": "x", "retrieval_profile": "fancy"})
            assert refused.isError
    finally:
        app.close()


def test_docs_example_runs(tmp_path: Path) -> None:
    """docs/retrieval.md's retrieval-profile example, as printed there."""
    import re
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    text = (REPO_ROOT / "docs" / "retrieval.md").read_text()
    [block] = [b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "retrieval_profile=" in b]
    result = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "'attenuated_excluded': 1" in lines[0]
    assert "('legacy port is 7001', True)" in lines[1]
    assert lines[2] == "0"


def test_docs_cue_example_prints_what_it_says(tmp_path: Path) -> None:
    """docs/retrieval.md's cue example: its printed lines are the comments under it."""
    import re
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    text = (REPO_ROOT / "docs" / "retrieval.md").read_text()
    [block] = [b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "cues=cues" in b]
    result = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    expected = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    assert result.stdout.splitlines() == expected
