"""Owner election for one Eventloom's derived state (``<eventloom>/.zaxy/``).

Rules:

* The owner is whoever holds an exclusive ``flock`` on ``owner.lock``. The kernel drops the lock when the process
  exits or is killed, so a dead owner never blocks a successor, and no lease renewal is needed.
* The owner publishes ``owner.json`` (pid, socket path, protocol) once its socket listens. A new owner first
  removes whatever the previous owner left behind (stale socket, stale ``owner.json``).
* Unix socket paths are limited to ~104 bytes; when ``<derived>/owner.sock`` is longer, the socket goes to a
  private per-user directory under the temp dir, named by a hash of the derived path, and ``owner.json`` says
  where it is.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:  # POSIX only: on other platforms sharing is unavailable and callers run standalone.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = "owner.lock"
INFO_FILE = "owner.json"
SOCKET_FILE = "owner.sock"
MAX_SOCKET_PATH = 100
PROTOCOL_VERSION = 1


def sharing_supported() -> bool:
    """True when this platform has advisory file locks and unix sockets."""
    import socket

    return fcntl is not None and hasattr(socket, "AF_UNIX")


def socket_path_for(derived: Path) -> str:
    """Where the owner of ``derived`` listens (inside it when the path is short enough)."""
    candidate = str(Path(derived).resolve() / SOCKET_FILE)
    if len(candidate.encode()) <= MAX_SOCKET_PATH:
        return candidate
    digest = hashlib.sha256(str(Path(derived).resolve()).encode()).hexdigest()[:24]
    return str(_private_runtime_dir() / f"{digest}.sock")


def _private_runtime_dir() -> Path:
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
    directory = base / f"zaxy-{os.getuid()}"
    directory.mkdir(mode=0o700, exist_ok=True)
    if directory.stat().st_uid != os.getuid():  # someone else pre-created it: never share a socket dir
        raise PermissionError(f"{directory} is not owned by this user")
    return directory


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (a zombie counts as alive until reaped)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_owner(derived: Path) -> dict[str, Any] | None:
    """The published owner record, or ``None`` when there is none (or it is unreadable)."""
    try:
        record = json.loads((Path(derived) / INFO_FILE).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("pid"), int) else None


class OwnerLease:
    """Proof that this process owns the derived state; release it to hand ownership over."""

    def __init__(self, derived: Path, fd: int) -> None:
        self.derived = Path(derived)
        self.socket_path = socket_path_for(self.derived)
        self._fd: int | None = fd
        self.acquired_at = time.time()

    @property
    def held(self) -> bool:
        return self._fd is not None

    def publish(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Write ``owner.json`` atomically: peers read it to find the socket."""
        record = {
            "pid": os.getpid(),
            "socket": self.socket_path,
            "protocol": PROTOCOL_VERSION,
            "since": self.acquired_at,
            **(extra or {}),
        }
        target = self.derived / INFO_FILE
        temporary = target.with_name(f"{INFO_FILE}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(record, sort_keys=True))
        os.replace(temporary, target)
        return record

    def unpublish(self) -> None:
        """Remove ``owner.json`` and the socket (first step of a hand-over: peers stop finding this owner, while
        the lock still keeps them from claiming what is being closed)."""
        record = read_owner(self.derived)
        if record is not None and record.get("pid") == os.getpid():
            with contextlib.suppress(OSError):
                (self.derived / INFO_FILE).unlink()
        with contextlib.suppress(OSError):
            os.unlink(self.socket_path)

    def release(self) -> None:
        """Unpublish (if not done yet), then drop the lock: the next process may now claim ownership."""
        if self._fd is None:
            return
        self.unpublish()
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def try_claim(derived: Path) -> OwnerLease | None:
    """Become the owner if nobody is; returns ``None`` (without waiting) when another live process owns it."""
    if not sharing_supported():
        return None
    derived = Path(derived)
    derived.mkdir(parents=True, exist_ok=True)
    fd = os.open(derived / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    lease = OwnerLease(derived, fd)
    _clear_stale(lease)
    return lease


def _clear_stale(lease: OwnerLease) -> None:
    """A previous owner died without cleaning up: its socket (always at the derived path's socket location) and
    record are ours to remove now."""
    with contextlib.suppress(OSError):
        os.unlink(lease.socket_path)
    with contextlib.suppress(OSError):
        (lease.derived / INFO_FILE).unlink()
