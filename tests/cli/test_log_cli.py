"""The real `zaxy` CLI in a subprocess: append, replay, verify, sessions, demo, errors and exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import run_zaxy, run_zaxy_json
from zaxy_agents.cli.demo import DEMO_EVENTS


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


def test_demo_output_never_cuts_a_word_or_a_citation_and_says_what_next(tmp_path: Path) -> None:
    for columns in ("80", "120"):
        result = subprocess.run(
            [sys.executable, "-m", "zaxy_agents.cli.entry", "demo", "--eventloom-path", str(tmp_path / columns)],
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": columns, "NO_COLOR": "1"},
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        citations = [line for line in lines if "eventloom://demo-project/events/" in line and line.startswith("  ")]
        assert len(citations) == 7 and all(re.search(r"events/\d+#[0-9a-f]{12}$", line) for line in citations)
        payloads = [lines[lines.index(line) + 1].strip() for line in citations]
        for event, shown in zip(DEMO_EVENTS, payloads, strict=True):  # whole words only: a cut line ends in " …"
            payload = {k: "[REDACTED]" if k == "api_key" else v for k, v in sorted(event["payload"].items())}
            full = ", ".join(f"{k}={v}" for k, v in payload.items())
            text = shown.removesuffix(" …")
            assert full.startswith(text) and (text == full or full[len(text)] in " ,"), (shown, full)
        assert "what next" in result.stdout and "zaxy hooks claude-code" in result.stdout
        assert "docs/langgraph.md" in result.stdout
        assert all(len(line) <= int(columns) for line in lines)


def test_exit_codes_for_missing_things_are_consistent(tmp_path: Path) -> None:
    loom = ["--eventloom-path", str(tmp_path / "loom")]
    run_zaxy("append", "-s", "real", "--type", "note.added", "--actor", "me", *loom)
    code, body = run_zaxy_json("reproject", "-s", "nosuch", *loom)
    assert code == 3 and body["error"]["code"] == "not_found" and body["error"]["field"] == "--session-id"
    empty = tmp_path / "empty"
    empty.mkdir()
    code, body = run_zaxy_json("eventloom", "import", str(empty), *loom)
    assert code == 3 and "holds no <session>.jsonl logs" in body["error"]["message"]
    code, body = run_zaxy_json("eventloom", "import", str(tmp_path / "missing.jsonl"), *loom)
    assert code == 3
    code, body = run_zaxy_json("benchmark", "locomo", "--dataset", str(tmp_path / "missing.json"))
    assert code == 3 and body["error"]["field"] == "--dataset"


def test_ctrl_c_during_reproject_says_what_state_memory_is_in(tmp_path: Path) -> None:
    import signal
    import time

    from zaxy_agents.fabric.light import light_append_many

    loom = tmp_path / "loom"
    for chunk in range(10):
        drafts = [
            {"type": "fact.asserted", "payload": {"fact": f"fact {chunk}-{i}", "key": f"k{i}"}} for i in range(2000)
        ]
        light_append_many("big", drafts, eventloom_path=loom)
    before = (loom / "big.jsonl").read_bytes()
    process = subprocess.Popen(
        [sys.executable, "-m", "zaxy_agents.cli.entry", "reproject", "--eventloom-path", str(loom)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )
    assert process.stderr is not None
    started = process.stderr.readline()  # printed once the rebuild begins
    assert "rebuilding the projection of 20000 events" in started
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=300)
    assert process.returncode == 130, err
    assert "stopping (Ctrl-C)" in err and "The log is unchanged" in err and "caught up from the log" in err
    assert (loom / "big.jsonl").read_bytes() == before
    code, status = run_zaxy_json("memory", "status", "--eventloom-path", str(loom))
    assert code == 0 and status["sessions"]["big"]["projection_lag"] == 0 and status["current_entities"] == 2000
