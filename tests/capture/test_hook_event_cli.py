"""`zaxy hook-event` fed with payloads recorded from the real Claude Code 2.1 and Codex 0.169 CLIs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.capture.conftest import Env, hook_payload
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog

CLAUDE_SEQUENCE = [
    "SessionStart-startup",
    "UserPromptSubmit",
    "PostToolUse-Bash",
    "PostToolUse-Write",
    "PostToolUse-Edit",
    "PostToolUse-Read",
    "PostToolUse-mcp",
    "PostToolUseFailure-Bash",
    "PreCompact",
    "Stop",
    "SubagentStop",
    "SessionStart-compact",
    "PostCompact",
    "SessionStart-resume",
    "SessionStart-clear",
    "SessionEnd",
]


def test_every_claude_code_hook_is_recorded_with_the_documented_mapping(env: Env) -> None:
    results = [env.hook("claude-code", name) for name in CLAUDE_SEQUENCE]
    assert all(result.returncode == 0 for result in results)
    assert all(result.stderr == "" for result in results), [r.stderr for r in results]
    logged = env.events(env.session("claude-code"))
    reminders = [event["payload"]["reason"] for event in logged if event["type"] == "memory.reminder.suggested"]
    assert reminders == ["session_start", "compaction", "resume", "clear"]  # seed 003: a nudge at each boundary
    events = [event for event in logged if event["type"] != "memory.reminder.suggested"]
    assert [event["type"] for event in events] == [
        "hook.session_started",
        "hook.user_prompt_submitted",
        "command.completed",
        "file.edit.applied",
        "file.edit.applied",
        "tool.call.completed",
        "tool.call.completed",
        "command.completed",
        "hook.precompact",
        "hook.stopped",
        "hook.subagent_stopped",
        "hook.compact_session_started",
        "hook.postcompact",
        "hook.resumed",
        "hook.cleared",
        "hook.session_ended",
    ]
    by_seq = {index: event["payload"] for index, event in enumerate(events, start=1)}
    assert by_seq[2]["prompt"] == "first task please" and by_seq[2]["prompt_id"]
    assert events[1]["actor"] == "user"
    assert by_seq[3]["command"] == "echo hello-from-bash" and by_seq[3]["exit_code"] == 0
    assert by_seq[3]["stdout"] == "hello-from-bash" and by_seq[3]["tool_use_id"].startswith("toolu_")
    assert {key: by_seq[4][key] for key in ("path", "operation", "lines_added", "lines_removed")} == {
        "path": f"{env.workspace}/notes.txt",
        "operation": "create",
        "lines_added": 2,
        "lines_removed": 0,
    }
    assert (by_seq[5]["operation"], by_seq[5]["lines_added"], by_seq[5]["lines_removed"]) == ("edit", 2, 1)
    assert by_seq[6] | {"argument_keys": ["file_path"], "tool": "Read"} == by_seq[6]
    assert by_seq[7]["tool"] == "mcp__github__create_issue" and by_seq[7]["argument_keys"] == [
        "body",
        "owner",
        "repo",
        "title",
    ]
    assert by_seq[8]["exit_code"] == 2 and by_seq[8]["ok"] is False and "No such file" in by_seq[8]["error"]
    assert by_seq[12]["injected"]["kind"] == "recovery" and by_seq[12]["injected"]["items"] > 0
    assert by_seq[13]["compact_summary"] == "All done." and by_seq[13]["trigger"] == "manual"
    assert by_seq[16]["reason"] == "other"
    assert all(
        event["payload"]["client"] == "claude-code" and event["payload"]["client_session_id"] for event in logged
    )
    raw = (env.eventloom / f"{env.session('claude-code')}.jsonl").read_text()
    assert "line one" not in raw and "line 2" not in raw  # file content never stored
    assert "ghp_" not in raw  # MCP arguments: keys only
    with JsonlEventLog(env.eventloom) as log:
        assert log.verify(env.session("claude-code")).ok


def test_session_start_prints_a_packet_only_when_memory_has_state(env: Env) -> None:
    first = env.hook("claude-code", "SessionStart-startup")
    assert first.returncode == 0 and first.stdout == ""  # empty memory: nothing injected
    for name in ("UserPromptSubmit", "PostToolUse-Bash", "PostToolUse-Edit"):
        env.hook("claude-code", name)
    compact = env.hook("claude-code", "SessionStart-compact")
    output = json.loads(compact.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    context = output["additionalContext"]
    assert "recovered after context compaction" in context and "echo hello-from-bash" in context
    assert f"eventloom://{env.session('claude-code')}/events/3#" in context
    resumed = json.loads(env.hook("claude-code", "SessionStart-resume").stdout)["hookSpecificOutput"]
    assert "where this workspace left off" in resumed["additionalContext"]


def test_every_codex_hook_is_recorded(env: Env) -> None:
    names = [
        "SessionStart-startup",
        "UserPromptSubmit",
        "PreToolUse-Bash-apply_patch",
        "PostToolUse-Bash-ok",
        "PostToolUse-Bash-fail",
        "PostToolUse-Bash-apply_patch",
        "PreCompact",
        "SessionStart-compact",
        "PostCompact",
        "Stop",
        "SessionEnd",
    ]
    results = [env.hook("codex", name) for name in names]
    assert all(result.returncode == 0 for result in results)
    events = [e for e in env.events(env.session("codex")) if e["type"] != "memory.reminder.suggested"]
    assert [event["type"] for event in events] == [
        "hook.session_started",
        "hook.user_prompt_submitted",
        "command.completed",
        "command.completed",
        "file.edit.applied",
        "hook.precompact",
        "hook.compact_session_started",
        "hook.postcompact",
        "hook.stopped",
        "hook.session_ended",
    ]  # PreToolUse is not recorded
    prompt, ok, failed, patch = (events[i]["payload"] for i in range(1, 5))
    assert prompt["prompt"] == "do the tasks" and prompt["client_turn_id"]
    assert ok["command"] == "echo hello-from-codex" and ok["output"] == "hello-from-codex\n"
    assert ok["exit_code"] is None  # Codex hook payloads carry no exit code; `zaxy capture codex` has it
    assert "No such file" in failed["output"]
    assert (patch["path"], patch["operation"], patch["lines_added"]) == ("notes.txt", "create", 2)
    assert events[5]["payload"]["trigger"] == "auto"
    assert json.loads(results[7].stdout)["hookSpecificOutput"]["additionalContext"].startswith("# Zaxy memory")


def test_one_session_per_workspace_and_worktree(env: Env) -> None:
    other = env.root / "shop-worktree"
    (other / ".git").mkdir(parents=True)
    (other / ".git").rmdir()
    other.mkdir(exist_ok=True)
    (other / ".git").write_text("gitdir: /elsewhere/.git/worktrees/shop-worktree\n")  # a git worktree
    subdir = env.workspace / "src" / "pkg"
    subdir.mkdir(parents=True)
    env.hook("claude-code", "UserPromptSubmit", cwd=subdir)
    env.hook("claude-code", "UserPromptSubmit", cwd=other)
    main_session, other_session = env.session("claude-code"), env.session("claude-code", other)
    assert main_session != other_session
    assert main_session.startswith("claude-code.shop-") and other_session.startswith("claude-code.shop-worktree-")
    assert len(env.events(main_session)) == 1  # the subdirectory belongs to the workspace root
    assert len(env.events(other_session, other / ".eventloom")) == 1
    assert not (subdir / ".eventloom").exists()


def test_claude_project_dir_and_eventloom_path_are_respected(env: Env) -> None:
    elsewhere = env.root / "shared-loom"
    env.hook("claude-code", "UserPromptSubmit", ZAXY_EVENTLOOM_PATH=str(elsewhere))
    assert len(env.events(env.session("claude-code"), elsewhere)) == 1 and not env.eventloom.exists()
    (env.root / "tmp").mkdir()
    env.hook("claude-code", "UserPromptSubmit", cwd=env.root / "tmp", CLAUDE_PROJECT_DIR=str(env.workspace))
    assert len(env.events(env.session("claude-code"))) == 1
    env.hook("claude-code", "UserPromptSubmit", ZAXY_HOOKS_SESSION="team-memory")
    assert len(env.events("team-memory")) == 1


def test_opt_out_by_environment_and_by_workspace_switch(env: Env) -> None:
    quiet = env.hook("claude-code", "SessionStart-startup", ZAXY_HOOKS_DISABLED="1")
    assert quiet.returncode == 0 and quiet.stdout == "" and not env.eventloom.exists()
    code, body = env.zaxy_json("hooks", "disable")
    assert code == 0 and body["enabled"] is False
    assert (env.workspace / ".zaxy" / "hooks.json").exists()
    env.hook("claude-code", "UserPromptSubmit")
    assert env.events(env.session("claude-code")) == []
    code, status = env.zaxy_json("hooks", "status")
    assert status["workspace"]["enabled"] is False and status["workspace"]["disabled_by"] == "workspace-config"
    env.zaxy("hooks", "enable")
    env.hook("claude-code", "UserPromptSubmit")
    assert len(env.events(env.session("claude-code"))) == 1


def test_failures_never_break_the_host_and_land_in_the_error_log(env: Env) -> None:
    garbage = env.zaxy("hook-event", "PostToolUse", stdin="{not json")
    assert garbage.returncode == 0 and garbage.stdout == "" and garbage.stderr == ""
    env.hook("claude-code", "UserPromptSubmit")
    log_file = env.eventloom / f"{env.session('claude-code')}.jsonl"
    log_file.write_text(log_file.read_text().replace("first task please", "tampered prompt"))
    broken = env.hook("claude-code", "PostToolUse-Bash")
    assert broken.returncode == 0 and broken.stderr == ""
    bad_option = env.zaxy("hook-event", "Stop", "--client", "vim", stdin="{}")
    assert bad_option.returncode == 0
    code, status = env.zaxy_json("hooks", "status")
    errors = status["errors"]
    assert code == 0 and errors["count"] == 3
    kinds = [record["error_type"] for record in errors["recent"]]
    assert kinds == ["JSONDecodeError", "IntegrityError", "ValueError"]
    human = env.zaxy("hooks", "status")
    assert "3 hook errors" in human.stdout


def test_unwritable_eventloom_falls_back_to_the_user_error_log(env: Env) -> None:
    blocker = env.root / "not-a-dir"
    blocker.write_text("a file where the log folder should be")
    result = env.hook("claude-code", "UserPromptSubmit", ZAXY_EVENTLOOM_PATH=str(blocker))
    assert result.returncode == 0
    fallback = env.home / ".local" / "state" / "zaxy" / "hook-errors.jsonl"
    record = json.loads(fallback.read_text().splitlines()[-1])
    assert record["workspace"] == str(env.workspace) and record["event"] == "UserPromptSubmit"


def test_hook_path_imports_no_heavy_modules(env: Env) -> None:
    payload = hook_payload("claude-code", "SessionStart-compact", env.workspace, env.home)
    env.hook("claude-code", "PostToolUse-Edit")
    code = (
        "import io, sys; from zaxy_agents.capture.hook_sink import run; out = io.BytesIO(); "
        f"run(['SessionStart'], io.BytesIO({payload.encode()!r}), out); assert out.getvalue(); "
        "heavy = ['pydantic', 'typer', 'rich', 'numpy', 'kuzu', 'dataclasses', 'pathlib', 'datetime', 'typing']; "
        "print([m for m in heavy if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=env.workspace,
        env={**os.environ, **env.vars()},
        check=True,
    )
    assert result.stdout.strip() == "[]"


def test_hook_event_help_goes_through_the_full_cli(env: Env) -> None:
    result = env.zaxy("hook-event", "--help")
    assert result.returncode == 0 and "Hook sink" in result.stdout
    assert not Path(env.workspace / ".eventloom").exists()
