"""docs/coordinate.md, claim by claim, where the MCP, HTTP, lane and example tests do not already hold it: on a real
embedded memory (the page's Python surface), the LangGraph memory tools, and the tool registry the MCP server
serves. Each test names the sentence it keeps true."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT
from zaxy_agents.errors import ZaxyError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.mcp import registry

M = "inc-9"
PENDING_CLAIM = "the quokka cache evicts every zebra key"  # words nothing else in memory holds


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemoryFabric]:
    with MemoryFabric.from_path(tmp_path / ".eventloom") as fabric:
        yield fabric


def _mission(memory: MemoryFabric) -> dict[str, Any]:
    log = memory.append("ops", "command.completed", {"command": "grep 500 app.log", "output": "pool timeout"})
    c = memory.coordination
    c.start("Checkout 500s", "Find why checkout fails", mission_id=M, coordinator="lead", reviewers=["sre"])
    for worker in ("db", "net"):
        c.worker_create(M, worker, actor="lead")
    right = c.report_finding(M, "db", "root cause", "DB pool exhausted", evidence=[log.citation])
    pending = c.report_finding(M, "net", "cache", PENDING_CLAIM, evidence=[log.citation])
    return {"log": log, "right": right, "pending": pending}


def _heads(memory: MemoryFabric) -> dict[str, int]:
    return {row.session: row.event_count for row in memory.sessions()}


def test_the_http_column_of_the_tool_table_is_what_the_server_enforces() -> None:
    """The table's 'over HTTP' column: 'admin token' exactly for the tools the MCP server refuses to the ordinary
    token (tests/coordinate/test_coordinate_http.py drives that refusal over HTTP), and every coordination tool has
    a row."""
    text = (REPO_ROOT / "docs" / "coordinate.md").read_text()
    table = text.split("## Tools (MCP full profile)", 1)[1].split("\n\n", 2)[1]
    rows = dict(re.findall(r"^\| `(coordination_\w+)` \|.*\| (admin token|agent token) \|$", table, re.MULTILINE))
    served = {spec.name: spec for spec in registry.all_tools() if spec.name.startswith("coordination_")}
    assert set(rows) == set(served)
    for name, spec in served.items():
        assert rows[name] == ("admin token" if spec.admin else "agent token"), name


def test_evidence_is_resolved_and_hash_checked_before_the_append(memory: MemoryFabric) -> None:
    """'the eventloom:// citations of the events that support it (each is resolved and its hash checked before
    the append)'."""
    state = _mission(memory)
    before = _heads(memory)
    forged = state["log"].citation[:-12] + "0" * 12
    for evidence in (forged, "eventloom://ops/events/99#" + "0" * 12, "eventloom://nowhere/events/1#" + "0" * 12):
        with pytest.raises(ZaxyError) as refused:
            memory.coordination.report_finding(M, "db", "root cause", "something else", evidence=[evidence])
        assert refused.value.field == "evidence[0]", refused.value
    assert _heads(memory) == before  # a refused call writes nothing


def test_every_approval_decision_is_checked_before_any_is_written(memory: MemoryFabric) -> None:
    """'every decision is checked before any is written'."""
    state = _mission(memory)
    c = memory.coordination
    packet = c.approval_packet(M)
    before = _heads(memory)
    good = {"finding_id": state["right"]["finding_id"], "status": "accepted", "rationale": "the log shows it"}
    bad = {"finding_id": state["pending"]["finding_id"], "status": "maybe", "rationale": "?"}
    with pytest.raises(ZaxyError) as refused:
        c.apply_approval(M, packet["packet_id"], [good, bad], actor="sre")
    assert refused.value.field.startswith("decisions[1]")
    assert _heads(memory) == before
    assert c.merge_brief(M)["counts"]["accepted"] == 0


def test_a_pending_finding_is_never_served_as_memory(memory: MemoryFabric) -> None:
    """'coordination.* events are not projected into the shared graph, so a general memory_checkout never serves a
    worker's pending finding as memory'."""
    state = _mission(memory)
    worker_session = f"coordinate.{M}.net"
    assert state["pending"]["citation"].startswith(f"eventloom://{worker_session}/")
    question = "does the quokka cache evict zebra keys?"
    assert memory.query(question, sessions=[worker_session, f"coordinate.{M}"]).hits == []
    for session, scope in ((worker_session, None), ("ops", ["*"])):
        packet = memory.checkout(question, session=session, scope=scope)
        assert PENDING_CLAIM not in packet.prompt and state["pending"]["citation"] not in packet.prompt
        assert packet.quality.answerability != "answer_from_memory"


