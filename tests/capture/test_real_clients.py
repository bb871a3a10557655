"""Optional: the real `claude` (Claude Code) and `codex` (Codex CLI) binaries against what Zaxy installs.

They run fully offline: without a login `claude -p` still fires its session hooks, and for tool calls both
CLIs are pointed at scripted loopback model servers (tests/capture/fake_model_servers.py). Skipped unless the
binaries are found in ``$ZAXY_TEST_NODE_BIN`` (a folder, e.g. ``node_modules/.bin`` of
``npm install @anthropic-ai/claude-code @openai/codex``) or on PATH. CI never installs them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.capture.conftest import Env
from tests.capture.fake_model_servers import FakeAnthropic, FakeResponses
from zaxy_agents.fabric import MemoryFabric

SECRET_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY")


def find_binary(name: str) -> str | None:
    folder = os.environ.get("ZAXY_TEST_NODE_BIN")
    if folder and (Path(folder) / name).exists():
        return str(Path(folder) / name)
    return shutil.which(name)


CLAUDE = find_binary("claude")
CODEX = find_binary("codex")
needs_claude = pytest.mark.skipif(CLAUDE is None, reason="claude CLI not found (set ZAXY_TEST_NODE_BIN)")
needs_codex = pytest.mark.skipif(CODEX is None, reason="codex CLI not found (set ZAXY_TEST_NODE_BIN)")


def client_env(env: Env, **extra: str) -> dict[str, str]:
    """The user's environment with zaxy on PATH (as after `pipx install`): team-shared configs name `zaxy`."""
    base = {key: value for key, value in os.environ.items() if key not in SECRET_VARS}
    path = f"{Path(sys.executable).parent}{os.pathsep}{base.get('PATH', '')}"
    return {**base, **env.vars(), "CI": "1", "PATH": path, **extra}


def run_client(argv: list[str], env: Env, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=env.workspace,
        env=client_env(env, **extra),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=180,
    )


def use_fake_model(env: Env, server: FakeResponses) -> None:
    """Point Codex at the scripted model server and trust the workspace (its project hooks and config load)."""
    env.codex_home.mkdir(parents=True, exist_ok=True)
    (env.codex_home / "config.toml").write_text(
        'model = "gpt-5.3-codex"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
        f'base_url = "{server.url}/v1"\nwire_api = "responses"\nenv_key = "FAKE_OPENAI_KEY"\n\n'
        f'[projects."{env.workspace}"]\ntrust_level = "trusted"\n'
    )


def seed_task(env: Env, client: str) -> None:
    with MemoryFabric.from_path(env.eventloom) as fabric:
        fabric.append(env.session(client), "task.created", {"task_id": "T-7", "title": "Wire the refund webhook"})


@needs_claude
def test_claude_without_login_fires_session_hooks(env: Env) -> None:
    assert env.zaxy("hooks", "claude-code").returncode == 0
    result = run_client([CLAUDE, "-p", "hello"], env)
    events = env.events(env.session("claude-code"))
    kinds = [event["type"] for event in events]
    assert "hook.session_started" in kinds and "hook.session_ended" in kinds, (result.stdout, result.stderr)
    prompt = next(event for event in events if event["type"] == "hook.user_prompt_submitted")
    assert prompt["payload"]["prompt"] == "hello"


