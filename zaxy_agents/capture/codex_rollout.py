"""Codex rollout lines -> captured events.

Rollouts live at ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl``, one JSON line
``{"timestamp", "type", "payload"}`` per record. Mapping (both the current 0.16x format and the earlier one):

* ``session_meta`` (first line; has ``cwd``) -> ``transcript.session_started``
* ``response_item`` ``message`` user/assistant text -> ``transcript.turn`` (client-injected blocks such as
  ``<environment_context>`` and developer messages are skipped)
* ``event_msg`` ``item_completed`` ``CommandExecution`` / ``exec_command_end`` -> ``command.completed``
  (command, exit code, bounded output); a shell ``function_call`` whose result only shows up as
  ``function_call_output`` falls back to the exit code printed there
* ``item_completed`` ``FileChange`` / ``patch_apply_end`` / ``custom_tool_call`` ``apply_patch`` ->
  ``file.edit.applied`` per file (path, operation, line counts; never content)
* other ``function_call`` / ``custom_tool_call`` -> ``tool.call.completed`` (argument keys only)
* ``compacted`` -> ``transcript.compacted`` (the summary message). Codex writes it together with the
  ``event_msg`` ``context_compacted`` / ``item_completed`` ``ContextCompaction`` markers of the same
  compaction, which carry no summary, so those are not mapped again (one event per compaction)

The mapper keeps a little state (pending calls, call ids already emitted), so a reader replays a file from
its first line and keeps only events past its cursor.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .edits import codex_file_changes, parse_apply_patch
from .transcript_common import (
    Captured,
    command_event,
    compaction_event,
    edit_events,
    is_harness_text,
    tool_event,
    turn,
)

CLIENT = "codex"
SOURCE_KIND = "codex-rollout"
SHELL_FUNCTIONS = frozenset({"exec_command", "exec", "shell", "local_shell", "container.exec", "shell_command"})
_EXIT_IN_OUTPUT = re.compile(r"(?:Process exited with code|Exit code:?)\s+(-?\d+)")


def read_session_meta(first_line: str) -> dict[str, Any] | None:
    """The ``session_meta`` payload of a rollout's first line, or ``None`` when it is not one."""
    try:
        record = json.loads(first_line)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("type") != "session_meta":
        return None
    payload = record.get("payload")
    return payload if isinstance(payload, dict) else None


