"""What counts as a procedure step, whether it succeeded, and its normalised label.

Labels abstract away arguments so the same step in two sessions gets the same label: a tool call is its
tool name, a command is its program plus a sub-command word (``git commit``, ``alembic upgrade``, ``pytest``),
a file edit is ``edit <suffix>``. Argument values, paths and outputs never enter a label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from zaxy_agents.eventloom.models import Event

STEP_TYPES = frozenset({"tool.call.completed", "command.completed", "file.edit.applied"})
FAILED_STATUSES = frozenset({"failed", "failure", "error", "errored", "cancelled", "canceled", "timeout", "timed_out"})
SUBCOMMAND = re.compile(r"^[a-z][a-z0-9_-]{0,30}$")
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Zaxy's MCP tools as a host names them: ``memory_append``, ``context_assemble``, ``mcp__zaxy__memory_checkout``.
ZAXY_TOOL = re.compile(r"^(?:mcp__[\w-]+?__)?(?:memory_[a-z_]+|context_assemble)$")


@dataclass(frozen=True, slots=True)
class Step:
    """One actionable event seen as a procedure step."""

    event: Event
    label: str
    ok: bool


def is_self_generated(event: Event) -> bool:
    """Zaxy's own activity: the MCP server's lifecycle capture (``capture: "lifecycle"``) or a host's record of a
    call to one of Zaxy's tools (``memory_*`` / ``context_assemble``, also as ``mcp__<server>__memory_*``). Consulting
    memory is never evidence of the user's work, so it is never a procedure step nor part of an episode."""
    if event.type not in {"tool.call.completed", "tool.call.failed"}:
        return False
    payload = event.payload
    if payload.get("capture") == "lifecycle":
        return True
    return bool(ZAXY_TOOL.match(_text(payload, "tool", "tool_name", "name")))


def step_of(event: Event) -> Step | None:
    """The step an event represents, or ``None`` for events that are not steps (nor Zaxy's own tool calls)."""
    payload = event.payload
    if is_self_generated(event):
        return None
    if event.type == "tool.call.completed":
        tool = _text(payload, "tool", "tool_name", "name")
        if not tool:
            return None
        status = _text(payload, "status").lower()
        ok = status not in FAILED_STATUSES and payload.get("is_error") is not True
        return Step(event, tool[:80], ok)
    if event.type == "command.completed":
        command = _text(payload, "command", "cmd")
        if not command:
            return None
        exit_code = payload.get("exit_code")
        return Step(event, "$ " + command_label(command), exit_code == 0)
    if event.type == "file.edit.applied":
        path = _text(payload, "path", "file_path", "file")
        if not path:
            return None
        suffix = PurePosixPath(path).suffix.lower()
        return Step(event, f"edit {suffix}" if suffix else "edit file", True)
    return None


def command_label(command: str) -> str:
    """``FOO=1 git commit -m x`` -> ``git commit``; ``pytest -q tests/`` -> ``pytest``."""
    tokens = [t for t in command.split() if not ENV_ASSIGNMENT.match(t)]
    if not tokens:
        return command.strip()[:40]
    program = PurePosixPath(tokens[0]).name or tokens[0]
    for token in tokens[1:]:
        if token.startswith("-"):
            continue
        return f"{program} {token}" if SUBCOMMAND.fullmatch(token) else program
    return program


def collapse(steps: list[Step]) -> list[Step]:
    """Consecutive repeats of one label are one step (the first occurrence is the one cited)."""
    collapsed: list[Step] = []
    for step in steps:
        if not collapsed or collapsed[-1].label != step.label:
            collapsed.append(step)
    return collapsed


def _text(payload: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""
