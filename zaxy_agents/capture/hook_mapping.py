"""Claude Code / Codex hook payloads -> Eventloom event drafts.

Both clients send the same JSON shape on stdin (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name`` plus per-event fields). The mapping keeps what makes memory useful and nothing that
should not be stored:

==========================  ===========================================================================
hook                        event (payload highlights)
==========================  ===========================================================================
SessionStart startup        ``hook.session_started`` / resume ``hook.resumed`` / clear ``hook.cleared`` /
                            compact ``hook.compact_session_started`` (plus what context was injected)
UserPromptSubmit            ``hook.user_prompt_submitted`` (redacted prompt text, bounded), plus a
                            ``fact.asserted`` / ``memory.invalidated`` per memory directive in it
                            ("remember that ...", "from now on ...", "forget ..."; :mod:`.directives`)
PostToolUse Bash            ``command.completed`` (command, exit code, bounded redacted output)
PostToolUse edit tools      ``file.edit.applied`` per file (path, operation, line counts; never content)
PostToolUse other tools     ``tool.call.completed`` (tool name and argument *keys* only)
PostToolUseFailure          the same types with ``ok: false`` (Bash exit code parsed from the error)
PreCompact / PostCompact    ``hook.precompact`` / ``hook.postcompact`` (client compact summary, bounded)
Stop / SubagentStop         ``hook.stopped`` / ``hook.subagent_stopped`` (last assistant message, bounded)
SubagentStart               ``hook.subagent_started`` (agent id and type)
StopFailure (Claude Code)   ``client.error`` (the client's error, e.g. not logged in: never an assistant turn)
SessionEnd                  ``hook.session_ended`` (reason)
==========================  ===========================================================================

Secrets are redacted later by the append path (before hashing). Stdlib only (hook fast path).
"""

from __future__ import annotations

import re

from .directives import directives
from .edits import claude_edit_summaries, parse_apply_patch

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

PROMPT_MAX_CHARS = 8_000
SUMMARY_MAX_CHARS = 8_000
MESSAGE_MAX_CHARS = 2_000
OUTPUT_MAX_CHARS = 2_000
COMMAND_MAX_CHARS = 2_000

SHELL_TOOLS = frozenset(
    {"Bash", "bash", "shell", "exec", "exec_command", "local_shell", "container.exec", "unified_exec", "shell_command"}
)
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
PATCH_TOOLS = frozenset({"apply_patch"})
SESSION_START_TYPES = {
    "startup": "hook.session_started",
    "resume": "hook.resumed",
    "clear": "hook.cleared",
    "compact": "hook.compact_session_started",
}
_SIMPLE_EVENTS = {
    "PreCompact": "hook.precompact",
    "PostCompact": "hook.postcompact",
    "Stop": "hook.stopped",
    "SubagentStart": "hook.subagent_started",
    "SubagentStop": "hook.subagent_stopped",
    "SessionEnd": "hook.session_ended",
}
IGNORED_EVENTS = frozenset({"PreToolUse", "PermissionRequest", "PreModelRequest"})
_EXIT_CODE = re.compile(r"(?:Exit code|exited with code|exit status)[:\s]+(-?\d+)", re.IGNORECASE)
# Codex's formatted tool output starts with "Exit code: N" / "Process exited with code N" lines.
_EXIT_HEADER = re.compile(r"^(?:Exit code:|Process exited with code)\s*(-?\d+)\s*$", re.MULTILINE)


class HookDraft:
    """One event to append: type, payload, actor (plain class: no dataclasses on the hook path)."""

    __slots__ = ("actor", "payload", "type")

    def __init__(self, type: str, payload: dict[str, Any], actor: str) -> None:
        self.type, self.payload, self.actor = type, payload, actor

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.type, "payload": self.payload, "actor": self.actor}


def bounded(text: object, limit: int) -> str | None:
    """``text`` cut to ``limit`` characters, keeping head and tail (errors usually end with the cause)."""
    if text is None:
        return None
    if not isinstance(text, str):
        text = str(text)
    if len(text) <= limit:
        return text
    keep = max(0, limit - 40)
    head, tail = keep * 2 // 3, keep - keep * 2 // 3
    return f"{text[:head]}\n…[{len(text) - head - tail} chars omitted]…\n{text[len(text) - tail :]}"


def exit_code_from_text(text: object) -> int | None:
    match = _EXIT_CODE.search(text) if isinstance(text, str) else None
    return int(match.group(1)) if match else None


def base_payload(client: str, hook: dict[str, Any]) -> dict[str, Any]:
    """Fields every hook event carries: which client session, where, which hook."""
    payload: dict[str, Any] = {"client": client, "hook_event_name": hook.get("hook_event_name")}
    for source, target in (("session_id", "client_session_id"), ("cwd", "cwd"), ("turn_id", "client_turn_id")):
        value = hook.get(source)
        if isinstance(value, str) and value:
            payload[target] = value
    return payload


