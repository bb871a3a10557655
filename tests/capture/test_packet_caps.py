"""docs/hooks.md: the SessionStart packet is at most `--max-chars` / `ZAXY_HOOKS_MAX_CHARS` characters, "default
6,000 for Claude Code ... and 5,000 for Codex ..., hard cap 7,900" — through the real `zaxy hook-event` on a log
with far more standing state than fits."""

from __future__ import annotations

import json

import pytest

from tests.capture.conftest import Env
from zaxy_agents.fabric.light import light_append_many


def _fill(env: Env, session: str) -> None:
    env.eventloom.mkdir(parents=True, exist_ok=True)
    drafts = [
        {
            "type": "task.created",
            "payload": {"task_id": f"T-{n}", "title": f"Migrate shard {n}, then " + "check replication lag " * 8},
            "actor": "agent",
        }
        for n in range(100)
    ]
    drafts += [
        {
            "type": "decision.recorded",
            "payload": {"topic": f"shard {n}", "decision": "Route reads to the replica until " + "lag is low " * 12},
            "actor": "agent",
        }
        for n in range(30)
    ]
    light_append_many(session, drafts, eventloom_path=env.eventloom)


def _packet(env: Env, client: str, **extra: str) -> str:
    result = env.hook(client, "SessionStart-compact", **extra)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize(("client", "default"), [("claude-code", 6_000), ("codex", 5_000)])
def test_packets_stop_at_the_client_default_and_never_pass_the_hard_cap(env: Env, client: str, default: int) -> None:
    _fill(env, env.session(client))
    packet = _packet(env, client)
    assert default * 0.8 < len(packet) <= default, len(packet)  # full, and cut at the client's default
    assert "eventloom://" in packet
    asked_for_more = _packet(env, client, ZAXY_HOOKS_MAX_CHARS="20000")
    assert 7_000 < len(asked_for_more) <= 7_900, len(asked_for_more)  # the hard cap binds
