"""The embedded graph's database file opened by this process, and the thread rules every statement on it follows.

Kuzu facts that shape this module: one read-write process per database file (a second process cannot even
open it read-only while it is held -> :class:`LockedError`, callers fall back to log-only mode); exactly one
``Database`` object per path per process (two silently lose writes), hence the process-wide registry; one
write transaction at a time, hence the writer lock; and no read from another thread while a write transaction or a
checkpoint runs (it crashed the process, or made the checkpoint time out), hence :meth:`KuzuDatabase._exclusive`.
What the store does with the file (its schema, writes, reads, dump) lives in the modules built on
:class:`KuzuDatabase`; this one knows nothing of the graph's tables.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kuzu

from zaxy_agents.errors import LockedError
from zaxy_agents.storage.files.folder import ensure_eventloom_dir

BUFFER_POOL_BYTES = 256 * 1024 * 1024  # Kuzu's default is 80 % of the machine's memory
_REGISTRY_LOCK = threading.Lock()
_DATABASES: dict[str, tuple[kuzu.Database, int]] = {}


def _open_database(path: Path) -> kuzu.Database:
    """One Database per path per process (reference counted)."""
    key = str(path.resolve())
    with _REGISTRY_LOCK:
        entry = _DATABASES.get(key)
        if entry is not None:
            _DATABASES[key] = (entry[0], entry[1] + 1)
            return entry[0]
        ensure_eventloom_dir(path.parent.parent)  # the graph lives in <eventloom>/.zaxy
        path.parent.mkdir(exist_ok=True)
        try:
            database = kuzu.Database(key, buffer_pool_size=BUFFER_POOL_BYTES)
        except RuntimeError as exc:
            if "lock" in str(exc).lower():
                raise LockedError(
                    f"the graph database {path} is held by another process",
                    field="projection",
                    remediation="Only one process may own the embedded graph; this one runs in log-only mode. "
                    "Stop the other `zaxy` process or talk to it (zaxy serve proxies later processes).",
                ) from exc
            raise
        _DATABASES[key] = (database, 1)
        return database


def _release_database(path: Path) -> None:
    key = str(path.resolve())
    with _REGISTRY_LOCK:
        entry = _DATABASES.get(key)
        if entry is None:
            return
        if entry[1] <= 1:
            del _DATABASES[key]
            entry[0].close()
        else:
            _DATABASES[key] = (entry[0], entry[1] - 1)


class KuzuDatabase:
    """One Kuzu database file of this process: a connection per thread, one writer at a time, reads that wait for a
    write transaction or checkpoint of another thread, and interruption from any thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._database = _open_database(self.path)
        self._write_lock = threading.Lock()
        self._guard = threading.Condition()  # read statements of other threads vs. a write / checkpoint (_exclusive)
        self._readers = 0  # read statements in flight
        self._owner: int | None = None  # the thread inside _exclusive
        self._depth = 0
        self._local = threading.local()
        self._connections: list[kuzu.Connection] = []  # every thread's, so interrupt() can reach them all
        self._interrupted = threading.Event()
        self._closed = False

    def _connection(self) -> kuzu.Connection:
        """One connection per thread (Kuzu connections are not shared across threads)."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = kuzu.Connection(self._database)
            self._local.connection = connection
            with _REGISTRY_LOCK:
                self._connections.append(connection)
        return connection

    def interrupt(self) -> None:
        """From any thread: the statement running now fails with Kuzu's "Interrupted." (its transaction is rolled
        back: measured to leave the file usable), and so does every later one until :meth:`resume`."""
        self._interrupted.set()
        with _REGISTRY_LOCK:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(Exception):
                connection.interrupt()

    def resume(self) -> None:
        self._interrupted.clear()

    def _check_interrupted(self) -> None:
        if self._interrupted.is_set():
            raise RuntimeError("Interrupted.")

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """A read statement (run to its last row): it waits while another thread is in :meth:`_exclusive`, and a
        writer waits for it. The writing thread's own reads pass (they are part of its write)."""
        with self._guard:
            nested = self._owner == threading.get_ident()
            if not nested:
                while self._owner is not None:
                    self._guard.wait()
                self._readers += 1
        try:
            yield
        finally:
            if not nested:
                with self._guard:
                    self._readers -= 1
                    if not self._readers:
                        self._guard.notify_all()

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """No other thread's statement runs meanwhile (a write transaction, a checkpoint, migrations, a reset, a
        close; re-entrant).

        Reads from other threads while a write transaction ran crashed the process with Kuzu 0.11.3 (segfaults,
        measured with two reader threads during graph catch-ups: tests/projection/test_graph_reads_during_writes.py),
        and the CHECKPOINT after it failed with "Timeout waiting for active transactions" (the graph file was then
        closed, distrusted and rebuilt). New reads wait from the moment a writer asks; the writer waits for the
        reads already running."""
        me = threading.get_ident()
        with self._guard:
            if self._owner == me:
                self._depth += 1
            else:
                while self._owner is not None:
                    self._guard.wait()
                self._owner, self._depth = me, 1
                while self._readers:
                    self._guard.wait()
        try:
            yield
        finally:
            with self._guard:
                self._depth -= 1
                if not self._depth:
                    self._owner = None
                    self._guard.notify_all()

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """One writer at a time (``_write_lock``), alone on the database (:meth:`_exclusive`)."""
        with self._write_lock, self._exclusive():
            yield

    def _rows(self, query: str, parameters: dict[str, Any] | None = None) -> list[list[Any]]:
        with self._reading():
            result = self._connection().execute(query, parameters or {})
            rows = result.get_all()
            result.close()
        return rows

    def close(self) -> None:
        with self._exclusive():  # reads in flight finish first; later ones fail with Kuzu's "closed" error
            if not self._closed:
                self._closed = True
                self._local = threading.local()
                with _REGISTRY_LOCK:
                    self._connections = []
                _release_database(self.path)

    def _recreate_file(self) -> bool:
        """Replace the database with a new, empty file (the caller migrates it); False when another store of this
        process shares the open database (it is then emptied in place instead)."""
        key = str(self.path.resolve())
        with _REGISTRY_LOCK:
            entry = _DATABASES.get(key)
            if entry is None or entry[1] != 1:
                return False
            del _DATABASES[key]
            self._connections = []
        self._local = threading.local()
        entry[0].close()
        for leftover in self.path.parent.glob(f"{self.path.name}*"):  # the file and its WAL / shadow files
            if leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)
        self._database = _open_database(self.path)
        return True
