"""`zaxy hooks claude-code|codex|uninstall|status`: golden settings files and the merge rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.capture.conftest import FIXTURES, Env
from zaxy_agents.capture.config_files import shell_command, zaxy_command

GOLDEN = FIXTURES / "golden"
FOREIGN = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "env": {"FOO": "bar"},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write", "timeout": 5}]}
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}],
    },
}


def normalised(path: Path) -> dict:
    """The file with this machine's zaxy command replaced by the manifest placeholder."""
    return json.loads(path.read_text().replace(shell_command(zaxy_command()), "{{ZAXY}}"))


def golden(name: str) -> dict:
    return json.loads((GOLDEN / name).read_text())


def test_claude_code_fresh_install_matches_golden(env: Env) -> None:
    code, report = env.zaxy_json("hooks", "claude-code")
    settings = env.workspace / ".claude" / "settings.local.json"
    assert code == 0 and report["path"] == str(settings) and report["written"] and report["created"]
    assert set(report["events"].values()) == {"added"}
    assert normalised(settings) == golden("claude-code.settings.local.json")
    command = json.loads(settings.read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert Path(command.split()[0]).is_absolute()
    code, again = env.zaxy_json("hooks", "claude-code")
    assert code == 0 and not again["written"] and set(again["events"].values()) == {"unchanged"}


def test_claude_code_merge_keeps_foreign_settings_and_hooks(env: Env) -> None:
    settings = env.workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(FOREIGN, indent=2))
    code, _report = env.zaxy_json("hooks", "claude-code", "--scope", "project")
    assert code == 0
    assert normalised(settings) == golden("claude-code.settings.merged.json")
    code, removed = env.zaxy_json("hooks", "uninstall", "claude-code")
    assert code == 0 and next(r["removed"] for r in removed["results"] if r["scope"] == "project")
    assert json.loads(settings.read_text()) == FOREIGN


def test_a_different_zaxy_entry_needs_force(env: Env) -> None:
    settings = env.workspace / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    old = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/old/venv/bin/zaxy hook-event Stop"}]}]}}
    settings.write_text(json.dumps(old))
    code, body = env.zaxy_json("hooks", "claude-code")
    assert code == 1 and body["error"]["code"] == "conflict" and body["error"]["details"]["events"] == ["Stop"]
    assert json.loads(settings.read_text()) == old  # nothing written
    code, report = env.zaxy_json("hooks", "claude-code", "--force")
    assert code == 0 and report["events"]["Stop"] == "replaced" and report["events"]["SessionStart"] == "added"
    stop = json.loads(settings.read_text())["hooks"]["Stop"]
    assert len(stop) == 1 and "/old/venv" not in json.dumps(stop)


def test_print_writes_nothing_and_user_scope_uses_the_claude_config_dir(env: Env) -> None:
    result = env.zaxy("hooks", "claude-code", "--print")
    assert result.returncode == 0 and '"SessionStart"' in result.stdout
    assert not (env.workspace / ".claude").exists()
    code, report = env.zaxy_json("hooks", "claude-code", "--scope", "user")
    assert code == 0 and report["path"] == str(env.claude_dir / "settings.json")
    code, body = env.zaxy_json("hooks", "claude-code", "--scope", "global")
    assert code == 2 and body["error"]["field"] == "--scope"


def test_invalid_settings_file_is_reported_and_left_alone(env: Env) -> None:
    settings = env.workspace / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {,}}')
    code, body = env.zaxy_json("hooks", "claude-code")
    assert code == 2 and "not valid JSON" in body["error"]["message"]
    assert settings.read_text() == '{"hooks": {,}}'


