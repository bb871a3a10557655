"""Capture completeness: every file of a patch, exit codes in every rollout dialect, `exec`, subagents, and the
client's own errors kept apart from what the assistant said."""

from __future__ import annotations

import json

from tests.capture.conftest import Env, fixture_text
from tests.capture.test_real_clients import CLAUDE, CODEX, needs_claude, needs_codex, run_client, use_fake_model

FOUR_FILE_PATCH = (
    "*** Begin Patch\n*** Add File: docs/a.md\n+alpha\n*** Add File: docs/b.md\n+beta\n+gamma\n"
    "*** Update File: app.py\n@@\n-print('old')\n+print('new')\n*** Delete File: legacy.py\n*** End Patch\n"
)


# the four files of the patch plus the recorded rollout's own edit
PATCHED_AND_RECORDED = [
    ("a.md", "create"),
    ("app.py", "update"),
    ("b.md", "create"),
    ("legacy.py", "delete"),
    ("notes.txt", "create"),
]


def edits(env: Env) -> list[tuple[str, str]]:
    return sorted(
        (e["payload"]["path"].rsplit("/", 1)[-1], e["payload"]["operation"])
        for e in env.events(env.session("codex"))
        if e["type"] == "file.edit.applied"
    )


def rollout_with_patch(env: Env, call_id: str = "call_patch4") -> None:
    """The recorded rollout plus one apply_patch of four files, as Codex 0.169 writes it (FileChange item)."""
    lines = fixture_text("codex-rollout-tools.jsonl", env.workspace, env.home).splitlines()
    changes = {
        f"{env.workspace}/docs/a.md": {"type": "add", "content": "alpha\n"},
        f"{env.workspace}/docs/b.md": {"type": "add", "content": "beta\ngamma\n"},
        f"{env.workspace}/app.py": {"type": "update", "unified_diff": "@@\n-print('old')\n+print('new')\n"},
        f"{env.workspace}/legacy.py": {"type": "delete", "content": "x = 1\n"},
    }
    item = {"type": "FileChange", "id": call_id, "changes": changes, "status": "completed"}
    lines.insert(
        -2, json.dumps({"timestamp": "t", "type": "event_msg", "payload": {"type": "item_completed", "item": item}})
    )
    folder = env.codex_home / "sessions" / "2026" / "11" / "22"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rollout-2026-11-22T00-28-05-patch.jsonl").write_text("\n".join(lines) + "\n")


def test_every_file_of_a_multi_file_patch_is_recorded_once(env: Env) -> None:
    rollout_with_patch(env)
    code, report = env.zaxy_json("capture", "codex")
    assert code == 0 and report["skipped_duplicates"] == 0
    assert edits(env) == PATCHED_AND_RECORDED
    code, again = env.zaxy_json("capture", "codex")
    assert again["appended"] == 0 and len(edits(env)) == 5  # idempotent


def test_a_patch_the_hooks_recorded_is_not_recorded_again_file_by_file(env: Env) -> None:
    """The hook saw the same patch (relative paths from the patch text): capture skips exactly those four files."""
    hook = {
        "tool_name": "Bash",
        "tool_use_id": "call_patch4",
        "tool_input": {"command": f"apply_patch <<'PATCH'\n{FOUR_FILE_PATCH}PATCH"},
        "tool_response": "Success.",
    }
    env.hook("codex", "PostToolUse-Bash-apply_patch", fields=hook)
    assert len(edits(env)) == 4
    rollout_with_patch(env)
    code, report = env.zaxy_json("capture", "codex")
    assert code == 0 and report["skipped_duplicates"] == 4
    assert edits(env) == PATCHED_AND_RECORDED


