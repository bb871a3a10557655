"""#25.3: one damaged log never takes the others down, and `zaxy repair` fixes it without touching an event.

A folder holds a healthy session, a file of garbage and a session with garbage in the middle. Through the real
CLI (and a real MCP stdio client, and the real hook sink): sessions, checkout of the healthy session, status,
reproject, export and hook capture keep working and report the damage; replay of a damaged session is a
structured error. `zaxy repair` moves the unreadable bytes to a sidecar, records an event saying so, keeps every
acknowledged event byte for byte (and its citation), and the log verifies and takes appends again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.capture.conftest import Env
from tests.conftest import run_zaxy, run_zaxy_json
from tests.mcp._client import StdioClient, serve_params
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog
from zaxy_agents.storage.files.jsonl_repair import REPAIR_DIR_NAME

GARBAGE = bytes(range(256)) * 3 + b"\n\x00\xff not json at all {{{\n"


def _folder(root: Path) -> dict[str, list[bytes]]:
    with JsonlEventLog(root) as log:
        log.append("good", "fact.asserted", {"fact": "the cache TTL is 300 seconds", "key": "cache-ttl"})
        log.append("good", "decision.recorded", {"decision": "Use Redis for the session cache"})
        log.append_many("mid", [{"type": "note.added", "payload": {"n": i}} for i in range(6)])
    (root / "junk.jsonl").write_bytes(GARBAGE)
    mid = root / "mid.jsonl"
    lines = mid.read_bytes().splitlines(keepends=True)
    lines[2:4] = [b"\x00\x01garbage where two events were\n"]  # events 3 and 4 become unreadable
    mid.write_bytes(b"".join(lines))
    return {"good": (root / "good.jsonl").read_bytes().splitlines(keepends=True), "mid": lines}


def test_every_command_keeps_working_beside_a_damaged_log(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    _folder(root)
    env = {"ZAXY_EVENTLOOM_PATH": str(root)}

    code, body = run_zaxy_json("sessions", env=env)
    assert code == 0
    by_name = {row["session"]: row for row in body["sessions"]}
    assert by_name["good"]["event_count"] == 2 and "damaged" not in by_name["good"]
    assert "not valid JSON" in by_name["junk"]["damaged"]
    human = run_zaxy("sessions", env=env)
    assert human.returncode == 0 and "zaxy repair --session-id junk" in human.stdout

    code, packet = run_zaxy_json("memory", "checkout", "what is the cache TTL?", "-s", "good", env=env)
    assert code == 0 and "300 seconds" in packet["prompt"]
    assert packet["quality"]["answerability"] == "answer_from_memory"  # the damage is elsewhere

    code, status = run_zaxy_json("memory", "status", env=env)
    assert code == 0 and status["sessions"]["good"]["events"] == 2
    assert "damaged" in status["sessions"]["junk"] and "event 3" in status["sessions"]["mid"]["damaged"]

    result = run_zaxy("reproject", env=env)
    assert result.returncode == 0 and "Traceback" not in result.stderr

    code, body = run_zaxy_json("eventloom", "export", "--output-dir", str(tmp_path / "backup"), env=env)
    assert code == 1 and [r["session"] for r in body["exported"]] == ["good"]
    assert sorted(r["session"] for r in body["failed"]) == ["junk", "mid"]
    assert (tmp_path / "backup" / "good.jsonl").exists()

    for session in ("junk", "mid"):
        code, body = run_zaxy_json("replay", "-s", session, env=env)
        assert code == 5 and body["error"]["code"] == "integrity_error", body
        assert "zaxy repair" in body["error"]["remediation"]
        human = run_zaxy("replay", "-s", session, env=env)
        assert human.returncode == 5 and "Traceback" not in human.stderr

    client = StdioClient(serve_params(root, "--session-id", "good"))
    try:
        capabilities = client.ok("memory_capabilities")
    finally:
        client.close()
    assert set(capabilities["damaged_sessions"]) == {"junk", "mid"}


def test_hook_capture_continues_beside_a_damaged_log_and_hooks_status_reports_it(tmp_path: Path) -> None:
    env = Env(tmp_path)
    env.eventloom.mkdir(parents=True)
    (env.eventloom / "junk.jsonl").write_bytes(GARBAGE)
    for name in ("SessionStart-startup", "UserPromptSubmit", "PostToolUse-Bash", "Stop"):
        result = env.hook("claude-code", name)
        assert result.returncode == 0 and result.stderr == "", result.stderr
    captured = [event["type"] for event in env.events(env.session("claude-code"))]
    assert {"hook.session_started", "hook.user_prompt_submitted", "command.completed"} <= set(captured)
    code, status = env.zaxy_json("hooks", "status")
    assert code == 0 and "junk" in status["damaged_sessions"]
    assert status["clients"]["claude-code"]["events"] == len(captured)


def test_repair_sets_unreadable_bytes_aside_and_never_touches_an_event(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    before = _folder(root)
    env = {"ZAXY_EVENTLOOM_PATH": str(root)}
    with JsonlEventLog(root) as log:
        citations = {seq: log.get("mid", seq).citation for seq in (1, 2)}
        later = [json.loads(line) for line in before["mid"][3:]]  # events 5 and 6, readable after the garbage

    code, plan = run_zaxy_json("repair", "--dry-run", env=env)
    assert code == 0 and plan["repaired"] == [] and (root / "junk.jsonl").read_bytes() == GARBAGE

    code, result = run_zaxy_json("repair", "--actor", "ops", env=env)
    assert code == 0 and sorted(result["repaired"]) == ["junk", "mid"], result
    reports = {report["session"]: report for report in result["sessions"]}
    assert reports["good"].get("note") == "nothing to repair"

    junk_sidecar = root / reports["junk"]["sidecars"][0]
    assert junk_sidecar.read_bytes() == GARBAGE and junk_sidecar.parent.name == REPAIR_DIR_NAME
    mid_sidecar = root / reports["mid"]["sidecars"][0]
    assert mid_sidecar.read_bytes() == b"\x00\x01garbage where two events were\n"
    assert (root / "good.jsonl").read_bytes().splitlines(keepends=True) == before["good"]
    mid_lines = (root / "mid.jsonl").read_bytes().splitlines(keepends=True)
    assert mid_lines[:2] == before["mid"][:2] and mid_lines[4:6] == before["mid"][3:5]  # byte for byte

    with JsonlEventLog(root) as log:
        for session in ("good", "junk", "mid"):
            assert log.verify(session).ok, log.verify(session)
        assert {seq: log.get("mid", seq).citation for seq in (1, 2)} == citations
        assert [(e.seq, e.hash) for e in log.replay("mid", 5, 6)] == [(e["seq"], e["hash"]) for e in later]
        erased = [e for e in log.replay("mid", 3, 4)]
        assert all(e.erased and e.payload == {} for e in erased)
        record = log.get("mid", 7)
        assert record.type == "eventloom.repaired" and record.actor == "ops"
        assert record.payload["ranges"][0]["from_seq"] == 3 and record.payload["ranges"][0]["to_seq"] == 4
        assert log.get("junk", 1).type == "eventloom.repaired"
        assert log.append("mid", "note.added", {"after": "repair"}).seq == 8
        assert log.append("junk", "note.added", {"after": "repair"}).seq == 2
    code, body = run_zaxy_json("sessions", env=env)
    assert all("damaged" not in row for row in body["sessions"])
    code, body = run_zaxy_json("repair", env=env)
    assert code == 0 and body["repaired"] == []  # idempotent: nothing left to do
    documented = _doc_verifier()
    for session in ("good", "junk", "mid"):
        documented(root / f"{session}.jsonl", session)


def test_repair_lets_a_log_whose_last_event_was_edited_continue(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with JsonlEventLog(root) as log:
        log.append_many("s", [{"type": "fact.asserted", "payload": {"fact": f"fact {i}"}} for i in range(3)])
    path = root / "s.jsonl"
    path.write_bytes(path.read_bytes().replace(b"fact 2", b"fact 9"))
    env = {"ZAXY_EVENTLOOM_PATH": str(root)}
    code, body = run_zaxy_json("append", "-s", "s", "-t", "note.added", "-a", "me", env=env)
    assert code == 5 and "zaxy repair --session-id s" in body["error"]["remediation"]
    code, result = run_zaxy_json("repair", "-s", "s", env=env)
    assert code == 0 and result["repaired"] == ["s"]
    assert result["sessions"][0]["acknowledged"][0]["seq"] == 3
    code, body = run_zaxy_json("append", "-s", "s", "-t", "note.added", "-a", "me", env=env)
    assert code == 0 and body["event"]["seq"] == 5
    code, report = run_zaxy_json("verify", "-s", "s", env=env)
    assert code == 1 and report["first_broken_seq"] == 3  # the edit stays visible; it is never served
    code, body = run_zaxy_json("replay", "-s", "s", "--from-seq", "3", "--to-seq", "3", env=env)
    assert code == 5


def test_an_edited_log_is_refused_not_repaired(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with JsonlEventLog(root) as log:
        log.append_many("s", [{"type": "note.added", "payload": {"n": i}} for i in range(4)])
    path = root / "s.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([lines[0], lines[2], lines[3]]))  # event 2 removed: an edit, not damage
    code, body = run_zaxy_json("repair", "-s", "s", "--eventloom-path", str(root))
    assert code == 1 and body["refused"] == ["s"] and "backup" in body["sessions"][0]["fix"]
    assert path.read_bytes() == b"".join([lines[0], lines[2], lines[3]])
    assert not (root / REPAIR_DIR_NAME).exists() or not os.listdir(root / REPAIR_DIR_NAME)


def _doc_verifier():
    from tests.eventloom.test_docs_verifier import _doc_verifier as load

    return load()
