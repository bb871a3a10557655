"""``zaxy hook-event <HookEvent> [--client claude-code|codex] [--eventloom-path P] [--max-chars N] [--mission M]``.

The hook sink Claude Code and Codex run on every lifecycle event. It reads the client's hook JSON from stdin,
maps it to Eventloom events (:mod:`.hook_mapping`), appends them straight to the workspace's log through the
stdlib-only fabric path (no graph, no server, no daemon, no LLM), and on SessionStart prints a bounded,
cited context packet as ``hookSpecificOutput.additionalContext``.

It always exits 0 so the host tool is never broken or blocked: any failure goes to the local hook error log
(``zaxy hooks status`` shows it), and a log lock held by another process is waited for at most 200 ms
(``ZAXY_HOOKS_LOCK_TIMEOUT_MS``) before the events go to the session's spool, which the next writer drains in
order (:mod:`zaxy_agents.storage.files.spool`). Opt-out (``ZAXY_HOOKS_DISABLED=1`` or ``zaxy hooks
disable``) makes it do nothing. Stdlib only; dispatched from ``cli/entry.py`` before Typer, Rich or pydantic
are imported. With a mission named (``--mission`` or ``ZAXY_MISSION``) subagent start and stop also become
Coordinate workers and findings (:mod:`.subagent_missions`).
"""

from __future__ import annotations

import json
import os
import sys

from .reminders import REMINDER_TYPE
from .workspace import CLIENTS, ENV_HOOKS_DISABLED

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any, BinaryIO

ENV_MAX_CHARS = "ZAXY_HOOKS_MAX_CHARS"
ENV_LOCK_TIMEOUT_MS = "ZAXY_HOOKS_LOCK_TIMEOUT_MS"
DEFAULT_LOCK_TIMEOUT_MS = 200  # a held log lock costs the IDE at most this, then the events are spooled
DEFAULT_MAX_CHARS = {"claude-code": 6_000, "codex": 5_000}
USAGE = (
    "usage: zaxy hook-event <HookEvent> [--client claude-code|codex] [--eventloom-path PATH] [--max-chars N] "
    "[--mission MISSION]"
)


class SinkArgs:
    __slots__ = ("client", "event", "eventloom_path", "max_chars", "mission")

    def __init__(self) -> None:
        self.event: str | None = None
        self.client = "claude-code"
        self.eventloom_path: str | None = None
        self.max_chars: int | None = None
        self.mission: str | None = None


def parse_args(argv: list[str]) -> SinkArgs:
    """A tiny argv parser (argparse alone costs more start-up than the whole append)."""
    args = SinkArgs()
    values = iter(argv)
    for token in values:
        option, _, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        if option in ("--client", "--eventloom-path", "--max-chars", "--mission"):
            value = inline or next(values, "")
            if option == "--client":
                if value not in CLIENTS:
                    raise ValueError(f"--client must be one of {', '.join(CLIENTS)}, got {value!r}")
                args.client = value
            elif option == "--eventloom-path":
                args.eventloom_path = value or None
            elif option == "--mission":
                args.mission = value or None
            else:
                args.max_chars = int(value)
        elif token.startswith("-"):
            raise ValueError(f"unknown option {token!r}; {USAGE}")
        elif args.event is None:
            args.event = token
        else:
            raise ValueError(f"unexpected argument {token!r}; {USAGE}")
    return args


def _disabled_by_env() -> bool:
    return os.environ.get(ENV_HOOKS_DISABLED, "").strip().lower() in ("1", "true", "yes", "on")


