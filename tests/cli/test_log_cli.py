"""The real `zaxy` CLI in a subprocess: append, replay, verify, sessions, demo, errors and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_zaxy, run_zaxy_json


def test_append_replay_verify_sessions_round_trip(tmp_path: Path) -> None:
    root = str(tmp_path / "loom")
    code, body = run_zaxy_json(
        "append",
        "--session-id",
        "proj",
        "--type",
        "task.created",
        "--actor",
        "me",
        "--payload",
        '{"title": "write docs"}',
        "--eventloom-path",
        root,
    )
    assert code == 0
    assert body["citation"].startswith("eventloom://proj/events/1#")
    run_zaxy("append", "-s", "proj", "-t", "task.completed", "-a", "me", "--eventloom-path", root)

    code, body = run_zaxy_json("replay", "--session-id", "proj", "--eventloom-path", root, "--from-seq", "2")
    assert code == 0 and [e["seq"] for e in body["events"]] == [2]
    assert body["events"][0]["citation"].startswith("eventloom://proj/events/2#")

    code, body = run_zaxy_json("verify", "--session-id", "proj", "--eventloom-path", root)
    assert code == 0 and body["ok"] is True and body["event_count"] == 2

    code, body = run_zaxy_json("sessions", env={"ZAXY_EVENTLOOM_PATH": root})
    assert code == 0 and body["sessions"][0]["session"] == "proj" and body["sessions"][0]["event_count"] == 2

    human = run_zaxy("replay", "-s", "proj", "--eventloom-path", root)
    assert human.returncode == 0 and "task.created" in human.stdout and "eventloom://proj/events/1#" in human.stdout


def test_verify_exits_one_on_a_broken_chain(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    for i in range(3):
        run_zaxy(
            "append",
            "-s",
            "p",
            "-t",
            "note.added",
            "-a",
            "me",
            "-p",
            json.dumps({"i": i}),
            "--eventloom-path",
            str(root),
        )
    path = root / "p.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"i":1', b'"i":7'))
    code, body = run_zaxy_json("verify", "-s", "p", "--eventloom-path", str(root))
    assert code == 1 and body["ok"] is False and body["first_broken_seq"] == 2
    human = run_zaxy("verify", "-s", "p", "--eventloom-path", str(root))
    assert human.returncode == 1 and "broken" in human.stdout and "seq 2" in human.stdout


def test_bad_input_gets_a_structured_error_and_no_traceback(tmp_path: Path) -> None:
    root = str(tmp_path / "loom")
    code, body = run_zaxy_json("append", "-s", "../escape", "-t", "note.added", "-a", "me", "--eventloom-path", root)
    assert code == 2 and body["error"]["code"] == "invalid_request" and body["error"]["field"] == "session"
    code, body = run_zaxy_json(
        "append", "-s", "ok", "-t", "note.added", "-a", "me", "-p", "[1,2]", "--eventloom-path", root
    )
    assert code == 2 and body["error"]["field"] == "payload"
    human = run_zaxy("append", "-s", "ok", "-t", "note.added", "-a", "me", "-p", "{not json", "--eventloom-path", root)
    assert human.returncode == 2
    assert "Traceback" not in human.stderr and "--payload" in human.stderr and "fix:" in human.stderr
    code, body = run_zaxy_json("verify", "-s", "missing", "--eventloom-path", root)
    assert code == 3 and body["error"]["code"] == "not_found"
    assert not list(Path(root).glob("*.jsonl")) if Path(root).exists() else True


def test_demo_main_job(tmp_path: Path) -> None:
    code, body = run_zaxy_json("demo", "--eventloom-path", str(tmp_path / "demo"))
    assert code == 0
    assert body["verify"]["ok"] is True and body["appended"] == len(body["replay"])
    assert body["tamper_detected"]["detected"] is True
    assert body["redacted_paths"] == ["payload.api_key"]
    assert all(item["citation"].startswith("eventloom://demo-project/events/") for item in body["replay"])