def test_camel_case_rollout_items_keep_their_exit_codes(env: Env) -> None:
    """App-server style items (``commandExecution``, ``exitCode``, ``aggregatedOutput``) lose nothing."""
    text = fixture_text("codex-rollout-tools.jsonl", env.workspace, env.home)
    records = [json.loads(line) for line in text.splitlines()]
    for record in records:
        item = record.get("payload", {}).get("item")
        if record.get("payload", {}).get("type") == "item_completed" and item and item["type"] == "CommandExecution":
            item["type"] = "commandExecution"
            item["exitCode"] = item.pop("exit_code")
            item["aggregatedOutput"] = item.pop("aggregated_output")
    folder = env.codex_home / "sessions" / "2026" / "11" / "22"
    folder.mkdir(parents=True)
    (folder / "rollout-2026-11-22T00-28-05-camel.jsonl").write_text("\n".join(map(json.dumps, records)) + "\n")
    env.zaxy("capture", "codex")
    commands = [
        (e["payload"]["command"], e["payload"]["exit_code"])
        for e in env.events(env.session("codex"))
        if e["type"] == "command.completed"
    ]
    assert commands == [("echo hello-from-codex", 0), ("ls /nonexistent-dir", 2)]


def test_codex_exec_and_subagents_are_recorded_with_their_content(env: Env) -> None:
    env.hook(
        "codex",
        "PostToolUse-Bash-ok",
        fields={"tool_name": "exec", "tool_input": {"cmd": "pytest -q"}, "tool_response": "3 passed\nExit code: 0"},
    )
    env.hook("codex", "SubagentStart")
    env.hook("codex", "SubagentStop")
    events = env.events(env.session("codex"))
    command = next(e["payload"] for e in events if e["type"] == "command.completed")
    assert (command["command"], command["exit_code"], command["tool"]) == ("pytest -q", 0, "exec")
    started = next(e["payload"] for e in events if e["type"] == "hook.subagent_started")
    stopped = next(e["payload"] for e in events if e["type"] == "hook.subagent_stopped")
    assert started["agent_type"] == "worker" and stopped["agent_id"] == started["agent_id"]
    assert "only billing.py retries" in stopped["last_assistant_message"]
    assert not any(e["type"] == "tool.call.completed" for e in events)


def test_a_client_error_is_its_own_event_never_an_assistant_turn(env: Env) -> None:
    env.hook("claude-code", "StopFailure")
    error = env.events(env.session("claude-code"))[-1]
    assert error["type"] == "client.error" and error["payload"]["error"] == "authentication_failed"
    assert error["payload"]["message"].startswith("Not logged in")


@needs_claude
def test_real_claude_without_login_records_a_client_error_and_capture_agrees(env: Env) -> None:
    assert env.zaxy("hooks", "claude-code").returncode == 0
    result = run_client([CLAUDE, "-p", "hello"], env)
    assert "Not logged in" in result.stdout + result.stderr
    code, report = env.zaxy_json("capture", "claude")
    assert code == 0 and report["skipped_duplicates"] >= 2  # the prompt and the error came through the hooks
    events = env.events(env.session("claude-code"))
    errors = [e["payload"] for e in events if e["type"] == "client.error"]
    assert [error["error"] for error in errors] == ["authentication_failed"]
    turns = [e["payload"] for e in events if e["type"] == "transcript.turn"]
    assert all(turn["role"] != "assistant" for turn in turns) and not any(e["type"] == "hook.stopped" for e in events)


@needs_codex
def test_real_codex_four_file_patch_is_captured_file_by_file(env: Env) -> None:
    from tests.capture.fake_model_servers import FakeResponses

    (env.workspace / "app.py").write_text("print('old')\n")
    (env.workspace / "legacy.py").write_text("x = 1\n")
    (env.workspace / "docs").mkdir()
    patch = f"apply_patch <<'PATCH'\n{FOUR_FILE_PATCH}PATCH"
    steps = [{"function": "exec_command", "arguments": {"cmd": patch, "workdir": str(env.workspace)}}]
    with FakeResponses(steps) as server:
        use_fake_model(env, server)
        argv = [CODEX, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "patch it"]
        result = run_client(argv, env, FAKE_OPENAI_KEY="test-only")
    assert result.returncode == 0, result.stderr
    assert (env.workspace / "docs" / "b.md").exists() and not (env.workspace / "legacy.py").exists()
    assert env.zaxy("capture", "codex").returncode == 0
    assert edits(env) == [("a.md", "create"), ("app.py", "update"), ("b.md", "create"), ("legacy.py", "delete")]
