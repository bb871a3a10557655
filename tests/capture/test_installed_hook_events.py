"""docs/hooks.md "Events installed": which hook events each client gets, SessionStart's matcher, the timeouts
(15 s for SessionStart, 10 s for the rest, 3 s for Codex's SessionEnd) and no PreToolUse — read from what
`zaxy hooks <client> --print` would merge, through the real CLI."""

from __future__ import annotations

import pytest

from tests.capture.conftest import Env

COMMON = {
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
}
ONLY = {"claude-code": {"PostToolUseFailure", "StopFailure"}, "codex": set()}


@pytest.mark.parametrize("client", ["claude-code", "codex"])
def test_installed_events_matchers_and_timeouts_are_the_documented_ones(env: Env, client: str) -> None:
    code, plan = env.zaxy_json("hooks", client, "--print")
    assert code == 0 and plan["written"] is False
    assert set(plan["hooks"]) == COMMON | ONLY[client] and "PreToolUse" not in plan["hooks"]
    for event, groups in plan["hooks"].items():
        for group in groups:
            for hook in group["hooks"]:
                expected = 15 if event == "SessionStart" else 3 if (client, event) == ("codex", "SessionEnd") else 10
                assert hook["timeout"] == expected, (event, hook)
                assert f"hook-event {event} --client {client}" in hook["command"]
    (start,) = plan["hooks"]["SessionStart"]
    assert start["matcher"] == "startup|resume|clear|compact"
