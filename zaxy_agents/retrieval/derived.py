"""Where the retrieval indexes live: tables in one SQLite database of derived state, queried where they lie.

The contract follows the derived-store protocol agreed with the projection (issue 24,
/work/coord/notes/index-from-perf.md): an index owns tables prefixed with its name, writes them inside the
projector's write transaction (``apply``; it never commits), hears whether that transaction committed
(``committed`` / ``rolled_back``), and reads through per-thread read connections (WAL snapshots). Nothing is
loaded whole at open and nothing is saved at close: opening is ``sqlite3.connect``.

:class:`LocalDerivedStore` is a small SQLite store that implements that contract for the indexes alone, and
:class:`IndexListeners` adapts the indexes to the projector's listener protocol (``on_batch`` /
``snapshot_state`` / ``restore_state`` / ``reset``): each batch is one transaction that also records the
per-session cursors it reflects, so the projector's snapshot only has to carry those cursors.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

INDEX_FILE = "retrieval.sqlite"
BUSY_TIMEOUT_MS = 30_000


class DerivedStore(Protocol):
    """What an index needs from the derived-state store."""

    folder: Path

    def reader(self) -> sqlite3.Connection:
        """A read connection for the calling thread (autocommit; wrap reads in BEGIN/COMMIT for a snapshot)."""
        ...

    def write(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """A short write transaction outside the projector's batches (background embedding)."""
        ...


class DerivedIndex(Protocol):
    """An index kept in step with the projection, stored in the derived-state database."""

    name: str
    schema_version: int

    def create_schema(self, db: sqlite3.Connection) -> None: ...

    def drop_schema(self, db: sqlite3.Connection) -> None: ...

    def attach(self, store: DerivedStore) -> None: ...

    def apply(self, batch: Any, db: sqlite3.Connection, catalog: Any) -> None: ...

    def committed(self) -> None: ...

    def rolled_back(self) -> None: ...

    def erase(self, db: sqlite3.Connection, session: str, seqs: Sequence[int], envelopes: Any = None) -> None: ...


def configure(connection: sqlite3.Connection) -> sqlite3.Connection:
    """WAL (readers never wait for the writer), NORMAL sync (derived state is replayable from the log),
    secure_delete (erased rows are zeroed in the file, freelist pages included)."""
    connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA secure_delete=ON")
    return connection


class LocalDerivedStore:
    """One SQLite file holding the indexes' tables; one writer connection, one reader per thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.folder = self.path.parent
        self.folder.mkdir(parents=True, exist_ok=True)
        self._write_lock = threading.RLock()
        self._writer = configure(sqlite3.connect(self.path, isolation_level=None, check_same_thread=False))
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False

    def reader(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            self._local.connection = connection
            with self._readers_lock:
                self._readers.append(connection)
        return connection

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        with self._write_lock:
            db = self._writer
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def checkpoint(self) -> None:
        """Fold the WAL into the database file and truncate it (after an erase: no old page copies remain)."""
        with self._write_lock:
            self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._readers_lock:
            for connection in self._readers:
                with contextlib.suppress(sqlite3.Error):
                    connection.close()
            self._readers.clear()
        with self._write_lock, contextlib.suppress(sqlite3.Error):
            self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._writer.close()


_META = """
CREATE TABLE IF NOT EXISTS index_schema(name TEXT PRIMARY KEY, version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS index_cursor(session TEXT PRIMARY KEY, seq INTEGER NOT NULL, hash TEXT NOT NULL);
"""


class IndexListeners:
    """The indexes as one projection listener: each projected batch is one transaction of every index plus
    the cursors it reflects. The projector's snapshot carries only those cursors; on open, indexes that hold
    less than the snapshot (a new or deleted file) are reset and rebuilt by the projector's replay."""

    name = "retrieval_indexes"

    def __init__(self, store: LocalDerivedStore, indexes: Iterable[DerivedIndex]) -> None:
        self.store = store
        self.indexes = list(indexes)
        with store.write() as db:
            for statement in _statements(_META):
                db.execute(statement)
            known = dict(db.execute("SELECT name, version FROM index_schema").fetchall())
            stale = [index for index in self.indexes if known.get(index.name) != index.schema_version]
            for index in stale:
                index.drop_schema(db)
                index.create_schema(db)
                db.execute("INSERT OR REPLACE INTO index_schema VALUES (?, ?)", (index.name, index.schema_version))
            if stale:
                db.execute("DELETE FROM index_cursor")  # another layout: everything is replayed from the log
        for index in self.indexes:
            index.attach(store)

    def cursors(self) -> dict[str, tuple[int, str]]:
        rows = self.store.reader().execute("SELECT session, seq, hash FROM index_cursor").fetchall()
        return {session: (seq, digest) for session, seq, digest in rows}

    # ------------------------------------------------------------------ projector listener protocol
    def on_batch(self, batch: Any, catalog: Any) -> None:
        try:
            with self.store.write() as db:
                for index in self.indexes:
                    index.apply(batch, db, catalog)
                db.executemany(
                    "INSERT OR REPLACE INTO index_cursor VALUES (?, ?, ?)",
                    [(session, seq, digest) for session, (seq, digest) in batch.cursors.items()],
                )
        except BaseException:
            for index in self.indexes:
                index.rolled_back()
            raise
        for index in self.indexes:
            index.committed()

    def snapshot_state(self) -> dict[str, Any]:
        return {"cursors": json.dumps(sorted(self.cursors().items()))}

    def restore_state(self, state: Any) -> bool:
        """Usable when the indexes hold at least what the snapshot covers: events the projector replays past
        the snapshot's cursors and the indexes already hold are skipped by them (a crash between an index
        commit and the snapshot, or another process that projected meanwhile)."""
        if not isinstance(state, dict) or not isinstance(state.get("cursors"), str):
            return False
        try:
            snapshot = {session: int(seq) for session, (seq, _digest) in json.loads(state["cursors"])}
        except (TypeError, ValueError):
            return False
        held = self.cursors()
        return all(session in held and held[session][0] >= seq for session, seq in snapshot.items())

    def reset(self) -> None:
        with self.store.write() as db:
            for index in self.indexes:
                index.drop_schema(db)
                index.create_schema(db)
            db.execute("DELETE FROM index_cursor")
        for index in self.indexes:
            index.committed()

    def erase(self, session: str, seqs: Sequence[int], envelopes: Any = None) -> None:
        """Remove events from every index, then fold the WAL so no copy of their rows remains on disk."""
        with self.store.write() as db:
            for index in self.indexes:
                index.erase(db, session, seqs, envelopes)
        for index in self.indexes:
            index.committed()
        self.store.checkpoint()


def _statements(script: str) -> list[str]:
    return [statement.strip() for statement in script.split(";") if statement.strip()]


def open_standalone(path: str | Path, *indexes: DerivedIndex) -> IndexListeners:
    """Indexes in their own SQLite file at ``path`` (tools, tests): ``listeners.store.close()`` when done."""
    return IndexListeners(LocalDerivedStore(path), indexes)