@needs_claude
def test_claude_tool_calls_are_captured_and_the_packet_reaches_the_model(env: Env) -> None:
    env.zaxy("hooks", "claude-code")
    seed_task(env, "claude-code")
    notes = env.workspace / "notes.txt"
    steps = [
        {"tool": "Bash", "input": {"command": "echo from-claude", "description": "say hi"}},
        {"tool": "Write", "input": {"file_path": str(notes), "content": "one\ntwo\n"}},
        {"tool": "Edit", "input": {"file_path": str(notes), "old_string": "two", "new_string": "2\n3"}},
        {"tool": "Bash", "input": {"command": "ls /definitely-missing-dir", "description": "fail"}},
    ]
    with FakeAnthropic(steps) as server:
        result = run_client(
            [CLAUDE, "-p", "do the work", "--allowedTools", "Bash Write Edit"],
            env,
            ANTHROPIC_API_KEY="sk-ant-test-only",
            ANTHROPIC_BASE_URL=server.url,
        )
        requests = server.all_request_text()
    assert result.returncode == 0, result.stderr
    assert "Wire the refund webhook" in requests and "eventloom://" in requests  # bootstrap packet injected
    events = env.events(env.session("claude-code"))
    commands = [
        (e["payload"]["command"], e["payload"]["exit_code"]) for e in events if e["type"] == "command.completed"
    ]
    assert commands == [("echo from-claude", 0), ("ls /definitely-missing-dir", 2)]
    edits = [
        (e["payload"]["operation"], e["payload"]["lines_added"]) for e in events if e["type"] == "file.edit.applied"
    ]
    assert edits == [("create", 2), ("edit", 2)]
    assert "one\ntwo" not in json.dumps(events)


@needs_codex
def test_codex_reads_the_mcp_config_zaxy_wrote(env: Env) -> None:
    """User scope: workspace-neutral (no folder, no session: `serve --client codex` finds them), absolute zaxy."""
    assert env.zaxy("ide-config", "codex", "--install", "--scope", "user").returncode == 0
    result = run_client([CODEX, "mcp", "get", "zaxy", "--json"], env)
    assert result.returncode == 0, result.stderr
    server = json.loads(result.stdout)
    assert server["enabled"] and server["startup_timeout_sec"] == 90
    assert server["transport"]["args"] == ["serve", "--client", "codex"]
    assert Path(server["transport"]["command"]).is_absolute()
    listed = json.loads(run_client([CODEX, "mcp", "list", "--json"], env).stdout)
    assert [entry["name"] for entry in listed] == ["zaxy"]


def claude_connects(env: Env) -> str:
    """`claude mcp list` in the workspace: starts every project server and reports whether it connected."""
    env.claude_dir.mkdir(parents=True, exist_ok=True)
    (env.claude_dir / "settings.json").write_text(json.dumps({"enableAllProjectMcpServers": True}))
    result = run_client([CLAUDE, "mcp", "list"], env)
    return result.stdout + result.stderr


@needs_claude
def test_claude_starts_the_team_shared_mcp_entry_without_machine_paths(env: Env) -> None:
    """The committed .mcp.json names no path of this machine, and the real client still starts the server: with
    zaxy on PATH, and with zaxy in the workspace's own .venv (found from the workspace root at start)."""
    assert env.zaxy("ide-config", "claude-code", "--install").returncode == 0
    shared = (env.workspace / ".mcp.json").read_text()
    assert str(env.root) not in shared and sys.prefix not in shared
    assert "zaxy: zaxy serve --client claude-code - ✔ Connected" in claude_connects(env)

    (env.workspace / ".venv").symlink_to(Path(sys.executable).parent.parent)  # the README's in-project venv
    python = env.workspace / ".venv" / "bin" / "python"  # as if the venv had been created in the workspace
    inside = subprocess.run(
        [str(python), "-m", "zaxy_agents.cli.entry", "ide-config", "claude-code", "--install", "--force"],
        cwd=env.workspace,
        env=client_env(env),
        capture_output=True,
        text=True,
    )
    assert inside.returncode == 0, inside.stderr
    entry = json.loads((env.workspace / ".mcp.json").read_text())["mcpServers"]["zaxy"]
    assert entry["command"] == "sh" and "/.venv/bin/zaxy serve --client claude-code" in entry["args"][1]
    assert str(env.root) not in json.dumps(entry)
    status = claude_connects(env)
    assert "✔ Connected" in status, status


