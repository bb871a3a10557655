"""Whether an embedded graph file may be opened: the trust marker in ``derived.sqlite`` and the owner's file lock.

Kuzu 0.11.3 is not crash-safe around bulk writes: a SIGKILL during a COPY transaction was measured to leave a
graph whose cursors claim rows it lost, or that segfaults when opened. So an embedded graph is trusted only if
``derived.sqlite`` recorded it clean — marked dirty (durably) before every write transaction, clean with the
file's identity (inode, size, mtime) after the CHECKPOINT that follows it. Anything else (a kill or a full disk
mid-write, a planted or foreign file, a leftover WAL) and the graph file is deleted and rebuilt from the log,
never opened. ``graph.lock`` (an advisory lock) says which process owns the file. Why a module of its own: this
protocol is about files and one ``derived.sqlite`` key, apart from what :class:`~.graph_sync.GraphSync` writes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

GRAPH_FILE = "graph.kuzu"
GRAPH_LOCK = "graph.lock"
STATE_KEY = "graph:state"

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock, the Kuzu lock alone protects the file
    fcntl = None  # type: ignore[assignment]


class GraphFileTrust:
    """The trust marker and the owner's lock of one private graph file (``<folder>/graph.kuzu``)."""

    def __init__(self, folder: Path, derived: Any) -> None:
        self.folder = folder
        self.path = folder / GRAPH_FILE
        self.derived = derived
        self.clean = True  # the last write to the graph completed (its CHECKPOINT included)
        self._lock_handle: Any = None

    def claim_lock(self) -> bool:
        if self._lock_handle is not None:
            return True
        if fcntl is None:
            return True
        self.folder.mkdir(parents=True, exist_ok=True)
        handle = open(self.folder / GRAPH_LOCK, "a+")  # noqa: SIM115 - held while the graph is open
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        self._lock_handle = handle
        return True

    def release_lock(self) -> None:
        if self._lock_handle is not None:
            with contextlib.suppress(OSError):
                self._lock_handle.close()
            self._lock_handle = None

    def files(self) -> list[Path]:
        return sorted(self.folder.glob(f"{GRAPH_FILE}*"))

    def state(self) -> dict[str, Any] | None:
        raw = self.derived.meta(STATE_KEY)
        try:
            state = json.loads(raw) if raw else None
        except ValueError:
            return None
        return state if isinstance(state, dict) else None

    def stat(self) -> list[int] | None:
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return None
        return [stat.st_ino, stat.st_size, stat.st_mtime_ns]

    def check(self) -> None:
        """Delete a graph file this store did not leave clean (never open it: Kuzu may crash on it)."""
        files = self.files()
        if not files:
            return
        state = self.state()
        reason = None
        if state is None:
            reason = "no record of it in derived.sqlite (planted, foreign, or from an older version)"
        elif not state.get("clean"):
            reason = "a write to it was interrupted (crash, kill or full disk)"
        elif state.get("stat") != self.stat():
            reason = "it changed since it was last closed"
        elif any(path.name != GRAPH_FILE and path.stat().st_size for path in files):
            reason = "it has a leftover write-ahead log"
        if reason is not None:
            self.derived.warn(f"{self.path} was not used: {reason}; it was deleted and is rebuilt from the log")
            self.remove_files()

    def remove_files(self) -> None:
        for path in self.files():
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        with self.derived.write() as db:
            self.derived.set_meta(db, STATE_KEY, None)

    def mark(self, clean: bool) -> None:
        self.clean = clean
        state = {"clean": clean, "stat": self.stat() if clean else None}
        with self.derived.write() as db:
            self.derived.set_meta(db, STATE_KEY, json.dumps(state))
