"""``memory.reminder.suggested``: runtime nudges that keep memory in the loop of a long session (seed 003).

Session-start awareness is not enough: after a compaction, a resume, a long stretch of work without a
memory call, or a status/roadmap question asked while memory was last consulted long ago, the model should
refresh memory before answering. The hooks record a ``memory.reminder.suggested`` event at those moments
(``reason``: ``session_start``, ``resume``, ``clear``, ``compaction``, ``long_session``, ``status_question``,
``long_tool_run``) with the recommended call, and on a prompt also tell the model (one line of
``additionalContext``).

"Memory activity" is read off the tail of the session's log, never a side file: a Zaxy MCP tool call
(``tool.call.completed`` by the MCP server's lifecycle capture, tool ``memory_*`` / ``context_*``), a
SessionStart that injected a packet, or an earlier reminder. At most :data:`LOOKBACK` events are read, so
the check costs the same on any log length. Stdlib only (hook fast path).
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

REMINDER_TYPE = "memory.reminder.suggested"
LOOKBACK = 200  # events read back from the tail
LONG_SESSION_EVENTS = 150  # a prompt after this many events without memory activity gets a reminder
STATUS_QUESTION_EVENTS = 25  # ... and a status/roadmap question after this many
LONG_TOOL_RUN_MS = 120_000
SESSION_START_REASONS = {"startup": "session_start", "resume": "resume", "clear": "clear", "compact": "compaction"}
_STATUS_QUESTION = re.compile(
    r"\b(?:status|roadmap|progress|where (?:are|were) we|what(?:'s| is| was) (?:next|left|done|the plan)|"
    r"next steps?|remaining work|what did we|catch me up|recap|summar(?:y|ise|ize))\b",
    re.IGNORECASE,
)
_SESSION_STARTS = (b"hook.session_started", b"hook.resumed", b"hook.cleared", b"hook.compact_session_started")


def recommended_call(task: str | None = None) -> dict[str, Any]:
    """The call a reminder recommends: a checkout of the current task (seed 003's ``required_action`` shape)."""
    query = (task or "").strip()[:300] or "current task, open tasks, recent decisions and blockers"
    return {
        "tool": "memory_checkout",
        "arguments": {"query": query},
        "reason": "Refresh memory before major work, after compaction or resume, and before status answers.",
    }


def _line_type(line: bytes) -> bytes | None:
    marker = line.rfind(b',"type":"')
    return line[marker + 9 : -3] if marker != -1 and line.endswith(b'"}\n') else None


def is_memory_activity(line: bytes) -> bool:
    """A log line (stored form) that shows the model consulted memory, or was just reminded to."""
    kind = _line_type(line)
    if kind == REMINDER_TYPE.encode():
        return True
    if kind == b"tool.call.completed":
        return b'"capture":"lifecycle"' in line and (b'"tool":"memory_' in line or b'"tool":"context_' in line)
    if kind in _SESSION_STARTS:
        try:
            injected = json.loads(line).get("payload", {}).get("injected") or {}
        except ValueError:
            return False
        return isinstance(injected, dict) and bool(injected.get("items"))
    return False


def events_since_activity(newest_first: list[bytes]) -> int | None:
    """How many events came after the last memory activity (``None``: none within the lines read)."""
    for index, line in enumerate(newest_first):
        if is_memory_activity(line):
            return index
    return None


def prompt_reminder(prompt: object, newest_first: list[bytes], head_seq: int) -> dict[str, Any] | None:
    """The reminder payload for a prompt, or ``None`` when memory was consulted recently enough."""
    since = events_since_activity(newest_first)
    stale_for = since if since is not None else len(newest_first)
    text = prompt if isinstance(prompt, str) else ""
    if stale_for >= LONG_SESSION_EVENTS:
        reason = "long_session"
    elif stale_for >= STATUS_QUESTION_EVENTS and _STATUS_QUESTION.search(text):
        reason = "status_question"
    else:
        return None
    return {
        "reason": reason,
        "events_since_memory_activity": stale_for,
        "lookback_exhausted": since is None and len(newest_first) < head_seq,
        "recommended_call": recommended_call(text),
    }


def reminder_text(payload: dict[str, Any]) -> str:
    """One line of model context for a reminder."""
    reasons = {
        "long_session": "many events since memory was last consulted",
        "status_question": "a status question, and memory was last consulted a while ago",
    }
    why = reasons.get(str(payload.get("reason")), str(payload.get("reason")))
    return (
        f"[zaxy] Memory reminder ({why}): if the Zaxy MCP tools are available, call memory_checkout for the "
        "current task before answering; its answerability says whether memory can back the answer."
    )
