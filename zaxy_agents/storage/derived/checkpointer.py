"""WAL checkpoints of ``derived.sqlite`` off the writer's path.

SQLite checkpoints a WAL database on the connection that commits, inside its COMMIT, once the WAL holds
``wal_autocheckpoint`` pages (1,000 by default): that commit then copies the WAL into the database and syncs
both files. Projecting one event at a time (the MCP / hook / LangGraph path) commits ~30 pages per event, so
every ~30th event paid two ``fsync`` calls — measured 28 % of the one-at-a-time path's samples in COMMIT, and
6-9 ms against 13-15 ms per event with the autocheckpoint off (``benchmarks/ingest_bench.py --parts one``).

Here, when the WAL-index is readable (:meth:`Checkpointer.supported`), the writer's automatic checkpoint is raised
to :data:`WRITER_LIMIT_PAGES` (a bound, for when this thread cannot keep up), and after each commit the store calls
:meth:`Checkpointer.committed`, which reads the WAL's frame count (``mxFrame``, 4 bytes of the WAL-index header in
the ``-shm`` file; format: https://www.sqlite.org/walformat.html): when it has grown by :data:`START_FRAMES` (the
same 1,000 pages as SQLite's default) a daemon thread runs a PASSIVE checkpoint on its own connection. PASSIVE
never blocks readers or the writer; once every frame is copied, the next write transaction starts the WAL over
from its beginning, so it stays bounded. The thread exits after :data:`IDLE_SECONDS` without work and is started
again when needed, so an idle or forgotten store holds no thread.

Durability is unchanged: derived state is a cache of the log (``synchronous=NORMAL``); a checkpoint lost to a
crash is redone by the next one, and a commit lost to a power cut is projected again from the log.
"""

from __future__ import annotations

import os
import sqlite3
import struct
import threading
from collections.abc import Callable

START_FRAMES = 1000  # SQLite's own default threshold (pages), moved off the writer
WRITER_LIMIT_PAGES = 16_000  # the writer checkpoints itself only past ~64 MB of WAL
IDLE_SECONDS = 30.0
_INDEX_HEADER = struct.Struct("=IIIBBHI")  # iVersion, unused, iChange, isInit, bigEndCksum, szPage, mxFrame
_INDEX_VERSION = 3007000


class Checkpointer:
    """Runs PASSIVE checkpoints of one database in a background thread when its WAL has grown."""

    def __init__(self, path: str, connect: Callable[[], sqlite3.Connection]) -> None:
        self.shm = f"{path}-shm"
        self._connect = connect
        self._fd: int | None = None
        self._last = 0  # the frame count seen at the last commit
        self._next = START_FRAMES  # wake the thread when the WAL holds this many frames
        self._lock = threading.Lock()  # held while the thread uses its connection, and while it is closed
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._connection: sqlite3.Connection | None = None
        self._closed = False
        self.runs = 0  # checkpoints run (status, tests)
        self.error: str | None = None  # the last checkpoint failure (busy, disk full...), cleared by a success

    def frames(self) -> int | None:
        """Frames in the WAL now (``mxFrame`` of the WAL-index header), or None when it cannot be read."""
        try:
            if self._fd is None:
                self._fd = os.open(self.shm, os.O_RDONLY)
            raw = os.pread(self._fd, _INDEX_HEADER.size, 0)
        except OSError:
            return None
        if len(raw) < _INDEX_HEADER.size:
            return None
        version, _, _, initialised, _, _, frames = _INDEX_HEADER.unpack(raw)
        return frames if version == _INDEX_VERSION and initialised else None

    def supported(self) -> bool:
        """Whether commits can be watched (a WAL database with a readable WAL-index); if not, SQLite's own
        autocheckpoint is left as it is."""
        return self.frames() is not None

    def committed(self) -> None:
        """After a commit: wake the thread when the WAL has grown by :data:`START_FRAMES` frames."""
        frames = self.frames()
        if frames is None or self._closed:
            return
        if frames < self._last:  # the WAL started over (a checkpoint completed)
            self._next = START_FRAMES
        self._last = frames
        if frames < self._next:
            return
        self._next = frames + START_FRAMES  # not again until it grew by as much (readers may hold frames back)
        self._wake.set()
        thread = self._thread
        if thread is not None and thread.is_alive():
            # Woken: it cannot let itself go now (it checks the wake flag under the lock before it exits). The lock
            # is not taken here: the thread holds it for a whole checkpoint, and the writer must not wait on that.
            return
        with self._lock:
            if self._closed or (self._thread is not None and self._thread.is_alive()):
                return
            self._thread = threading.Thread(target=self._run, name="zaxy-derived-checkpoint", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            if not self._wake.wait(IDLE_SECONDS):
                with self._lock:  # idle: let the thread go, unless a commit woke it meanwhile
                    if not self._wake.is_set():
                        self._thread = None
                        return
                continue
            self._wake.clear()
            with self._lock:
                if self._closed:
                    return
                try:
                    if self._connection is None:
                        self._connection = self._connect()
                    self._connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.runs += 1
                    self.error = None
                except sqlite3.Error as exc:  # busy, full disk, a file deleted under us: the next commit retries
                    self.error = str(exc)

    def close(self) -> None:
        """Stop the thread for good (waiting for a checkpoint in progress); the owner closes the connection."""
        self._closed = True
        self._wake.set()
        with self._lock:
            self._connection = None
            thread, self._thread = self._thread, None
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=IDLE_SECONDS)
