"""`zaxy ide-config <client>`: each client's real config shape, merge rules, and no secrets."""

from __future__ import annotations

import json

import pytest
import tomlkit
from ruamel.yaml import YAML

from tests.capture.conftest import Env
from zaxy_agents.capture.config_files import zaxy_command

WORKSPACE_ARGS = {"cursor": ["--workspace", "${workspaceFolder}"], "vscode": ["--workspace", "${workspaceFolder}"]}


def expected_entry(where: Env, client: str, *, shared: bool = False, **extra: object) -> dict:
    """`serve --client C`: the server finds the workspace, its Eventloom and the client's hook session itself.

    A team-shared (project) file names `zaxy` on PATH here (this test's zaxy lives outside the workspace); a machine
    file names the absolute executable."""
    argv = ["zaxy"] if shared else zaxy_command()
    args = [*argv[1:], "serve", "--client", client, *WORKSPACE_ARGS.get(client, [])]
    if client == "claude-desktop":
        args += ["--workspace", str(where.workspace)]
    return {"command": argv[0], "args": args, **extra}


@pytest.mark.parametrize(
    ("client", "container", "relative_path", "extra"),
    [
        ("claude-code", "mcpServers", ".mcp.json", {"type": "stdio", "env": {}}),
        ("cursor", "mcpServers", ".cursor/mcp.json", {"type": "stdio", "env": {}}),
        ("vscode", "servers", ".vscode/mcp.json", {"type": "stdio", "env": {}}),
    ],
)
def test_project_json_clients_print_and_install(
    env: Env, client: str, container: str, relative_path: str, extra: dict
) -> None:
    code, info = env.zaxy_json("ide-config", client)
    target = env.workspace / relative_path
    assert code == 0 and info["path"] == str(target) and not target.exists()
    assert json.loads(info["snippet"]) == {container: {"zaxy": expected_entry(env, client, shared=True, **extra)}}
    assert str(env.workspace) not in info["snippet"] and info["shared"]  # nothing machine-specific in a shared file
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps({container: {"other": {"command": "npx", "args": ["other-mcp"]}}, "inputs": []}))
    code, info = env.zaxy_json("ide-config", client, "--install")
    assert code == 0 and info["action"] == "added"
    written = json.loads(target.read_text())
    assert written == {
        container: {
            "other": {"command": "npx", "args": ["other-mcp"]},
            "zaxy": expected_entry(env, client, shared=True, **extra),
        },
        "inputs": [],
    }
    code, info = env.zaxy_json("ide-config", client, "--install")
    assert code == 0 and info["action"] == "unchanged"


def test_claude_code_print_names_the_claude_cli_alternative(env: Env) -> None:
    result = env.zaxy("ide-config", "claude-code")
    assert result.returncode == 0 and "claude mcp add --scope project zaxy --" in result.stdout


def test_existing_entry_needs_force(env: Env) -> None:
    target = env.workspace / ".mcp.json"
    target.write_text(json.dumps({"mcpServers": {"zaxy": {"command": "/old/zaxy", "args": ["serve"]}}}))
    code, body = env.zaxy_json("ide-config", "claude-code", "--install")
    assert code == 1 and body["error"]["code"] == "conflict"
    assert json.loads(target.read_text())["mcpServers"]["zaxy"]["command"] == "/old/zaxy"
    code, info = env.zaxy_json("ide-config", "claude-code", "--install", "--force")
    assert code == 0 and info["action"] == "replaced"
    code, info = env.zaxy_json("ide-config", "claude-code", "--install", "--name", "zaxy-shop")
    assert code == 0 and set(json.loads(target.read_text())["mcpServers"]) == {"zaxy", "zaxy-shop"}


def test_install_keeps_the_file_mode_and_writes_two_space_json(env: Env) -> None:
    """docs/ide-config.md: writes "keep the file's permissions"; "JSON files are re-written with two-space
    indentation"."""
    target = env.workspace / ".mcp.json"
    target.write_text(json.dumps({"mcpServers": {"other": {"command": "npx", "args": ["other-mcp"]}}}))
    target.chmod(0o640)
    code, info = env.zaxy_json("ide-config", "claude-code", "--install")
    assert code == 0 and info["action"] == "added"
    assert target.stat().st_mode & 0o777 == 0o640
    text = target.read_text()
    assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
    assert list(env.workspace.glob(".mcp.json.*")) == []  # no temporary file left beside it


