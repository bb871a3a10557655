"""The order in which processes write ``derived.sqlite``: a lock file taken before ``BEGIN IMMEDIATE``.

SQLite's own busy handler waits for the write lock by sleeping 1, 2, 5, 10, 15, 20, 25, 50 and 100 ms between
tries, whatever the holder does. When several processes project one event at a time into one memory (the MCP
servers or hooks of several agents; a write holds the lock ~2-3 ms), a waiter soon sleeps for 10-100 ms after
the lock was already free, and four such writers reached 88-130 events/s in total where one alone does ~350.
Waiting on an ``flock`` of a lock file instead (polled every 0.05-1 ms, so the busy timeout still holds) hands
the lock over within a millisecond. SQLite's lock still guards the file: a writer that does not take this lock
(another version, the checkpoint thread) is only less fairly ordered, never unsafe. Where ``fcntl`` is missing
(Windows) writers fall back to SQLite's handler.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_SUFFIX = ".writer-lock"
FIRST_PAUSE_S = 0.00005
LONGEST_PAUSE_S = 0.001


class WriterQueue:
    """One lock file per database (``<path>.writer-lock``, empty); :meth:`turn` holds it for one transaction."""

    def __init__(self, database_path: str) -> None:
        self.path = database_path + LOCK_SUFFIX
        self._fd: int | None = None
        self._lock = threading.Lock()

    def _descriptor(self) -> int | None:
        with self._lock:
            if self._fd is None:
                try:
                    self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
                except OSError:
                    return None  # a read-only folder: SQLite's handler orders the writers
            return self._fd

    @contextlib.contextmanager
    def turn(self, timeout_s: float) -> Iterator[bool]:
        """Hold the lock while the body runs; yields False when it could not be had within ``timeout_s`` (the
        caller's ``BEGIN IMMEDIATE`` then reports the busy database as before)."""
        fd = self._descriptor() if fcntl is not None else None
        if fd is None:
            yield False
            return
        deadline = time.monotonic() + timeout_s
        pause = FIRST_PAUSE_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(pause)
                pause = min(2 * pause, LONGEST_PAUSE_S)
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None