def run(argv: list[str], stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Handle one hook invocation. Returns 0, always."""
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    context: dict[str, Any] = {"argv": argv}
    try:
        raw = stdin.read()
        if _disabled_by_env():
            return 0
        args = parse_args(argv)
        context["client"] = args.client
        hook = json.loads(raw or b"{}")
        if not isinstance(hook, dict):
            raise ValueError(f"hook input must be a JSON object, got {type(hook).__name__}")
        _handle(args, hook, stdout, context)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            return 0
        _record_failure(context, exc)
    return 0


def _handle(args: SinkArgs, hook: dict[str, Any], stdout: BinaryIO, context: dict[str, Any]) -> None:
    from zaxy_agents.fabric.light import light_append_many

    from .hook_mapping import HookDraft, map_hook
    from .workspace import resolve_workspace

    event_name = str(hook.get("hook_event_name") or args.event or "")
    context["event"] = event_name
    start = (os.environ.get("CLAUDE_PROJECT_DIR") if args.client == "claude-code" else None) or hook.get("cwd")
    workspace = resolve_workspace(start if isinstance(start, str) else None, args.eventloom_path)
    context["workspace"], context["eventloom_path"] = workspace.root, workspace.eventloom_path
    if not workspace.enabled:
        return
    session = workspace.session_for(args.client)
    drafts = map_hook(args.client, event_name, hook)
    output = None
    if event_name == "SessionStart":
        kind = "recovery" if hook.get("source") == "compact" else "bootstrap"
        try:
            packet = _packet(args, workspace, session, kind)
        except Exception as exc:
            _record_failure({**context, "stage": "packet"}, exc)
            packet = None
        if packet is not None:
            for draft in drafts:
                draft.payload["injected"] = packet.summary()
            if not packet.is_empty:
                output = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": packet.text}}
        reminder = _session_start_reminder(hook, drafts)
        if reminder is not None:
            drafts.append(HookDraft(REMINDER_TYPE, reminder, "zaxy"))
    elif event_name == "UserPromptSubmit":
        try:
            reminder = _prompt_reminder(hook, session, workspace.eventloom_path, drafts)
        except Exception as exc:
            _record_failure({**context, "stage": "reminder"}, exc)
            reminder = None
        if reminder is not None:
            from .reminders import reminder_text

            drafts.append(HookDraft(REMINDER_TYPE, reminder, "zaxy"))
            output = {
                "hookSpecificOutput": {
                    "hookEventName": "UserPromptSubmit",
                    "additionalContext": reminder_text(reminder),
                }
            }
    elif event_name in ("PostToolUse", "PostToolUseFailure"):
        reminder = _tool_run_reminder(hook, drafts)
        if reminder is not None:
            drafts.append(HookDraft(REMINDER_TYPE, reminder, "zaxy"))
    captured: list[dict[str, Any]] = []
    try:
        if drafts:
            captured = light_append_many(
                session,
                [draft.as_dict() for draft in drafts],
                eventloom_path=workspace.eventloom_path,
                lock_timeout=_lock_budget(),
                spool=True,
            )
    finally:
        if output is not None:
            stdout.write(json.dumps(output, ensure_ascii=False).encode("utf-8"))
            stdout.flush()
    if event_name in ("SubagentStart", "SubagentStop"):
        _coordinate(args, event_name, hook, captured, workspace.eventloom_path, context)


def _coordinate(
    args: SinkArgs,
    event_name: str,
    hook: dict[str, Any],
    captured: list[dict[str, Any]],
    eventloom_path: str,
    context: dict[str, Any],
) -> None:
    """Subagents as Coordinate workers, when a mission is named; a refusal goes to the hook error log."""
    from .subagent_missions import mission_named, record

    mission = mission_named(args.mission)
    if mission is None:
        return
    try:
        record(args.client, event_name, hook, captured, eventloom_path, mission)
    except Exception as exc:
        _record_failure({**context, "stage": "coordinate", "mission": mission}, exc)


def _lock_budget() -> float:
    """Seconds the hook waits for the log lock before spooling (``ZAXY_HOOKS_LOCK_TIMEOUT_MS``, default 200)."""
    raw = os.environ.get(ENV_LOCK_TIMEOUT_MS, "").strip()
    try:
        return max(0, min(int(raw), 5_000)) / 1000 if raw else DEFAULT_LOCK_TIMEOUT_MS / 1000
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT_MS / 1000


def _base(drafts: list[Any]) -> dict[str, Any]:
    first = drafts[0].payload if drafts else {}
    return {key: first[key] for key in ("client", "client_session_id", "hook_event_name") if key in first}


def _session_start_reminder(hook: dict[str, Any], drafts: list[Any]) -> dict[str, Any] | None:
    from .reminders import SESSION_START_REASONS, recommended_call

    reason = SESSION_START_REASONS.get(str(hook.get("source") or "startup"))
    if reason is None:
        return None
    return {**_base(drafts), "reason": reason, "recommended_call": recommended_call()}


def _prompt_reminder(hook: dict[str, Any], session: str, eventloom_path: str, drafts: list[Any]) -> Any:
    from zaxy_agents.fabric.light import light_recent_lines

    from .reminders import LOOKBACK, prompt_reminder

    head_seq, newest_first = light_recent_lines(session, LOOKBACK, eventloom_path=eventloom_path)
    if not head_seq:
        return None
    reminder = prompt_reminder(hook.get("prompt"), newest_first, head_seq)
    return None if reminder is None else {**_base(drafts), **reminder}


def _tool_run_reminder(hook: dict[str, Any], drafts: list[Any]) -> dict[str, Any] | None:
    from .reminders import LONG_TOOL_RUN_MS, recommended_call

    duration = hook.get("duration_ms")
    if not isinstance(duration, int | float) or duration < LONG_TOOL_RUN_MS:
        return None
    return {
        **_base(drafts),
        "reason": "long_tool_run",
        "tool": hook.get("tool_name"),
        "duration_ms": duration,
        "recommended_call": recommended_call(),
    }


def _packet(args: SinkArgs, workspace: Any, session: str, kind: str) -> Any:
    from zaxy_agents.fabric.light import light_packet, light_session_names

    max_chars = args.max_chars
    if max_chars is None:
        raw = os.environ.get(ENV_MAX_CHARS)
        max_chars = int(raw) if raw else DEFAULT_MAX_CHARS[args.client]
    others = workspace.shared_sessions(session, light_session_names(eventloom_path=workspace.eventloom_path))
    return light_packet(session, kind, max_chars, eventloom_path=workspace.eventloom_path, sessions=others)


def _record_failure(context: dict[str, Any], exc: BaseException) -> None:
    """Best effort: the error log must not raise either."""
    try:
        import traceback

        from zaxy_agents.fabric.hook_state import record_hook_error

        if "eventloom_path" not in context:  # failed before the payload named a cwd: the process cwd is the project
            try:
                from .workspace import resolve_workspace

                workspace = resolve_workspace(os.getcwd())
                context["workspace"], context["eventloom_path"] = workspace.root, workspace.eventloom_path
            except Exception:  # the user-level fallback log still takes the record
                pass
        record = {
            **{key: value for key, value in context.items() if key != "eventloom_path"},
            "error_type": type(exc).__name__,
            "error": str(exc)[:2000],
            "traceback": "".join(traceback.format_exception(exc))[-1500:],
        }
        record_hook_error(context.get("eventloom_path"), record)
    except BaseException:
        pass