def map_hook(client: str, event_name: str, hook: dict[str, Any]) -> list[HookDraft]:
    """The events one hook invocation produces (empty for hooks Zaxy does not record)."""
    if event_name in IGNORED_EVENTS:
        return []
    base = base_payload(client, hook)
    if event_name == "SessionStart":
        source = str(hook.get("source") or "startup")
        return [HookDraft(SESSION_START_TYPES.get(source, "hook.session_started"), {**base, "source": source}, client)]
    if event_name == "UserPromptSubmit":
        payload = {**base, "prompt": bounded(hook.get("prompt") or "", PROMPT_MAX_CHARS)}
        if isinstance(hook.get("prompt_id"), str):
            payload["prompt_id"] = hook["prompt_id"]
        drafts = [HookDraft("hook.user_prompt_submitted", payload, "user")]
        for event_type, fields in directives(hook.get("prompt")):
            source = {key: payload[key] for key in ("client", "client_session_id", "prompt_id") if key in payload}
            drafts.append(HookDraft(event_type, {**fields, **source}, "user"))
        return drafts
    if event_name in ("PostToolUse", "PostToolUseFailure"):
        return map_tool_use(client, base, hook, ok=event_name == "PostToolUse")
    if event_name == "StopFailure":  # the turn ended on an error of the client (not logged in, API failure)
        payload = {**base, "error": str(hook.get("error") or "unknown")[:200]}
        if isinstance(hook.get("prompt_id"), str):
            payload["prompt_id"] = hook["prompt_id"]
        if hook.get("last_assistant_message"):
            payload["message"] = bounded(hook["last_assistant_message"], MESSAGE_MAX_CHARS)
        return [HookDraft("client.error", payload, client)]
    simple = _SIMPLE_EVENTS.get(event_name)
    if simple is not None:
        return [HookDraft(simple, {**base, **_simple_fields(event_name, hook)}, client)]
    return [HookDraft("hook.event_received", {**base, "keys": sorted(str(key) for key in hook)[:50]}, client)]


def _simple_fields(event_name: str, hook: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if event_name in ("PreCompact", "PostCompact"):
        fields["trigger"] = hook.get("trigger")
        if hook.get("custom_instructions"):
            fields["custom_instructions"] = bounded(hook["custom_instructions"], MESSAGE_MAX_CHARS)
        if hook.get("compact_summary"):
            fields["compact_summary"] = bounded(hook["compact_summary"], SUMMARY_MAX_CHARS)
    elif event_name in ("Stop", "SubagentStart", "SubagentStop"):
        if hook.get("last_assistant_message"):
            fields["last_assistant_message"] = bounded(hook["last_assistant_message"], MESSAGE_MAX_CHARS)
        for key in ("agent_id", "agent_type"):
            if hook.get(key):
                fields[key] = hook[key]
    elif event_name == "SessionEnd":
        fields["reason"] = hook.get("reason")
    return fields


def map_tool_use(client: str, base: dict[str, Any], hook: dict[str, Any], *, ok: bool) -> list[HookDraft]:
    tool = str(hook.get("tool_name") or "")
    tool_input = hook.get("tool_input") if isinstance(hook.get("tool_input"), dict) else {}
    response = hook.get("tool_response")
    common = {**base, "tool": tool}
    if isinstance(hook.get("tool_use_id"), str):
        common["tool_use_id"] = hook["tool_use_id"]
    if isinstance(hook.get("duration_ms"), int | float):
        common["duration_ms"] = hook["duration_ms"]
    if not ok:
        common["ok"] = False
        common["error"] = bounded(hook.get("error"), OUTPUT_MAX_CHARS)
    if tool in SHELL_TOOLS:
        command = tool_input.get("command") or tool_input.get("cmd") or ""
        if isinstance(command, list):
            command = " ".join(str(part) for part in command)
        if isinstance(command, str) and command.lstrip().startswith("apply_patch"):
            files = parse_apply_patch(command)
            if files:
                return [HookDraft("file.edit.applied", {**common, **summary}, client) for summary in files]
        return [HookDraft("command.completed", {**common, **command_result(str(command), response, ok, hook)}, client)]
    if ok and tool in EDIT_TOOLS:
        summaries = claude_edit_summaries(tool, tool_input, response)
        if summaries:
            return [HookDraft("file.edit.applied", {**common, **summary}, client) for summary in summaries]
    if ok and tool in PATCH_TOOLS:
        patch = tool_input.get("input") or tool_input.get("patch") or tool_input.get("command")
        summaries = parse_apply_patch(patch)
        if summaries:
            return [HookDraft("file.edit.applied", {**common, **summary}, client) for summary in summaries]
    payload = {**common, "argument_keys": sorted(str(key) for key in tool_input)[:50]}
    return [HookDraft("tool.call.completed" if ok else "tool.call.failed", payload, client)]


def command_result(command: str, response: object, ok: bool, hook: dict[str, Any]) -> dict[str, Any]:
    """Command text, exit code (when the client reports or implies one) and bounded output.

    Claude Code fires PostToolUse only for commands that succeeded (exit code 0) and PostToolUseFailure with
    ``"Exit code N ..."`` otherwise; Codex reports output as a plain string without an exit code, so the code
    is parsed from the text when present and left ``null`` when unknown.
    """
    result: dict[str, Any] = {"command": bounded(command, COMMAND_MAX_CHARS)}
    exit_code: int | None = None
    if isinstance(response, dict):
        for key in ("exit_code", "exitCode", "returncode"):
            if isinstance(response.get(key), int):
                exit_code = response[key]
        stdout, stderr = response.get("stdout"), response.get("stderr")
        if stdout:
            result["stdout"] = bounded(stdout, OUTPUT_MAX_CHARS)
        if stderr:
            result["stderr"] = bounded(stderr, OUTPUT_MAX_CHARS)
        if response.get("interrupted"):
            result["interrupted"] = True
        if exit_code is None and ok and not response.get("interrupted") and ("stdout" in response):
            exit_code = 0  # Claude Code: PostToolUse (not ...Failure) means the command succeeded
    elif isinstance(response, str) and response:
        result["output"] = bounded(response, OUTPUT_MAX_CHARS)  # Codex: output, an exit code only in its header
        header = _EXIT_HEADER.search(response[:400])
        if header is not None:
            exit_code = int(header.group(1))
    if not ok and exit_code is None:
        exit_code = exit_code_from_text(hook.get("error"))
    result["exit_code"] = exit_code
    return result
