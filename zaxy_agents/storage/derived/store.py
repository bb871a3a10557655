"""``derived.sqlite``: connections, transactions, format checks and the lifecycle of the derived-state file.

Why SQLite in WAL mode: readers never block the writer nor each other (a CLI checkout reads while a server
projects), a transaction is atomic across every table (catalog rows, index rows and the cursors they cover
commit together, so a SIGKILL or a full disk leaves the file exactly at an earlier cursor), and opening costs a
few system calls whatever the size. ``synchronous=NORMAL``: a commit lost to a power cut is replayed from the log
(this is a cache of the log, consistency matters, durability does not).

Components (the catalog, each retrieval index) own tables and declare a schema version; a component whose
recorded version differs is dropped and recreated, and the caller rebuilds it from the log. A file that is not
a readable database of our format is deleted — with a warning naming it — and recreated empty.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from .checkpointer import WRITER_LIMIT_PAGES, Checkpointer
from .writer_queue import WriterQueue

DERIVED_FILE = "derived.sqlite"
FORMAT = "zaxy-derived/1"  # the file as a whole (meta table layout); components version their own tables
BUSY_TIMEOUT_MS = 10_000
CACHE_KIB = 16_384  # page cache per connection
# Statements each connection keeps prepared (Python's sqlite3 cache, least recently used out). A checkout runs ~90
# statements, a catch-up more on the writer: at the default 128 the ones every checkout repeats were pushed out
# between two checkouts and compiled again (checkout_lanes_bench.py: ~1.05-1.09x the checkout's CPU).
CACHED_STATEMENTS = 512
# ``WHERE id IN {ID_LIST}`` with one JSON array parameter: the same statement text for any list of ids (or names),
# so it is compiled once and stays cached, where ``IN (1, 5, 9, ...)`` was a new statement to compile every time,
# pushing useful ones out of the cache.
ID_LIST = "(SELECT value FROM json_each(?))"

_META_DDL = "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID"
_DAMAGE_WORDS = ("malformed", "not a database", "corrupt", "encrypted", "unsupported file format")


class DerivedStateWarning(UserWarning):
    """Derived state was ignored (damaged, another version, another log) and is rebuilt from the log."""


class DerivedStoreBusy(RuntimeError):
    """Another process held the derived-state write lock for longer than the busy timeout."""


def is_damage(exc: BaseException) -> bool:
    """Whether an SQLite error means the file itself is unusable (as opposed to busy / full / locked)."""
    return isinstance(exc, sqlite3.DatabaseError) and any(word in str(exc).lower() for word in _DAMAGE_WORDS)


def is_busy(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc).lower()


class DerivedStore:
    """One ``derived.sqlite`` per memory: per-thread readers, one serialized writer, versioned components."""

    def __init__(self, folder: str | os.PathLike[str], *, create: bool = True) -> None:
        self.folder = Path(folder)
        self.path = self.folder / DERIVED_FILE
        self.notices: list[str] = []  # what opening discarded, for status and checkout warnings
        self._write_lock = threading.RLock()
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._watch: sqlite3.Connection | None = None
        self._watch_lock = threading.Lock()
        self._committed_hooks: list[Callable[[], None]] = []
        self.transaction_serial = 0  # counts write transactions begun: ties what a hook learned to one commit
        self.closed = False
        self.checkpointer = Checkpointer(str(self.path), self._connect)  # WAL checkpoints off the writer's path
        self.writer_queue = WriterQueue(str(self.path))  # processes take turns without SQLite's sleeps
        if create:
            self.folder.mkdir(parents=True, exist_ok=True)
        self._open_checked()

    # ------------------------------------------------------------------ opening
    def _open_checked(self) -> None:
        try:
            self._initialise()
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            self.discard(
                f"{self.path} is not a usable derived-state database ({exc}); it was deleted and is "
                "rebuilt from the log"
            )
            self._initialise()

    def _initialise(self) -> None:
        writer = self._connect()
        writer.execute("PRAGMA journal_mode=WAL")
        found = writer.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if found is not None:
            row = writer.execute("SELECT value FROM meta WHERE key='format'").fetchone()
            if row is None or row[0] != FORMAT:
                self._close_connections()
                self.discard(
                    f"{self.path} has another format ({row[0] if row else 'none'} != {FORMAT}); it was "
                    "deleted and is rebuilt from the log"
                )
                writer = self._connect()
                writer.execute("PRAGMA journal_mode=WAL")
                found = None
        if found is None:
            with self._transaction(writer):
                writer.execute(_META_DDL)
                writer.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('format', ?)", (FORMAT,))
        else:
            writer.execute("SELECT count(*) FROM sqlite_master").fetchone()  # reads the schema: raises on damage
        if self.checkpointer.supported():
            writer.execute(f"PRAGMA wal_autocheckpoint={WRITER_LIMIT_PAGES}")  # checkpointer.py checkpoints sooner
        self._writer = writer

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=0, cached_statements=CACHED_STATEMENTS
        )
        connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("PRAGMA secure_delete=ON")  # freed pages are zeroed: erased content leaves no bytes
        connection.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        connection.execute("PRAGMA temp_store=MEMORY")
        with self._connections_lock:
            self._connections.append(connection)
        return connection

    def discard(self, reason: str) -> None:
        """Delete the database (and its WAL/SHM) after a warning naming it; the caller recreates it."""
        self._close_connections()
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")
        self.warn(reason)

    def warn(self, message: str) -> None:
        self.notices.append(message)
        warnings.warn(message, DerivedStateWarning, stacklevel=3)

    # ------------------------------------------------------------------ connections
    def reader(self) -> sqlite3.Connection:
        """This thread's read connection (autocommit: each statement sees the latest committed state)."""
        connection = getattr(self._local, "reader", None)
        if connection is None or self.closed:
            if self.closed:
                raise RuntimeError(f"{self.path} is closed")
            connection = self._connect()
            connection.execute("PRAGMA query_only=ON")
            self._local.reader = connection
        return connection

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction on this thread's reader: every statement inside sees the same committed state."""
        connection = self.reader()
        if connection.in_transaction:
            yield connection
            return
        connection.execute("BEGIN")
        try:
            yield connection
        finally:
            connection.execute("COMMIT")

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``), serialized with every other writer of this file.

        COMMIT on success, ROLLBACK on error; raises :class:`DerivedStoreBusy` when another process keeps the
        lock longer than the busy timeout. Hooks registered with :meth:`on_commit` run after each commit.
        """
        with self._write_lock:
            writer = self._writer
            if writer is None or self.closed:
                raise RuntimeError(f"{self.path} is closed")
            if writer.in_transaction:  # nested use by the same thread joins the outer transaction
                yield writer
                return
            self.transaction_serial += 1
            with self.writer_queue.turn(BUSY_TIMEOUT_MS / 1000), self._transaction(writer):
                yield writer
            self.checkpointer.committed()
            for hook in list(self._committed_hooks):
                hook()

    @contextlib.contextmanager
    def attached(self, path: str | os.PathLike[str], name: str) -> Iterator[None]:
        """Another database file attached to the writer as ``name`` (SQLite attaches only outside a transaction):
        :meth:`write` transactions inside may read its tables."""
        with self._write_lock:
            writer = self._writer
            if writer is None or self.closed:
                raise RuntimeError(f"{self.path} is closed")
            writer.execute(f"ATTACH DATABASE ? AS {name}", (os.fspath(path),))
            try:
                yield
            finally:
                writer.execute(f"DETACH DATABASE {name}")

    @contextlib.contextmanager
    def _transaction(self, connection: sqlite3.Connection) -> Iterator[None]:
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                raise DerivedStoreBusy(f"{self.path} is being written by another process") from exc
            raise
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
            raise
        try:
            connection.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
            raise

    def on_commit(self, hook: Callable[[], None]) -> None:
        self._committed_hooks.append(hook)

    def generation(self) -> int:
        """Changes whenever any connection (this process or another) committed: drop caches when it moves."""
        with self._watch_lock:
            if self._watch is None:
                self._watch = self._connect()
            return int(self._watch.execute("PRAGMA data_version").fetchone()[0])

    def foreign_generation(self) -> int:
        """Changes only when another connection (another process, another store on this file) committed.

        This store's own commits do not move it (SQLite's ``data_version`` on the writer), so a cache that its
        :meth:`on_commit` hook already kept exact is not dropped again."""
        with self._write_lock:
            writer = self._writer
            if writer is None or self.closed:
                raise RuntimeError(f"{self.path} is closed")
            return int(writer.execute("PRAGMA data_version").fetchone()[0])

    # ------------------------------------------------------------------ meta and components
    def meta(self, key: str, default: str | None = None) -> str | None:
        row = self.reader().execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return default if row is None else str(row[0])

    @staticmethod
    def set_meta(db: sqlite3.Connection, key: str, value: str | None) -> None:
        if value is None:
            db.execute("DELETE FROM meta WHERE key=?", (key,))
        else:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def ensure_component(
        self,
        name: str,
        version: int | str,
        create: Callable[[sqlite3.Connection], None],
        drop: Callable[[sqlite3.Connection], None],
        migrate: Callable[[sqlite3.Connection, str], bool] | None = None,
    ) -> bool:
        """Create ``name``'s tables, or drop and recreate them when their recorded version differs and ``migrate``
        (given the write connection and the recorded version) does not upgrade them in place (it returns False).

        Returns True when the component starts empty (new, or reset): the caller rebuilds it from the log.
        """
        recorded = self.meta(f"schema:{name}")
        if recorded == str(version):
            return False
        with self.write() as db:
            recorded = db.execute("SELECT value FROM meta WHERE key=?", (f"schema:{name}",)).fetchone()
            if recorded is not None and recorded[0] == str(version):
                return False  # another process did it meanwhile
            if recorded is not None and migrate is not None and migrate(db, recorded[0]):
                self.set_meta(db, f"schema:{name}", str(version))
                return False  # upgraded in place: the rows stay
            if recorded is not None:
                drop(db)
            create(db)
            self.set_meta(db, f"schema:{name}", str(version))
        if recorded is not None:
            self.warn(
                f"{self.path}: the {name} tables had version {recorded[0]} (now {version}); they are "
                "rebuilt from the log"
            )
        return True

    # ------------------------------------------------------------------ maintenance
    def scrub(self) -> None:
        """Make deleted rows unrecoverable from the files (after an erasure): every connection runs with
        ``secure_delete=ON``, so SQLite zeroed the deleted cells and freed pages when it deleted them; what may
        still hold their bytes is the WAL (older images of those pages), which this checkpoints into the file and
        truncates. No VACUUM: rewriting the whole file would make an erasure cost the size of the memory."""
        with self._write_lock:
            writer = self._writer
            if writer is None:
                return
            writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def size_bytes(self) -> int:
        return sum(
            os.path.getsize(f"{self.path}{suffix}") for suffix in ("", "-wal") if os.path.exists(f"{self.path}{suffix}")
        )

    def close(self) -> None:
        if self.closed:
            return
        with self._write_lock:
            self.closed = True
            self._close_connections()
            self.writer_queue.close()

    def _close_connections(self) -> None:
        # the checkpoint thread stops (finishing a checkpoint in progress) before its connection is closed
        stopped, self.checkpointer = self.checkpointer, Checkpointer(str(self.path), self._connect)
        stopped.close()
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            with contextlib.suppress(sqlite3.Error):
                connection.close()
        self._writer = None
        self._watch = None
        self._local = threading.local()