def test_jsonc_file_is_refused_untouched(env: Env) -> None:
    target = env.workspace / ".vscode" / "mcp.json"
    target.parent.mkdir()
    target.write_text('{\n  // my servers\n  "servers": {}\n}\n')
    code, body = env.zaxy_json("ide-config", "vscode", "--install")
    assert code == 2 and "not valid JSON" in body["error"]["message"]
    assert "// my servers" in target.read_text()


def test_claude_desktop_prints_os_paths_and_installs_on_linux_path(env: Env) -> None:
    code, info = env.zaxy_json("ide-config", "claude-desktop")
    assert code == 0 and set(info["documented_paths"]) == {"macOS", "Windows", "Linux (unofficial builds)"}
    assert json.loads(info["snippet"]) == {"mcpServers": {"zaxy": expected_entry(env, "claude-desktop", env={})}}
    code, info = env.zaxy_json("ide-config", "claude-desktop", "--install")
    desktop = env.home / ".config" / "Claude" / "claude_desktop_config.json"
    assert code == 0 and info["path"] == str(desktop) and json.loads(desktop.read_text())["mcpServers"]["zaxy"]


def test_codex_toml_merge_keeps_comments_and_other_servers(env: Env) -> None:
    config = env.codex_home / "config.toml"
    config.parent.mkdir(parents=True)
    original = '# my codex config\nmodel = "gpt-5"  # keep me\n\n[mcp_servers.github]\ncommand = "gh-mcp"\n'
    config.write_text(original)
    code, info = env.zaxy_json("ide-config", "codex", "--scope", "user", "--install")
    assert code == 0 and info["action"] == "added"
    text = config.read_text()
    assert text.startswith(original)  # untouched prefix, comments included
    document = tomlkit.parse(text).unwrap()
    assert document["mcp_servers"]["github"] == {"command": "gh-mcp"}
    assert document["mcp_servers"]["zaxy"] == {
        **expected_entry(env, "codex"),
        "startup_timeout_sec": 90,
        "tool_timeout_sec": 60,
    }
    assert "env" not in document["mcp_servers"]["zaxy"]
    code, info = env.zaxy_json("ide-config", "codex", "--scope", "user", "--install")
    assert info["action"] == "unchanged"
    code, project = env.zaxy_json("ide-config", "codex")
    assert project["path"] == str(env.workspace / ".codex" / "config.toml")
    assert project["commands"][0].startswith("codex mcp add zaxy -- ")


def test_hermes_yaml_merge_keeps_comments(env: Env) -> None:
    config = env.home / ".hermes" / "config.yaml"
    config.parent.mkdir()
    config.write_text("# hermes settings\nmodel: hermes-4  # default model\nmcp_servers:\n  time:\n    command: uvx\n")
    code, info = env.zaxy_json("ide-config", "hermes", "--install")
    assert code == 0 and info["action"] == "added"
    text = config.read_text()
    assert "# hermes settings" in text and "# default model" in text
    document = YAML(typ="safe").load(text)
    assert document["mcp_servers"]["time"] == {"command": "uvx"}
    assert document["mcp_servers"]["zaxy"] == {
        **expected_entry(env, "hermes"),
        "enabled": True,
        "timeout": 120,
        "connect_timeout": 60,
    }


def test_no_secrets_in_generated_config(env: Env) -> None:
    for client in ("claude-code", "claude-desktop", "cursor", "vscode", "codex", "hermes"):
        code, info = env.zaxy_json("ide-config", client, OPENAI_API_KEY="sk-live-should-never-appear-123456")
        assert code == 0
        assert "sk-live" not in info["snippet"] and "API_KEY" not in info["snippet"]
        assert info["entry"].get("env", {}) == {}


def test_unknown_client_and_scope_are_structured_errors(env: Env) -> None:
    code, body = env.zaxy_json("ide-config", "emacs")
    assert code == 2 and body["error"]["field"] == "client"
    code, body = env.zaxy_json("ide-config", "vscode", "--scope", "user")
    assert code == 2 and body["error"]["field"] == "--scope"


def test_json_output_has_the_documented_keys(env: Env) -> None:
    """docs/ide-config.md: `--json` prints exactly these keys, plus `action`, `written`, `gitignore` with --install."""
    keys = {"client", "scope", "name", "path", "format", "container", "entry", "snippet", "commands", "shared"}
    keys.add("warnings")
    code, printed = env.zaxy_json("ide-config", "cursor")
    assert code == 0 and set(printed) == keys
    code, installed = env.zaxy_json("ide-config", "claude-code", "--install")
    assert code == 0 and set(installed) == keys | {"action", "written", "gitignore"}
