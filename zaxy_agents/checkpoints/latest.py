"""A stored copy of each long thread's latest checkpoint, so a cold ``get_state`` reads one row, not the thread.

A thread's channel values are spread over its history (each step's new messages ride in that step's events), so
answering ``get_state`` for a 2,500-checkpoint thread in a fresh process used to replay the whole session.
SqliteSaver reads one row. This file keeps, per thread session and namespace, the latest checkpoint tuple as
``get_tuple`` returns it (body with channel values, metadata, parent, pending writes), serialised with the
saver's own serde (LangGraph's, never pickle), beside the log position it was built from: the session's head
``(seq, hash)``.

It is served only while the log's head is still exactly that event: the log is hash-chained, so an unchanged
head proves nothing was appended, rewritten or erased since; any other head (a later step, another writer, an
erasure record) means the copy is stale, it is deleted and the thread is replayed. A copy is written when a
saver closes, for the long threads it holds, and after a cold read had to replay a long thread. Erasure drops a
session's copies from every such file in the deployment's derived folder (``forget_everywhere``), with
``secure_delete`` and a truncated WAL, so a deleted thread leaves no value on disk.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from zaxy_agents.storage.derived_sqlite import DerivedDatabase

from .derived_file import LazyDerivedFile

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
SUFFIX = ".latest.sqlite3"
MIN_EVENTS = 200  # threads shorter than this replay about as fast as a row is read: no copy is kept
SCHEMA = (
    "CREATE TABLE latest (session TEXT NOT NULL, ns TEXT NOT NULL, head_seq INTEGER NOT NULL, "
    "head_hash TEXT NOT NULL, checkpoint_id TEXT NOT NULL, parent_id TEXT, body_type TEXT NOT NULL, "
    "body BLOB NOT NULL, metadata_type TEXT NOT NULL, metadata BLOB NOT NULL, writes_type TEXT NOT NULL, "
    "writes BLOB NOT NULL, PRIMARY KEY (session, ns))",
)
_COLUMNS = (
    "head_seq, head_hash, checkpoint_id, parent_id, body_type, body, metadata_type, metadata, writes_type, writes"
)


class LatestCheckpoints(LazyDerivedFile):
    """The latest checkpoint of long threads under ``prefix``, tied to each session's log head."""

    kind, format_version, schema = "checkpoint-latest", FORMAT_VERSION, SCHEMA

    # ------------------------------------------------------------------ reading
    def read(self, session: str, ns: str, thread_id: str, serde: SerializerProtocol) -> CheckpointTuple | None:
        """The stored latest checkpoint of ``session`` / ``ns`` if the log's head is still the event it was built
        at; ``None`` (and the stale copy deleted) otherwise."""
        if not self.path.exists():
            return None
        with self.db.lock:
            row = self.db.conn.execute(
                f"SELECT {_COLUMNS} FROM latest WHERE session = ? AND ns = ?", (session, ns)
            ).fetchone()
        if row is None:
            return None
        head = self.log.head(session)
        if head is None or (head.seq, head.hash) != (row[0], row[1]):
            self.forget(session)  # stale: the thread moved on (or was erased) since the copy was made
            return None
        try:
            body = serde.loads_typed((row[4], bytes(row[5])))
            metadata = serde.loads_typed((row[6], bytes(row[7])))
            writes = serde.loads_typed((row[8], bytes(row[9])))
        except Exception as exc:  # an unreadable copy is replaced by the replay, never served
            logger.warning("stored latest checkpoint of %s is unreadable (%s); replaying the thread", session, exc)
            self.forget(session)
            return None
        ids = {"thread_id": thread_id, "checkpoint_ns": ns}
        return CheckpointTuple(
            config={"configurable": {**ids, "checkpoint_id": row[2]}},
            checkpoint=body,
            metadata=metadata,
            parent_config={"configurable": {**ids, "checkpoint_id": row[3]}} if row[3] else None,
            pending_writes=[(task_id, channel, value) for task_id, channel, value in writes],
        )

    # ------------------------------------------------------------------ writing
    def write(
        self, session: str, head: tuple[int, str], latest: list[CheckpointTuple], serde: SerializerProtocol
    ) -> None:
        """Replace ``session``'s copies by ``latest`` (one tuple per namespace), built at log head ``head``."""
        rows = []
        for entry in latest:
            configurable = entry.config["configurable"]
            parent = (entry.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            body = serde.dumps_typed(entry.checkpoint)
            metadata = serde.dumps_typed(entry.metadata)
            writes = serde.dumps_typed([list(write) for write in entry.pending_writes or []])
            rows.append(
                (session, configurable.get("checkpoint_ns", ""), head[0], head[1], configurable["checkpoint_id"],
                 parent, *body, *metadata, *writes)
            )  # fmt: skip
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM latest WHERE session = ?", (session,))
            conn.executemany(f"INSERT INTO latest VALUES ({', '.join('?' * 12)})", rows)

    def stored_head(self, session: str) -> tuple[int, str] | None:
        if not self.path.exists():
            return None
        with self.db.lock:
            row = self.db.conn.execute(
                "SELECT head_seq, head_hash FROM latest WHERE session = ? LIMIT 1", (session,)
            ).fetchone()
        return (row[0], row[1]) if row is not None else None

    def forget(self, session: str) -> None:
        """Delete ``session``'s copies (zeroed by ``secure_delete``; the WAL is truncated so no page keeps them)."""
        if self.path.exists():
            _forget(self.db, session)


def _forget(db: DerivedDatabase, session: str) -> None:
    with db.transaction() as conn:
        deleted = conn.execute("DELETE FROM latest WHERE session = ?", (session,)).rowcount
    if deleted:
        with db.lock:
            try:
                db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.OperationalError as exc:  # a reader in another process holds the WAL
                logger.warning("could not truncate %s after dropping %s (%s)", db.path, session, exc)


def forget_everywhere(folder: Path, session: str) -> None:
    """Drop ``session``'s copies from every latest-checkpoint file in ``folder`` (an erasure, in any process
    of the deployment: the files are shared by every saver on this derived folder)."""
    if not folder.is_dir():
        return
    for path in folder.glob(f"*{SUFFIX}"):
        try:
            conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        except sqlite3.Error:
            continue
        try:
            conn.execute("PRAGMA secure_delete=ON")
            try:
                deleted = conn.execute("DELETE FROM latest WHERE session = ?", (session,)).rowcount
            except sqlite3.OperationalError:  # not (yet) a latest-checkpoint file
                continue
            if deleted:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
