"""`zaxy capture codex|claude`: rollouts and transcripts in the current formats, idempotent across restarts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.capture.conftest import Env, fixture_text
from tests.conftest import REPO_ROOT
from zaxy_agents.capture.claude_transcript import project_dir_name


def place_rollout(env: Env, fixture: str, name: str, cwd: Path | None = None) -> Path:
    folder = env.codex_home / "sessions" / "2026" / "11" / "22"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-2026-11-22T00-28-05-{name}.jsonl"
    path.write_text(fixture_text(fixture, cwd or env.workspace, env.home))
    return path


def types(events: list[dict]) -> list[str]:
    return [event["type"] for event in events]


def test_codex_capture_maps_the_current_rollout_format(env: Env) -> None:
    rollout = place_rollout(env, "codex-rollout-tools.jsonl", "a")
    elsewhere = env.root / "other-project"
    (elsewhere / ".git").mkdir(parents=True)
    place_rollout(env, "codex-rollout-legacy.jsonl", "foreign", cwd=elsewhere)  # another workspace: ignored
    code, report = env.zaxy_json("capture", "codex")
    assert code == 0 and report["appended"] == 6 and report["files"] == 1
    events = env.events(env.session("codex"))
    assert types(events) == [
        "transcript.session_started",
        "transcript.turn",
        "command.completed",
        "command.completed",
        "file.edit.applied",
        "transcript.turn",
    ]
    ok, failed, edit = events[2]["payload"], events[3]["payload"], events[4]["payload"]
    assert (ok["command"], ok["exit_code"]) == ("echo hello-from-codex", 0)
    assert (failed["command"], failed["exit_code"]) == ("ls /nonexistent-dir", 2)
    assert (edit["path"], edit["operation"], edit["lines_added"]) == (f"{env.workspace}/notes.txt", "create", 2)
    assert ok["source"] == {"kind": "codex-rollout", "file": str(rollout), "line": 12}
    assert events[1]["payload"]["text"] == "do the tasks" and events[1]["actor"] == "user"
    assert "environment_context" not in json.dumps(events)


def test_codex_capture_maps_the_earlier_rollout_format_and_compaction(env: Env) -> None:
    place_rollout(env, "codex-rollout-legacy.jsonl", "legacy")
    place_rollout(env, "codex-rollout-compaction.jsonl", "compaction")
    env.zaxy("capture", "codex")
    events = env.events(env.session("codex"))
    commands = [e["payload"] for e in events if e["type"] == "command.completed"]
    assert ("pytest -q tests/test_retry.py", 1) in [(c["command"], c["exit_code"]) for c in commands]
    edit = next(e["payload"] for e in events if e["type"] == "file.edit.applied")
    assert (edit["path"], edit["operation"], edit["lines_added"], edit["lines_removed"]) == (
        f"{env.workspace}/src/retry.py",
        "update",
        2,
        1,
    )
    tool = next(e["payload"] for e in events if e["type"] == "tool.call.completed")
    assert tool["tool"] == "mcp__zaxy__memory_search" and tool["argument_keys"] == ["limit", "query"]
    summaries = [e["payload"]["summary"] for e in events if e["type"] == "transcript.compacted"]
    assert summaries.count("Summary: retry delay fixed, one failing test left.") == 1
    assert len(summaries) == 3  # legacy once + two compactions of the 0.169 rollout, each once


def test_capture_is_idempotent_across_restarts_and_lost_cursors(env: Env) -> None:
    rollout = place_rollout(env, "codex-rollout-tools.jsonl", "a")
    lines = rollout.read_text().splitlines(keepends=True)
    rollout.write_text("".join(lines[:12]) + lines[12][:40])  # a line still being written
    env.zaxy("capture", "codex")
    session = env.session("codex")
    assert types(env.events(session)) == ["transcript.session_started", "transcript.turn", "command.completed"]
    _code, again = env.zaxy_json("capture", "codex")
    assert again["appended"] == 0
    rollout.write_text("".join(lines))  # the rest arrives
    _code, report = env.zaxy_json("capture", "codex")
    assert report["appended"] == 3
    cursor = env.eventloom / ".zaxy" / "capture" / "codex-transcripts.json"
    assert cursor.exists()
    cursor.unlink()  # derived state lost: the log's source refs still prevent duplicates
    _code, report = env.zaxy_json("capture", "codex")
    assert report["appended"] == 0 and len(env.events(session)) == 6


def test_capture_skips_what_the_hooks_already_recorded(env: Env) -> None:
    for name in ("UserPromptSubmit", "PostToolUse-Bash-ok", "PostToolUse-Bash-fail"):
        env.hook("codex", name)  # recorded live, same turn and call ids as the rollout
    place_rollout(env, "codex-rollout-tools.jsonl", "a")
    _code, report = env.zaxy_json("capture", "codex")
    assert report["skipped_duplicates"] == 3 and report["appended"] == 3
    events = env.events(env.session("codex"))
    assert types(events).count("command.completed") == 2 and types(events).count("file.edit.applied") == 1


def test_claude_capture_maps_transcripts_with_compaction(env: Env) -> None:
    folder = env.claude_dir / "projects" / project_dir_name(str(env.workspace))
    folder.mkdir(parents=True)
    (folder / "d1d64961-c226-4c3c-a4cb-bb2c6344c645.jsonl").write_text(
        fixture_text("claude-code-session.jsonl", env.workspace, env.home)
    )
    code, report = env.zaxy_json("capture", "claude")
    assert code == 0 and report["files"] == 1
    events = env.events(env.session("claude-code"))
    assert types(events) == [
        "transcript.turn",
        "command.completed",
        "file.edit.applied",
        "file.edit.applied",
        "tool.call.completed",
        "command.completed",
        "transcript.turn",
        "transcript.compacted",
    ]
    assert events[0]["payload"]["text"] == "first task please"
    assert [events[i]["payload"]["exit_code"] for i in (1, 5)] == [0, 2]
    assert (events[3]["payload"]["lines_added"], events[3]["payload"]["lines_removed"]) == (2, 1)
    compaction = events[7]["payload"]
    assert compaction["trigger"] == "manual" and "All done." in compaction["summary"]
    assert "line one" not in json.dumps(events)  # no file content
    _code, again = env.zaxy_json("capture", "claude")
    assert again["appended"] == 0


def test_claude_project_folder_encoding_matches_claude_code() -> None:
    """Expected values computed with Claude Code 2.1's own JavaScript function (run under node)."""
    assert project_dir_name("/tmp/rec/proj") == "-tmp-rec-proj"
    assert project_dir_name("/home/me/my.app_v2") == "-home-me-my-app-v2"
    assert project_dir_name("/" + "a" * 300) == "-" + "a" * 199 + "-vtkmfl"
    assert project_dir_name("/home/ü/ß-проект/" + "b" * 250).endswith("b-tmzc8j")
    assert project_dir_name("/x/😀/" + "c" * 210) == "-x----" + "c" * 194 + "-ftcco6"


