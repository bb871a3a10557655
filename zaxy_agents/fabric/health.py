"""The files backend's self-checks, for ``zaxy doctor`` (a surface must not open storage modules itself).

Each function works on an Eventloom folder and returns plain data: which session files verify, which hook events
wait in the spool for a held lock, and draining them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zaxy_agents.storage.files.jsonl_file import SessionFile
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog
from zaxy_agents.storage.files.spool import SPOOL_DIR_NAME, pending_files


def verify_sessions(folder: Path, sessions: list[str]) -> dict[str, Any]:
    """``session -> VerifyReport``, or the exception that reading it raised (unparseable bytes, unreadable file)."""
    results: dict[str, Any] = {}
    with JsonlEventLog(folder) as log:
        for session in sessions:
            try:
                results[session] = log.verify(session)
            except Exception as exc:  # damaged, not fatal: the caller reports it by name
                results[session] = exc
    return results


def spooled(folder: Path) -> dict[str, int]:
    """Sessions whose hook events wait in the spool, with how many spool files each."""
    root = folder / SPOOL_DIR_NAME
    if not root.is_dir():
        return {}
    waiting = {session.name: len(pending_files(str(folder), session.name)) for session in root.iterdir()}
    return {session: count for session, count in waiting.items() if count}


def drain_spools(folder: Path, sessions: list[str], lock_timeout: float = 2.0) -> int:
    """Write the spooled events of ``sessions`` in order now; how many were written."""
    drained = 0
    for session in sessions:
        handle = SessionFile(str(folder), session)
        try:
            drained += len(handle.append([], lock_timeout=lock_timeout))
        finally:
            handle.close()
    return drained
