"""Claude Code transcript lines -> captured events.

Transcripts live at ``~/.claude/projects/<cwd with every non-alphanumeric character as ->/<session>.jsonl``
(``CLAUDE_CONFIG_DIR`` replaces ``~/.claude``). Mapping:

* ``user`` text (not meta, not slash-command plumbing) -> ``transcript.turn`` (role user)
* ``assistant`` text blocks -> ``transcript.turn`` (role assistant); ``tool_use`` blocks are held until
  their ``tool_result`` arrives
* ``tool_result`` of ``Bash`` -> ``command.completed`` (exit code 0, or ``Exit code N`` of an error result);
  of ``Edit``/``MultiEdit``/``Write``/``NotebookEdit`` -> ``file.edit.applied`` per file (line counts from
  the recorded ``toolUseResult``; never content); of anything else -> ``tool.call.completed``/``failed``
* ``system`` ``compact_boundary`` + the following ``isCompactSummary`` user line -> ``transcript.compacted``
  (the client's summary and trigger)
* an ``assistant`` line that is the client's own error (``isApiErrorMessage``, model ``<synthetic>``: "Not
  logged in", API failures) -> ``client.error`` (``error``, ``message``), never an assistant turn

Sidechain (subagent) lines are skipped: their transcripts are separate files.
"""

from __future__ import annotations

from typing import Any

from .edits import claude_edit_summaries
from .hook_mapping import EDIT_TOOLS, SHELL_TOOLS, exit_code_from_text
from .transcript_common import (
    Captured,
    client_error,
    command_event,
    compaction_event,
    edit_events,
    is_harness_text,
    tool_event,
    turn,
)

CLIENT = "claude-code"
SOURCE_KIND = "claude-transcript"


def project_dir_name(cwd: str) -> str:
    """Claude Code's folder name for a working directory (its own encoding, including the long-path form)."""
    # JavaScript's /[^a-zA-Z0-9]/g works on UTF-16 code units: a character outside the BMP becomes two dashes.
    name = "".join(ch if ch.isascii() and ch.isalnum() else "-" * (2 if ord(ch) > 0xFFFF else 1) for ch in cwd)
    if len(name) <= 200:
        return name
    return f"{name[:200]}-{_base36(abs(_java_string_hash(cwd)))}"


def _java_string_hash(text: str) -> int:
    value = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for index in range(0, len(data), 2):
        value = (value * 31 + int.from_bytes(data[index : index + 2], "little")) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if not number:
            return out


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text")) for block in content if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


class ClaudeTranscriptMapper:
    """Stateful mapper for one transcript file; feed records in file order."""

    def __init__(self) -> None:
        self.pending: dict[str, dict[str, Any]] = {}
        self.compact_trigger: str | None = None
        self.prompt_id: str | None = None  # of the last user prompt: what a client error answers

    def feed(self, record: dict[str, Any]) -> list[Captured]:
        if record.get("isSidechain"):
            return []
        kind = record.get("type")
        if kind == "system" and record.get("subtype") == "compact_boundary":
            metadata = record.get("compactMetadata") or record.get("compact_metadata") or {}
            self.compact_trigger = metadata.get("trigger") if isinstance(metadata, dict) else None
            return []
        message = record.get("message") if isinstance(record.get("message"), dict) else {}
        if kind == "assistant" and (record.get("isApiErrorMessage") or message.get("model") == "<synthetic>"):
            # "Not logged in", API failures: the client speaking about itself, not the assistant
            error = record.get("error") or "api_error"
            return [client_error(CLIENT, error, _text_of(message.get("content")), prompt_id=self.prompt_id)]
        if kind == "assistant":
            return self._assistant(message)
        if kind == "user":
            if isinstance(record.get("promptId"), str):
                self.prompt_id = record["promptId"]
            return self._user(record, message)
        return []

    def _assistant(self, message: dict[str, Any]) -> list[Captured]:
        content = message.get("content")
        events: list[Captured] = []
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                self.pending[block["id"]] = {"name": str(block.get("name") or ""), "input": block.get("input") or {}}
        text = _text_of(content).strip()
        if text:
            events.append(turn("assistant", text, CLIENT))
        return events

    def _user(self, record: dict[str, Any], message: dict[str, Any]) -> list[Captured]:
        content = message.get("content")
        if record.get("isCompactSummary"):
            trigger, self.compact_trigger = self.compact_trigger, None
            return [compaction_event(CLIENT, _text_of(content), trigger)]
        if record.get("isMeta"):
            return []
        events: list[Captured] = []
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    events.extend(self._tool_result(block, record.get("toolUseResult")))
        text = _text_of(content).strip()
        if text and not is_harness_text(text):
            events.append(turn("user", text, CLIENT, ref=record.get("promptId")))
        return events

    def _tool_result(self, block: dict[str, Any], recorded: object) -> list[Captured]:
        call_id = block.get("tool_use_id")
        call = self.pending.pop(call_id, None) if isinstance(call_id, str) else None
        if call is None:
            return []
        name, tool_input = call["name"], call["input"] if isinstance(call["input"], dict) else {}
        failed = bool(block.get("is_error"))
        output = _text_of(block.get("content"))
        if name in SHELL_TOOLS:
            exit_code = exit_code_from_text(output) if failed else 0
            if isinstance(recorded, dict) and not failed:
                output = "\n".join(str(recorded.get(key) or "") for key in ("stdout", "stderr")).strip()
                if recorded.get("interrupted"):
                    exit_code = None
            return [command_event(CLIENT, tool_input.get("command"), exit_code, output, call_id)]
        if name in EDIT_TOOLS and not failed:
            summaries = claude_edit_summaries(name, tool_input, recorded)
            if summaries:
                return edit_events(CLIENT, name, summaries, call_id)
        return [tool_event(CLIENT, name, [str(key) for key in tool_input], call_id, ok=not failed)]
