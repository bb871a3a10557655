"""Importing checked lines into the embedded backend: a new session file appears whole or not at all.

The lines are written to a temporary file in the log folder, fsynced, then hard-linked to ``<session>.jsonl``.
``link`` fails if the file exists, so a writer that created the session meanwhile is never overwritten, and
readers never see a half-imported log.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from zaxy_agents.errors import ConflictError
from zaxy_agents.eventloom.canonical import GENESIS_HASH


def import_new_session(
    root: Path, session: str, lines: Iterable[tuple[dict[str, Any], bytes]], after: tuple[int, str]
) -> int:
    """Create ``<root>/<session>.jsonl`` from ``lines`` (already checked); returns how many were written."""
    target = root / f"{session}.jsonl"
    if after != (0, GENESIS_HASH):
        consumed = sum(1 for _ in lines)
        if consumed == 0:
            return 0  # the session already holds every event of the file
        raise ConflictError(
            f"session {session!r} already has {after[0]} events; the embedded backend imports only new sessions",
            field="session",
            remediation="Import into a folder without this session, or import into PostgreSQL, which can continue it.",
        )
    root.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".import.{session}.", suffix=".tmp", dir=root)
    written = 0
    try:
        with os.fdopen(handle, "wb") as sink:
            for _envelope, line in lines:
                sink.write(line)
                written += 1
            sink.flush()
            os.fsync(sink.fileno())
        if written:
            try:
                os.link(temporary, target)
            except FileExistsError as exc:
                raise ConflictError(
                    f"session {session!r} was created by another writer during the import",
                    field="session",
                    remediation="Re-run the import: events already present are skipped.",
                ) from exc
            _fsync_directory(root)
    finally:
        Path(temporary).unlink(missing_ok=True)
    return written


def _fsync_directory(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
