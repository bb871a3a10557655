"""#18 / seed 003: `memory.reminder.suggested` in a long session, on a status question after a while without
memory, and after a long tool run — through the real `zaxy hook-event` with the recorded Claude Code payloads.
(The boundary reminders — start, resume, clear, compaction — are in test_hook_event_cli.py.)"""

from __future__ import annotations

import json

from tests.capture.conftest import Env
from tests.capture.test_continuity import noise


def _reminders(env: Env) -> list[dict]:
    return [e["payload"] for e in env.events(env.session("claude-code")) if e["type"] == "memory.reminder.suggested"]


def test_a_long_session_and_a_late_status_question_get_a_reminder_and_the_model_is_told(env: Env) -> None:
    session = env.session("claude-code")
    noise(env, session, 30)
    quiet = env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "rename the helper"})
    assert quiet.returncode == 0 and quiet.stdout == "" and _reminders(env) == []  # 30 events: nothing yet

    status = env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "where are we on the migration?"})
    (reminder,) = _reminders(env)
    assert reminder["reason"] == "status_question" and reminder["events_since_memory_activity"] >= 25
    assert reminder["recommended_call"]["tool"] == "memory_checkout"
    told = json.loads(status.stdout)["hookSpecificOutput"]
    assert told["hookEventName"] == "UserPromptSubmit" and "memory_checkout" in told["additionalContext"]

    noise(env, session, 160)  # the reminder counts as memory activity: only a long stretch after it nudges again
    env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "rename the helper"})
    assert [r["reason"] for r in _reminders(env)] == ["status_question", "long_session"]
    env.hook("claude-code", "UserPromptSubmit", fields={"prompt": "and the next one"})
    assert len(_reminders(env)) == 2  # just reminded: no nudge on every prompt


def test_a_long_tool_run_gets_a_reminder(env: Env) -> None:
    env.hook("claude-code", "PostToolUse-Bash", fields={"duration_ms": 5_000})
    assert _reminders(env) == []
    env.hook("claude-code", "PostToolUse-Bash", fields={"duration_ms": 180_000})
    (reminder,) = _reminders(env)
    assert reminder["reason"] == "long_tool_run" and reminder["duration_ms"] == 180_000 and reminder["tool"] == "Bash"
