"""One workspace, one memory: Claude Code, Codex and Cursor sessions of a workspace are recalled together.

Each client keeps its own session (so every item says which client it came from); the hooks' packets and a
workspace MCP server (`zaxy serve --client ...`, what `zaxy ide-config` writes) recall the workspace's other
sessions by default, each item citing its own session; `zaxy hooks sharing off` keeps them apart.
"""

from __future__ import annotations

import json
import sys

from mcp import StdioServerParameters

from tests.capture.conftest import Env
from tests.mcp._client import StdioClient


def workspace_server(env: Env, client: str) -> StdioClient:
    """`zaxy serve --client <client>` started in the workspace, as a client's project config starts it."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "zaxy_agents.cli.entry", "serve", "--client", client, "--no-share"],
        env=env.vars(PATH=""),
        cwd=str(env.workspace),
    )
    return StdioClient(params)


def startup_packet(env: Env) -> str:
    result = env.hook("claude-code", "SessionStart-startup")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"] if result.stdout else ""


def test_sessions_of_one_workspace_are_recalled_together_and_cited_per_client(env: Env) -> None:
    env.hook("codex", "UserPromptSubmit", fields={"prompt": "Remember that the release branch is release/2.1."})
    with workspace_server(env, "cursor") as cursor:
        appended = cursor.ok("memory_append", {"type": "decision.recorded", "payload": {"decision": "Ship on Fridays"}})
    codex, cursor_session = env.session("codex"), env.session("cursor")
    assert appended["citation"].startswith(f"eventloom://{cursor_session}/events/")
    env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "hello"})

    text = startup_packet(env)
    assert f"`{codex}`" in text and f"`{cursor_session}`" in text  # the header names the sessions merged
    codex_line = next(line for line in text.splitlines() if "release/2.1" in line)
    assert codex_line.startswith("- (codex) ") and f"[eventloom://{codex}/events/" in codex_line
    cursor_line = next(line for line in text.splitlines() if "Ship on Fridays" in line)
    assert cursor_line.startswith("- (cursor) ") and f"[eventloom://{cursor_session}/events/" in cursor_line

    with workspace_server(env, "claude-code") as claude:
        capabilities = claude.ok("memory_capabilities")
        assert capabilities["session"] == env.session("claude-code")
        assert capabilities["server"]["workspace"]["shared_sessions"] == sorted([codex, cursor_session])
        packet = claude.ok("memory_checkout", {"query": "which release branch do we use?"})
        cited = {fact["citation"].split("/events/")[0] for fact in packet["current_facts"]}
        assert f"eventloom://{codex}" in cited and f"eventloom://{cursor_session}" in cited
        only_mine = claude.ok("memory_checkout", {"query": "which release branch do we use?", "scope": []})
        assert not any(codex in fact["citation"] for fact in only_mine["current_facts"])

    code, status = env.zaxy_json("hooks", "status")
    assert code == 0 and {row["session"] for row in status["workspace_sessions"]} == {
        codex,
        cursor_session,
        env.session("claude-code"),
    }


def test_workspace_sharing_opt_out(env: Env) -> None:
    env.hook("codex", "UserPromptSubmit", fields={"prompt": "Remember that the release branch is release/2.1."})
    env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "Remember that lint runs in CI."})
    assert "release/2.1" in startup_packet(env)
    code, body = env.zaxy_json("hooks", "sharing", "off")
    assert code == 0 and body["workspace_sharing"] is False
    text = startup_packet(env)
    assert "lint runs in CI" in text and "release/2.1" not in text and "(codex)" not in text
    with workspace_server(env, "claude-code") as claude:
        assert claude.ok("memory_capabilities")["server"]["workspace"]["shared_sessions"] == []
    assert "release/2.1" in startup_packet_with(env, ZAXY_WORKSPACE_SHARING="1")  # the environment wins
    code, status = env.zaxy_json("hooks", "status")
    assert status["workspace"]["workspace_sharing"] is False
    assert status["workspace"]["sharing_disabled_by"] == "workspace-config"


def startup_packet_with(env: Env, **extra: str) -> str:
    result = env.hook("claude-code", "SessionStart-startup", **extra)
    return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