def test_codex_install_project_and_user_scopes(env: Env) -> None:
    code, report = env.zaxy_json("hooks", "codex")
    hooks_file = env.workspace / ".codex" / "hooks.json"
    assert code == 0 and report["path"] == str(hooks_file)
    assert normalised(hooks_file) == golden("codex.hooks.json")  # shared: `zaxy` on PATH, no machine path
    assert {"SubagentStart", "SubagentStop"} <= set(json.loads(hooks_file.read_text())["hooks"])
    code, report = env.zaxy_json("hooks", "codex", "--scope", "user")
    assert code == 0 and report["path"] == str(env.codex_home / "hooks.json")
    command = report["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert command.startswith(shell_command(zaxy_command())) and "--eventloom-path" not in command


def test_a_path_that_is_not_utf8_is_refused_before_any_write(env: Env) -> None:
    """Found by the CLI fuzz (2,000 inputs): `hooks codex --eventloom-path <bytes that are not UTF-8>` was an
    internal error (exit 70, UnicodeEncodeError writing hooks.json); now a structured refusal, nothing written."""
    result = subprocess.run(
        [sys.executable, "-m", "zaxy_agents.cli.entry", "hooks", "codex", "--eventloom-path", b"\xed\xa0\x80gP",
         "--json"],
        cwd=env.workspace, env={**os.environ, **env.vars()}, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert json.loads(result.stdout)["error"]["code"] == "invalid_request"
    assert not (env.workspace / ".codex").exists()


def test_a_zaxy_inside_the_workspace_is_named_relative_to_it_in_shared_files(env: Env) -> None:
    """The README's set-up installs zaxy into the project's .venv: shared files then say `.venv/bin/zaxy` relative
    to the root each client gives (Claude Code's $CLAUDE_PROJECT_DIR, the git top level for Codex)."""
    (env.workspace / ".venv").symlink_to(Path(sys.executable).parent.parent)
    python = env.workspace / ".venv" / "bin" / "python"
    for client in ("claude-code", "codex"):
        result = subprocess.run(
            [str(python), "-m", "zaxy_agents.cli.entry", "hooks", client, "--scope", "project", "--json"],
            cwd=env.workspace,
            env={**os.environ, **env.vars()},
            capture_output=True,
            text=True,
            check=True,
        )
        command = json.loads(result.stdout)["hooks"]["Stop"][0]["hooks"][0]["command"]
        root = {
            "claude-code": '"$CLAUDE_PROJECT_DIR"',
            "codex": '"$(git rev-parse --show-toplevel 2>/dev/null || pwd)"',
        }
        assert command == f"{root[client]}/.venv/bin/zaxy hook-event Stop --client {client}"
        assert str(env.root) not in command


def test_eventloom_path_is_baked_only_when_asked_and_never_ties_shared_files_to_this_machine(env: Env) -> None:
    code, report = env.zaxy_json("hooks", "claude-code", "--eventloom-path", "memory")
    command = report["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert code == 0 and command.endswith("--eventloom-path memory")  # relative to the workspace root
    elsewhere = str(env.root / "elsewhere")
    for scope in ("project", "user"):
        code, body = env.zaxy_json("hooks", "claude-code", "--scope", scope, "--eventloom-path", elsewhere, "--print")
        assert code == 2 and body["error"]["field"] == "--eventloom-path"
    code, report = env.zaxy_json("hooks", "claude-code", "--eventloom-path", elsewhere, "--force")
    assert code == 0 and report["hooks"]["Stop"][0]["hooks"][0]["command"].endswith(elsewhere)  # local: this machine


def test_status_reports_installation_sessions_and_stale_commands(env: Env) -> None:
    env.zaxy("hooks", "claude-code")
    stale = env.codex_home / "hooks.json"
    stale.parent.mkdir(parents=True)
    stale.write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/gone/zaxy hook-event Stop"}]}]}})
    )
    env.hook("claude-code", "UserPromptSubmit")
    code, status = env.zaxy_json("hooks", "status")
    assert code == 0
    claude = status["clients"]["claude-code"]
    assert claude["session"] == env.session("claude-code") and claude["events"] == 1
    assert claude["last_event"]["type"] == "hook.user_prompt_submitted" and claude["last_write"].endswith("Z")
    local = next(row for row in claude["installed"] if row["scope"] == "local")
    assert "SessionStart" in local["events"] and local["stale"] == []
    codex_user = next(row for row in status["clients"]["codex"]["installed"] if row["scope"] == "user")
    assert codex_user["events"] == ["Stop"] and codex_user["stale"] == ["/gone/zaxy"]
    human = env.zaxy("hooks", "status")
    assert "missing executable: /gone/zaxy" in human.stdout and "no hook errors" in human.stdout


def test_packet_command_shows_what_would_be_injected(env: Env) -> None:
    result = env.zaxy("hooks", "packet")
    assert result.returncode == 0 and "nothing to inject" in result.stdout
    for name in ("UserPromptSubmit", "PostToolUse-Bash"):
        env.hook("claude-code", name)
    code, packet = env.zaxy_json("hooks", "packet", "--kind", "recovery")
    assert code == 0 and packet["kind"] == "recovery" and "echo hello-from-bash" in packet["text"]
    assert packet["chars"] == len(packet["text"]) and len(packet["citations"]) == 2