@needs_codex
def test_codex_hooks_capture_and_inject_with_capture_backfilling_patches(env: Env) -> None:
    assert env.zaxy("hooks", "codex").returncode == 0
    seed_task(env, "codex")
    patch = "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: notes.txt\n+one\n+two\n*** End Patch\nPATCH"
    steps = [
        {"function": "exec_command", "arguments": {"cmd": "echo from-codex", "workdir": str(env.workspace)}},
        {"function": "exec_command", "arguments": {"cmd": patch, "workdir": str(env.workspace)}},
    ]
    with FakeResponses(steps) as server:
        use_fake_model(env, server)
        argv = [CODEX, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust"]
        argv += ["--dangerously-bypass-approvals-and-sandbox", "do the work"]
        result = run_client(argv, env, FAKE_OPENAI_KEY="test-only")
        requests = server.all_request_text()
    assert result.returncode == 0, result.stderr
    assert "Wire the refund webhook" in requests  # SessionStart packet reached the model
    session = env.session("codex")
    kinds = [event["type"] for event in env.events(session)]
    assert {"hook.session_started", "hook.user_prompt_submitted", "command.completed", "hook.session_ended"} <= set(
        kinds
    )
    _code, report = env.zaxy_json("capture", "codex")
    assert report["skipped_duplicates"] >= 2  # the prompt and the command came through the hooks already
    events = env.events(session)
    assert [e["type"] for e in events].count("command.completed") == 1
    edit = next(e["payload"] for e in events if e["type"] == "file.edit.applied")
    assert (edit["path"], edit["operation"], edit["lines_added"]) == (str(env.workspace / "notes.txt"), "create", 2)


def claude_turn(env: Env, server: FakeAnthropic, prompt: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_client(
        [CLAUDE, "-p", *extra, prompt], env, ANTHROPIC_API_KEY="sk-ant-test-only", ANTHROPIC_BASE_URL=server.url
    )


@needs_claude
def test_claude_remember_survives_a_real_compaction_and_reaches_the_model(env: Env) -> None:
    """ "Remember X" in one run; a real /compact later; the recovery packet (with X and the last reply) is what the
    model sees after the compaction, and a new session starts with X."""
    env.zaxy("hooks", "claude-code")
    with FakeAnthropic([{"text": "Noted: staging is on port 5433."}]) as server:
        assert claude_turn(env, server, "Remember that staging is on port 5433.").returncode == 0
        for step in ("next step",):
            assert claude_turn(env, server, step, "--continue").returncode == 0
        compacted = claude_turn(env, server, "/compact", "--continue")
        assert compacted.returncode == 0, compacted.stderr
        assert claude_turn(env, server, "what next?", "--continue").returncode == 0
        after_compaction = json.dumps(server.requests[-1]["body"])
    kinds = [event["type"] for event in env.events(env.session("claude-code"))]
    assert "hook.compact_session_started" in kinds and "hook.postcompact" in kinds
    assert "recovered after context compaction" in after_compaction
    recovery = after_compaction[after_compaction.index("recovered after context compaction") :]
    assert "staging is on port 5433" in recovery and "Noted: staging is on port 5433." in recovery
    with FakeAnthropic([{"text": "ok"}]) as server:
        assert claude_turn(env, server, "hello again").returncode == 0  # a new session, not --continue
        fresh = server.all_request_text()
    assert "where this workspace left off" in fresh and "staging is on port 5433" in fresh


@needs_claude
@needs_codex
def test_codex_memory_reaches_claude_code_in_the_same_workspace(env: Env) -> None:
    """One workspace, one memory: what the user told Codex is in Claude Code's next packet, cited to Codex."""
    assert env.zaxy("hooks", "codex").returncode == 0 and env.zaxy("hooks", "claude-code").returncode == 0
    with FakeResponses([]) as server:
        use_fake_model(env, server)
        argv = [CODEX, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust"]
        argv += ["Remember that the release branch is release/2.1."]
        assert run_client(argv, env, FAKE_OPENAI_KEY="test-only").returncode == 0
    codex_session = env.session("codex")
    assert any(e["type"] == "fact.asserted" for e in env.events(codex_session))
    with FakeAnthropic([{"text": "ok"}]) as server:
        assert claude_turn(env, server, "which branch do we release from?").returncode == 0
        requests = server.all_request_text()
    assert "(codex) the release branch is release/2.1" in requests
    assert f"[eventloom://{codex_session}/events/" in requests
