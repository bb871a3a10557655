"""Local hook error log: where ``zaxy hook-event`` puts failures instead of breaking the host tool.

A hook sink must exit 0 whatever happens, so a failure is written as one JSON line to
``<eventloom>/.zaxy/hooks/errors.jsonl`` (rotated to ``errors.jsonl.1`` past 256 KiB), or, when that folder
cannot be written, to ``$XDG_STATE_HOME/zaxy/hook-errors.jsonl`` (default ``~/.local/state``).
``zaxy hooks status`` reads both. Stdlib only (hook fast path).
"""

from __future__ import annotations

import json
import os
import time

from zaxy_agents.config import DERIVED_DIR_NAME

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

ERROR_LOG_MAX_BYTES = 256 * 1024
ERROR_MESSAGE_MAX_CHARS = 2_000


def error_log_path(eventloom_path: str) -> str:
    return os.path.join(str(eventloom_path), DERIVED_DIR_NAME, "hooks", "errors.jsonl")


def fallback_error_log_path() -> str:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "zaxy", "hook-errors.jsonl")


def record_hook_error(eventloom_path: str | None, record: dict[str, Any]) -> str | None:
    """Append one error record; returns the file written, or ``None`` when no location was writable."""
    line = json.dumps(
        {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **record}, ensure_ascii=False, default=str
    )
    if len(line) > ERROR_MESSAGE_MAX_CHARS * 2:
        line = json.dumps({"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "error": line[:2000]})
    targets = ([error_log_path(eventloom_path)] if eventloom_path else []) + [fallback_error_log_path()]
    for target in targets:
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            try:
                if os.path.getsize(target) > ERROR_LOG_MAX_BYTES:
                    os.replace(target, target + ".1")
            except OSError:
                pass
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")
            return target
        except OSError:
            continue
    return None


def read_hook_errors(eventloom_path: str | None, workspace: str | None = None, limit: int = 5) -> dict[str, Any]:
    """``{"count": n, "recent": [...last limit records...], "files": [...]}`` across both locations.

    The fallback log is shared by every workspace, so from it only records of ``workspace`` are counted.
    """
    count, recent, files = 0, [], []
    primary = error_log_path(eventloom_path) if eventloom_path else None
    for target in ([primary] if primary else []) + [fallback_error_log_path()]:
        try:
            with open(target, encoding="utf-8") as handle:
                lines = handle.readlines()
        except OSError:
            continue
        records = []
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                record = {"error": line.strip()[:500]}
            if target == primary or record.get("workspace") == workspace:
                records.append(record)
        if records:
            files.append(target)
        count += len(records)
        recent.extend(records[-limit:])
    recent.sort(key=lambda record: str(record.get("at", "")))
    return {"count": count, "recent": recent[-limit:], "files": files}
