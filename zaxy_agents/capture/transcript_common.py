"""What transcript/rollout mappers share: the captured-event shape and its source reference.

Every captured event carries ``source = {"kind", "file", "line"}`` (idempotency: the capture cursor is
rebuilt from these refs when its cache is lost) and, when the client gives one, ``client_ref`` naming the
tool call or prompt, so capture skips what the live hooks already recorded.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from zaxy_agents.fabric.capture_ops import edit_key

from .hook_mapping import OUTPUT_MAX_CHARS, PROMPT_MAX_CHARS, bounded

TEXT_MAX_CHARS = PROMPT_MAX_CHARS
_TAGGED_BLOCK = re.compile(r"^\s*<([a-z][a-z0-9_ -]*)>", re.IGNORECASE)


class Captured:
    """One event produced from one transcript line."""

    __slots__ = ("actor", "dedupe_key", "payload", "type")

    def __init__(self, type: str, payload: dict[str, Any], actor: str, dedupe_key: str | None = None) -> None:
        self.type, self.payload, self.actor, self.dedupe_key = type, payload, actor, dedupe_key

    def draft(self, source_kind: str, file: str, line: int) -> dict[str, Any]:
        payload = {**self.payload, "source": {"kind": source_kind, "file": file, "line": line}}
        return {"type": self.type, "payload": payload, "actor": self.actor}


def prompt_key(ref: object) -> str | None:
    return f"prompt:{ref}" if isinstance(ref, str) and ref else None


def tool_key(ref: object) -> str | None:
    return f"tool:{ref}" if isinstance(ref, str) and ref else None


def is_harness_text(text: str) -> bool:
    """Client-injected blocks (``<environment_context>``, ``<command-name>``, AGENTS.md, ...), not user words."""
    stripped = text.lstrip()
    return bool(_TAGGED_BLOCK.match(stripped)) or stripped.startswith(("# AGENTS.md", "Caveat: The messages below"))


def turn(role: str, text: str, client: str, *, ref: str | None = None) -> Captured:
    payload: dict[str, Any] = {"client": client, "role": role, "text": bounded(text, TEXT_MAX_CHARS)}
    if ref:
        payload["client_ref"] = ref
    return Captured("transcript.turn", payload, "user" if role == "user" else client, prompt_key(ref))


def shell_text(command: object) -> str:
    """A command as the user would type it: ``["/bin/bash", "-lc", "ls"]`` -> ``ls``."""
    if isinstance(command, list):
        parts = [str(part) for part in command]
        if len(parts) >= 3 and parts[-2] in ("-lc", "-c"):
            return parts[-1]
        return shlex.join(parts)
    return str(command or "")


def command_event(client: str, command: object, exit_code: object, output: object, call_id: object) -> Captured:
    payload: dict[str, Any] = {
        "client": client,
        "tool": "Bash",
        "command": bounded(shell_text(command), 2_000),
        "exit_code": exit_code if isinstance(exit_code, int) else None,
    }
    if output:
        payload["output"] = bounded(output, OUTPUT_MAX_CHARS)
    if isinstance(call_id, str) and call_id:
        payload["tool_use_id"] = call_id
    return Captured("command.completed", payload, client, tool_key(call_id))


def edit_events(
    client: str, tool: str, summaries: list[dict[str, Any]], call_id: object, *, cwd: str | None = None
) -> list[Captured]:
    events = []
    for summary in summaries:
        payload = {"client": client, "tool": tool, **summary}
        if isinstance(call_id, str) and call_id:
            payload["tool_use_id"] = call_id
        events.append(Captured("file.edit.applied", payload, client, edit_key(call_id, summary.get("path"), cwd)))
    return events


def client_error(client: str, error: object, message: object, *, prompt_id: object = None) -> Captured:
    """An error of the client itself (not logged in, API failure): never the assistant speaking. Keyed by the
    prompt it answered, so the live hook's record (StopFailure, same ``prompt_id``) is not repeated."""
    payload: dict[str, Any] = {"client": client, "error": str(error or "unknown")[:200]}
    if message:
        payload["message"] = bounded(message, OUTPUT_MAX_CHARS)
    key = None
    if isinstance(prompt_id, str) and prompt_id:
        payload["prompt_id"] = prompt_id
        key = f"error:{prompt_id}"
    return Captured("client.error", payload, client, key)


def tool_event(client: str, tool: str, argument_keys: list[str], call_id: object, *, ok: bool = True) -> Captured:
    payload: dict[str, Any] = {"client": client, "tool": tool, "argument_keys": sorted(argument_keys)[:50]}
    if not ok:
        payload["ok"] = False
    if isinstance(call_id, str) and call_id:
        payload["tool_use_id"] = call_id
    return Captured("tool.call.completed" if ok else "tool.call.failed", payload, client, tool_key(call_id))


def compaction_event(client: str, summary: object, trigger: object = None) -> Captured:
    payload: dict[str, Any] = {"client": client, "summary": bounded(summary, TEXT_MAX_CHARS) or ""}
    if trigger:
        payload["trigger"] = trigger
    return Captured("transcript.compacted", payload, client)
