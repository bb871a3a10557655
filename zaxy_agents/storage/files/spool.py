"""The hook spool: events a hook could not append within its lock budget wait here for the next writer.

An IDE hook must never stall its host (Claude Code waits for every hook). When another process holds a
session's log lock longer than the hook's budget (~200 ms), the hook writes its validated, redacted drafts to
a spool file instead and exits 0. The next writer of that session (any: a hook, the MCP server, the CLI, the
Python API) drains the spool under the log lock *before* its own events, oldest spool file first, records an
``eventloom.spool_drained`` event saying what it drained, and only then removes the files. Nothing is lost
and nothing is written twice: a drain interrupted after its write is detected by event id on the next one.

Layout: ``<eventloom>/.spool/<session>/<time_ns>-<pid>.jsonl``, one JSON draft per line
(``type``, ``actor``, ``payload_json``, ``security``, ``event_id``, ``timestamp``). Each file is written under a
temporary name and renamed into place, so a reader never sees half a file and writers never contend. The
event keeps the time it was captured (its ``timestamp``), not the time it was drained.

Stdlib only (hook fast path).
"""

from __future__ import annotations

import json
import os
import time

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

SPOOL_DIR_NAME = ".spool"
DRAINED_TYPE = "eventloom.spool_drained"
STALE_TEMP_SECONDS = 3600
SPOOL_SUFFIX = ".jsonl"


def spool_dir(root: str, session: str) -> str:
    return os.path.join(root, SPOOL_DIR_NAME, session)


def write_spool(root: str, session: str, drafts: list[Any]) -> str:
    """Write prepared drafts (with ids and capture timestamps assigned here) to a new spool file; returns it."""
    from zaxy_agents.eventloom.sealing import new_event_id, utc_timestamp

    folder = spool_dir(root, session)
    os.makedirs(folder, exist_ok=True)
    lines = []
    for draft in drafts:
        draft.event_id = draft.event_id or new_event_id()
        draft.timestamp = draft.timestamp or utc_timestamp()
        record = {
            "type": draft.type,
            "actor": draft.actor,
            "payload_json": draft.payload_json,
            "security": draft.security,
            "event_id": draft.event_id,
            "timestamp": draft.timestamp,
        }
        if draft.payload_json is None:
            record["payload"] = draft.payload
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    name = f"{time.time_ns():020d}-{os.getpid()}{SPOOL_SUFFIX}"
    final = os.path.join(folder, name)
    temporary = final + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, final)
    return final


def pending_files(root: str, session: str) -> list[str]:
    """Spool files waiting for ``session``, oldest first (``[]`` without a syscall beyond one listdir)."""
    folder = spool_dir(root, session)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    files = []
    now = time.time()
    for name in names:
        path = os.path.join(folder, name)
        if name.endswith(SPOOL_SUFFIX):
            files.append(path)
        elif name.endswith(".tmp"):  # a hook killed mid-write: never acknowledged, never visible
            try:
                if now - os.path.getmtime(path) > STALE_TEMP_SECONDS:
                    os.unlink(path)
            except OSError:
                pass
    return sorted(files)


def read_spool(paths: list[str]) -> list[Any]:
    """The drafts of ``paths`` in order (unreadable lines are skipped: a spool file is written whole)."""
    from .jsonl_file import PreparedDraft

    drafts = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                record = json.loads(line)
                payload_json = record.get("payload_json")
                payload = json.loads(payload_json) if payload_json is not None else record["payload"]
                drafts.append(
                    PreparedDraft(
                        type=str(record["type"]),
                        actor=str(record["actor"]),
                        payload=payload,
                        security=record.get("security"),
                        event_id=str(record["event_id"]),
                        timestamp=str(record["timestamp"]),
                        payload_json=payload_json,
                    )
                )
            except (ValueError, KeyError, TypeError):
                continue
    return drafts


def drained_record(paths: list[str], drafts: list[Any], skipped: int) -> Any:
    """The ``eventloom.spool_drained`` draft recorded after the drained events."""
    from .jsonl_file import PreparedDraft

    return PreparedDraft(
        type=DRAINED_TYPE,
        actor="zaxy",
        payload={
            "files": [os.path.basename(path) for path in paths],
            "events": len(drafts),
            "already_in_log": skipped,
            "oldest_captured_at": min((draft.timestamp for draft in drafts), default=None),
            "reason": "a hook could not take the log lock in time and spooled these events; drained in order",
        },
    )


def remove(paths: list[str]) -> None:
    for path in paths:
        try:  # noqa: SIM105 - contextlib is not imported on the hook path
            os.unlink(path)
        except FileNotFoundError:
            pass
