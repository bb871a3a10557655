"""Low-level file helpers of the session log: the flock with a deadline, whole writes, backward newline scans.

They work on raw fds and bytes, below the hash chain, so the append engine (:mod:`.jsonl_file`), torn-tail
recovery (:mod:`.torn_tail`), repair and erasure share one copy of each; with them, the structured errors a failed
write, a lock wait past its budget or an unreadable line turn into. Stdlib only: this is on the hook fast path.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time

from zaxy_agents.errors import IntegrityError, LockedError, StorageFullError

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

_READ_CHUNK = 1 << 16
_INDEX_CHUNK = 1 << 20


class LogLockTimeout(LockedError):
    """The log lock was not free within the caller's budget; nothing was written."""

    def __init__(self, session: str, timeout: float | None) -> None:
        super().__init__(
            f"the log of session {session!r} stayed locked by another process for {timeout} s",
            field="session",
            remediation="Retry later; `zaxy doctor` names what holds the lock.",
        )


def _flock(fd: int, deadline: float | None, session: str, timeout: float | None) -> None:
    """Take the exclusive lock, waiting forever (``deadline`` None) or until ``deadline`` (monotonic)."""
    if deadline is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LogLockTimeout(session, timeout) from None
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, 0.02)


def _recent_ids(fd: int, size: int, count: int) -> set[str]:
    """Event ids of the last ``count`` lines before ``size`` (reads backwards; used only while draining)."""
    ids: set[str] = set()
    position, data = size, b""
    while position > 0 and data.count(b"\n") <= count:
        start = max(0, position - _INDEX_CHUNK)
        data = os.pread(fd, position - start, start) + data
        position = start
    lines = data.split(b"\n")
    for line in lines[-(count + 1) :] if position > 0 else lines:
        marker = line.find(b'"id":"')
        if marker != -1:
            ids.add(line[marker + 6 : line.find(b'"', marker + 6)].decode("ascii", "replace"))
    return ids


def _fsync_directory(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def storage_error(exc: OSError, path: str) -> Exception:
    """The structured error for a failed write: a full disk says so; other I/O errors pass through."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageFullError(
            f"no space left on the device holding {os.path.dirname(path) or '.'}; nothing was written",
            field="eventloom_path",
            remediation="Free disk space (or raise the quota) and retry: the failed call left the log unchanged.",
        )
    return exc


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _last_newline_end(fd: int, size: int) -> int:
    """Offset just past the last newline before ``size`` (0 when there is none)."""
    position = size
    while position > 0:
        start = max(0, position - _READ_CHUNK)
        chunk = os.pread(fd, position - start, start)
        index = chunk.rfind(b"\n")
        if index >= 0:
            return start + index + 1
        position = start
    return 0


def _last_line_start(fd: int, size: int) -> int:
    """Start offset of the last complete line, given ``size`` ends right after a newline."""
    return _last_newline_end(fd, size - 1)


def _decode_line(line: bytes, path: str, *, where: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IntegrityError(
            f"{os.path.basename(path)}: {where} is not valid JSON ({exc})",
            field="session",
            remediation="Run `zaxy verify` to locate the damage; the log was modified outside Zaxy.",
        ) from exc
    if not isinstance(value, dict) or not isinstance(value.get("seq"), int):
        raise IntegrityError(
            f"{os.path.basename(path)}: {where} is not an event envelope",
            field="session",
            remediation="Run `zaxy verify` to locate the damage.",
        )
    return value