class CodexRolloutMapper:
    """Stateful mapper for one rollout file; feed records in file order."""

    def __init__(self) -> None:
        self.pending: dict[str, dict[str, Any]] = {}
        self.emitted: set[str] = set()
        self.cwd: str | None = None  # resolves relative patch paths (one dedupe key per edited file)

    def feed(self, record: dict[str, Any]) -> list[Captured]:
        kind = record.get("type")
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
        return self._map(kind, payload)

    def _map(self, kind: object, payload: dict[str, Any]) -> list[Captured]:
        if kind in ("session_meta", "turn_context") and isinstance(payload.get("cwd"), str):
            self.cwd = payload["cwd"]
        if kind == "session_meta":
            fields = {k: payload.get(k) for k in ("cwd", "cli_version", "originator", "source") if payload.get(k)}
            session_id = payload.get("id") or payload.get("session_id")
            return [
                Captured(
                    "transcript.session_started", {"client": CLIENT, "client_session_id": session_id, **fields}, CLIENT
                )
            ]
        if kind == "response_item":
            return self._response_item(payload)
        if kind == "event_msg":
            return self._event_msg(payload)
        if kind == "compacted":
            return [compaction_event(CLIENT, payload.get("message"))]
        return []

    def _response_item(self, item: dict[str, Any]) -> list[Captured]:
        item_type = item.get("type")
        if item_type == "message":
            role = item.get("role")
            if role not in ("user", "assistant"):
                return []
            parts = item.get("content") if isinstance(item.get("content"), list) else []
            text = "\n".join(
                str(part.get("text")) for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str)
            ).strip()
            if not text or (role == "user" and is_harness_text(text)):
                return []
            meta = item.get("internal_chat_message_metadata_passthrough")
            ref = meta.get("turn_id") if role == "user" and isinstance(meta, dict) else None
            return [turn(str(role), text, CLIENT, ref=ref)]
        call_id = item.get("call_id")
        if item_type in ("function_call", "custom_tool_call", "local_shell_call") and isinstance(call_id, str):
            self.pending[call_id] = {
                "name": str(item.get("name") or ("local_shell" if item_type == "local_shell_call" else "")),
                "arguments": item.get("arguments"),
                "input": item.get("input"),
                "action": item.get("action"),
            }
            return []
        if item_type in ("function_call_output", "custom_tool_call_output") and isinstance(call_id, str):
            return self._call_output(call_id, item.get("output"))
        return []

    def _call_output(self, call_id: str, output: object) -> list[Captured]:
        call = self.pending.pop(call_id, None)
        if call is None or call_id in self.emitted:
            return []
        self.emitted.add(call_id)
        name = call["name"]
        text = output.get("content") if isinstance(output, dict) else output
        if name in SHELL_FUNCTIONS:
            self.pending[call_id] = call
            command = self._pending_command(call_id)
            del self.pending[call_id]
            command_string = command if isinstance(command, str) else " ".join(map(str, command or []))
            if command_string.lstrip().startswith("apply_patch"):
                return edit_events(CLIENT, "apply_patch", parse_apply_patch(command_string), call_id, cwd=self.cwd)
            match = _EXIT_IN_OUTPUT.search(text) if isinstance(text, str) else None
            return [command_event(CLIENT, command, int(match.group(1)) if match else None, text, call_id)]
        if name == "apply_patch":
            patch = call["input"] or call["arguments"]
            return edit_events(CLIENT, "apply_patch", parse_apply_patch(patch), call_id, cwd=self.cwd)
        keys = list(_json_object(call["arguments"])) if call["arguments"] is not None else []
        return [tool_event(CLIENT, name, keys, call_id)]

    def _event_msg(self, message: dict[str, Any]) -> list[Captured]:
        message_type = message.get("type")
        if message_type in ("item_completed", "itemCompleted") and isinstance(message.get("item"), dict):
            item = message["item"]
            item_type, call_id = str(item.get("type", "")).lower(), item.get("id")
            if item_type in ("commandexecution", "command_execution"):  # PascalCase, or camelCase app-server items
                return self._once(
                    call_id,
                    lambda: [
                        command_event(
                            CLIENT,
                            item.get("command"),
                            _first_of(item, "exit_code", "exitCode"),
                            _first_of(item, "aggregated_output", "aggregatedOutput"),
                            call_id,
                        )
                    ],
                )
            if item_type in ("filechange", "file_change"):
                return self._once(
                    call_id,
                    lambda: edit_events(
                        CLIENT, "apply_patch", codex_file_changes(item.get("changes")), call_id, cwd=self.cwd
                    ),
                )
            return []
        call_id = message.get("call_id")
        if message_type == "exec_command_begin" and isinstance(call_id, str):
            self.pending.setdefault(call_id, {"name": "shell", "arguments": None, "input": None, "action": None})
            self.pending[call_id]["command"] = message.get("command")
            return []
        if message_type == "exec_command_end":
            output = _first_of(message, "aggregated_output", "aggregatedOutput", "formatted_output", "stdout")
            if not output and message.get("stderr"):
                output = message.get("stderr")
            command = message.get("command") or self._pending_command(call_id)
            exit_code = _first_of(message, "exit_code", "exitCode")
            return self._once(call_id, lambda: [command_event(CLIENT, command, exit_code, output, call_id)])
        if message_type == "patch_apply_begin" and isinstance(call_id, str):
            self.pending.setdefault(call_id, {"name": "apply_patch", "arguments": None, "input": None, "action": None})
            self.pending[call_id]["changes"] = message.get("changes")
            return []
        if message_type == "patch_apply_end":
            summaries = codex_file_changes(message.get("changes") or self.pending.get(str(call_id), {}).get("changes"))
            if not summaries and isinstance(call_id, str) and call_id in self.pending:
                call = self.pending[call_id]
                summaries = parse_apply_patch(call["input"] or _json_object(call["arguments"]).get("input"))
            if not summaries or message.get("success") is False:
                return []
            return self._once(call_id, lambda: edit_events(CLIENT, "apply_patch", summaries, call_id, cwd=self.cwd))
        return []

    def _pending_command(self, call_id: object) -> object:
        """The command of a shell call, from ``exec_command_begin`` or the ``function_call`` arguments."""
        call = self.pending.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            return None
        if call.get("command"):
            return call["command"]
        arguments = _json_object(call.get("arguments"))
        return arguments.get("cmd") or arguments.get("command") or (call.get("action") or {}).get("command")

    def _once(self, call_id: object, build: Any) -> list[Captured]:
        if isinstance(call_id, str) and call_id:
            if call_id in self.emitted:
                return []
            self.emitted.add(call_id)
            self.pending.pop(call_id, None)
        return build()


def _first_of(record: dict[str, Any], *keys: str) -> Any:
    """The first present value among ``keys`` (rollouts name fields in snake_case or camelCase)."""
    for key in keys:
        if record.get(key) is not None:
            return record[key]
    return None


def _json_object(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}