def test_capture_respects_the_opt_out(env: Env) -> None:
    place_rollout(env, "codex-rollout-tools.jsonl", "a")
    code, report = env.zaxy_json("capture", "codex", ZAXY_HOOKS_DISABLED="1")
    assert code == 0 and report["appended"] == 0 and report["disabled_by"] == "env"
    assert not env.eventloom.exists()


def test_watch_follows_a_growing_rollout_until_interrupted(env: Env) -> None:
    rollout = place_rollout(env, "codex-rollout-tools.jsonl", "a")
    lines = rollout.read_text().splitlines(keepends=True)
    rollout.write_text("".join(lines[:8]))
    process = subprocess.Popen(
        [sys.executable, "-m", "zaxy_agents.cli.entry", "capture", "codex", "--watch", "--interval", "0.2", "--json"],
        cwd=env.workspace,
        env={**os.environ, **env.vars(), "PYTHONPATH": str(REPO_ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    session = env.session("codex")
    try:
        _wait_for(lambda: len(env.events(session)) == 2, process)
        with rollout.open("a") as handle:
            handle.write("".join(lines[8:]))
        _wait_for(lambda: len(env.events(session)) == 6, process)
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert json.loads(out)["appended"] == 6


def _wait_for(condition, process: subprocess.Popen, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"condition not reached; watcher exited with {process.poll()}")
        time.sleep(0.05)