def test_the_langgraph_memory_tools_reserve_coordination_events(memory: MemoryFabric) -> None:
    """'the LangGraph memory tools treat them as reserved'."""
    from zaxy_agents.langgraph.tools import memory_tools

    _mission(memory)
    before = _heads(memory)
    [append] = [t for t in memory_tools(memory, session="ops") if t.name == "memory_append"]
    forged = {"type": "coordination.finding.promoted", "payload": {"mission_id": M, "finding_id": "f"}}
    answer = str(append.invoke(forged))
    assert "reserved" in answer and "coordination.finding.promoted" in answer
    assert _heads(memory) == before


def test_a_mission_read_replays_only_the_missions_sessions(memory: MemoryFabric, monkeypatch) -> None:
    """'Mission state is read by replay, not from the graph: ... the cost of a read grows with the mission, not
    with the rest of the memory': a read opens the mission's parent session and its workers' sessions, nothing
    else, however much else the memory holds."""
    _mission(memory)
    memory.append_many("elsewhere", [{"type": "note.recorded", "payload": {"n": n}} for n in range(200)])
    log = memory.coordination.log
    read: list[str] = []
    original = type(log).replay

    def spy(self, session, *args, **kwargs):
        read.append(session)
        return original(self, session, *args, **kwargs)

    monkeypatch.setattr(type(log), "replay", spy)
    c = memory.coordination
    c.merge_brief(M)
    c.performance_ledger(M)
    c.approval_packet(M)
    assert read and set(read) <= {f"coordinate.{M}", f"coordinate.{M}.db", f"coordinate.{M}.net"}


def test_a_proof_trace_reverifies_each_step_against_the_log(tmp_path: Path) -> None:
    """'A proof trace ... replays how a promoted claim came to be ... and re-verifies every step against the log
    (verified)': an evidence event whose hash no longer matches (the log edited by hand) fails its step and the
    trace, and only that step."""
    root = tmp_path / ".eventloom"
    with MemoryFabric.from_path(root) as memory:
        state = _mission(memory)
        c = memory.coordination
        c.review_finding(M, state["right"]["finding_id"], "accepted", "the log shows it", reviewer="sre")
        c.promote(M, state["right"]["finding_id"], promoted_by="sre")
        handoff = c.handoff(M, "Raise the pool", actor="lead")
        assert c.proof_trace(M, handoff_id=handoff["handoff_id"])["verified"] is True
    log = root / "ops.jsonl"
    log.write_bytes(log.read_bytes().replace(state["log"].hash.encode(), b"e" * 64, 1))
    with MemoryFabric.from_path(root) as memory:
        trace = memory.coordination.proof_trace(M, handoff_id=handoff["handoff_id"])
    assert trace["verified"] is False
    failed = [step["step"] for step in trace["steps"] if not step["verified"]]
    assert failed == ["evidence"] and trace["steps"][1]["citation"] == state["log"].citation


async def test_memory_append_refuses_every_coordination_type(tmp_path: Path) -> None:
    """'memory_append refuses the coordination.* event types outright (use the tools)': the ones Coordinate
    writes, and any other name in that namespace (over a real MCP client session)."""
    from tests.mcp.conftest import connected, error, make_app, ok

    app = make_app(tmp_path / "eventloom", profile="full", capture=False)
    try:
        async with connected(app) as client:
            for event_type in ("coordination.finding.promoted", "coordination.finding.accepted", "coordination.x"):
                refused = await error(client, "memory_append", {"event_type": event_type, "payload": {"m": M}})
                assert (refused["code"], refused["field"]) == ("invalid_request", "event_type"), event_type
            replay = await ok(client, "memory_replay", {})
            assert replay["events"] == []  # nothing was written
            await ok(client, "memory_append", {"event_type": "coordinationally.fine", "payload": {"m": M}})
    finally:
        app.close()


def test_the_hook_command_takes_the_mission_as_an_option(tmp_path: Path) -> None:
    """'The hook command also takes --mission NAME if you prefer to put it in the hook configuration' (the real
    `zaxy hook-event` with a payload recorded from Claude Code, no ZAXY_MISSION in the environment)."""
    from tests.capture.conftest import Env, hook_payload

    env = Env(tmp_path)
    for name in ("SubagentStart", "SubagentStop"):
        payload = hook_payload("claude-code", name, env.workspace, env.home)
        event = json.loads(payload)["hook_event_name"]
        ran = env.zaxy("hook-event", event, "--client", "claude-code", "--mission", "by-option", stdin=payload)
        assert (ran.returncode, ran.stderr) == (0, ""), ran.stderr
    with MemoryFabric.from_path(env.eventloom) as memory:
        brief = memory.coordination.merge_brief("by-option")
    assert [w["worker_id"] for w in brief["workers"]] and len(brief["findings"]["pending"]) == 1
