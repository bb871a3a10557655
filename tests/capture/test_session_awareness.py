"""Seed 003's session-awareness loop over a real stdio MCP client: bootstrap, capabilities, session.ended."""

from __future__ import annotations

import json
import time

from tests.capture.conftest import Env
from tests.capture.test_workspace_memory import workspace_server

SEED_BOOTSTRAP_KEYS = {"manifest", "recommended_checkout", "capture_status", "trust_policy", "prompt"}


def test_bootstrap_hands_over_manifest_first_checkout_capture_and_trust(env: Env) -> None:
    assert env.zaxy("hooks", "claude-code").returncode == 0
    env.hook("claude-code", "SessionStart-startup")
    env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "Remember that deploys go through ArgoCD."})
    with workspace_server(env, "claude-code") as server:
        boot = server.ok("memory_bootstrap", {"current_task": "wire the refund webhook"})
        assert set(boot) >= SEED_BOOTSTRAP_KEYS
        assert boot["recommended_checkout"] == {
            "tool": "memory_checkout",
            "arguments": {"query": "wire the refund webhook"},
            "reason": boot["recommended_checkout"]["reason"],
        }
        assert set(boot["trust_policy"]) == {"cited_current_facts", "unsupported_context", "feedback_recording"}
        assert boot["capture_status"]["status"] == "healthy", boot["capture_status"]
        hooks = boot["capture_status"]["paths"]["hooks"]
        assert hooks["claude-code"]["installed_scopes"] == ["local"] and hooks["last_event"]["client"] == "claude-code"
        manifest = boot["manifest"]
        assert manifest["front_door"] == "memory_checkout" and manifest["refresh_policy"]
        assert manifest["profile"]["name"] == "core" and "memory_bootstrap" in manifest["profile"]["unlisted_tools"]
        assert "deploys go through ArgoCD" in boot["prompt"]  # the stated fact is stable memory
        capabilities = server.ok("memory_capabilities")
        assert capabilities["recommended_next_call"]["arguments"]["query"]  # a default task when none is given
        assert capabilities["capture"]["paths"]["mcp_lifecycle"]["enabled"] is True
        assert capabilities["capture"]["paths"]["mcp_lifecycle"]["last_event"]["tool"] == "memory_bootstrap"


def test_capture_health_names_each_problem_with_its_fix(env: Env) -> None:
    assert env.zaxy("hooks", "claude-code").returncode == 0
    env.hook("claude-code", "SessionStart-startup")
    env.zaxy("hook-event", "PostToolUse", stdin="{not json")  # a hook failure lands in the error log
    settings = env.workspace / ".claude" / "settings.local.json"
    settings.write_text(
        settings.read_text().replace(
            json.loads(settings.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"].split()[0],
            "/gone/venv/bin/zaxy",
        )
    )
    with workspace_server(env, "claude-code") as server:
        capture = server.ok("memory_capabilities")["capture"]
    assert capture["status"] == "degraded"
    fixes = [issue["fix"] for issue in capture["issues"]]
    assert "Reinstall them: zaxy hooks claude-code --force" in fixes
    assert any("zaxy hooks status" in fix for fix in fixes)


def test_capture_is_off_without_hooks_and_lifecycle_capture(env: Env) -> None:
    from mcp import StdioServerParameters

    from tests.mcp._client import StdioClient

    params = StdioServerParameters(
        command=__import__("sys").executable,
        args=["-m", "zaxy_agents.cli.entry", "serve", "--client", "cursor", "--no-capture", "--no-share"],
        env=env.vars(),
        cwd=str(env.workspace),
    )
    with StdioClient(params) as server:
        assert server.ok("memory_capabilities")["capture"]["status"] == "off"


def test_session_ended_is_recorded_when_the_server_shuts_down(env: Env) -> None:
    with workspace_server(env, "cursor") as server:
        server.ok("memory_append", {"type": "note.added", "payload": {"text": "hello"}})
    session = env.session("cursor")
    for _ in range(100):  # the server finishes its shutdown after the client has gone
        events = env.events(session)
        if events and events[-1]["type"] == "session.ended":
            break
        time.sleep(0.1)
    ended = events[-1]
    assert ended["type"] == "session.ended" and ended["actor"] == "zaxy-mcp"
    assert ended["payload"]["reason"] == "mcp_server_shutdown" and ended["payload"]["client"] == "cursor"
    assert ended["payload"]["tool_calls_recorded"] >= 1
