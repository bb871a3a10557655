"""A cross-thread index of live checkpoints in SQLite: ``list(None, limit=n)`` reads n rows, not every thread.

Each thread is its own session, so listing the newest checkpoints of all threads used to replay every thread
session. The index keeps one row per live checkpoint — ``(session, ns, id, seq)``, no channel values and no
metadata, so nothing erasable lives here — and, per thread session, the log position it was built to
(``applied_seq`` / ``applied_hash``) and the session's change token. A refresh compares each thread's current
token with the stored one (files: one ``stat`` per thread; PostgreSQL: one query over the head rows) and reads
only the tails of threads that changed, so a cold ``list(None, limit=10)`` costs the listing plus ten rows plus
the ten threads it returns, whatever the other threads hold.

Like the item store's derived state (``storage/derived_sqlite.py``) it is disposable: a file of another format
or another log, or a damaged one, is rebuilt; a thread whose position the log no longer has (replaced,
truncated) is re-read from its start; an ``eventloom.erased`` record re-reads the thread from the scrubbed log.
Several processes share the file: a refresh takes SQLite's write lock and re-checks each thread inside it.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from zaxy_agents.eventloom.erasure import ERASURE_TYPE, is_erased
from zaxy_agents.eventloom.protocol import EventLog

from . import events as ev
from .derived_file import LazyDerivedFile
from .sessions import is_thread_session

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
SCHEMA = (
    "CREATE TABLE threads (session TEXT PRIMARY KEY, applied_seq INTEGER NOT NULL, applied_hash TEXT NOT NULL, "
    "token TEXT NOT NULL)",
    "CREATE TABLE checkpoints (session TEXT NOT NULL, ns TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL, "
    "PRIMARY KEY (session, ns, id))",
    "CREATE INDEX checkpoints_newest ON checkpoints (id DESC, session, ns)",
)
_PAGE = 64


class CheckpointIndex(LazyDerivedFile):
    """The live checkpoints of every thread session under ``prefix``, newest first on demand."""

    kind, format_version, schema = "checkpoint-index", FORMAT_VERSION, SCHEMA

    def __init__(self, log: EventLog, path: Path, *, prefix: str, identity: str) -> None:
        super().__init__(log, path, prefix=prefix, identity=identity)
        self.seen_tokens: dict[str, object] = {}  # change tokens read by the last refresh

    # ------------------------------------------------------------------ reading
    def newest(self, *, before_id: str | None = None) -> Iterator[tuple[str, str, str]]:
        """``(session, ns, id)`` of live checkpoints, newest id first (ties: session, then namespace), after
        bringing the index up to the log. Read a page at a time, so a caller that stops early reads little."""
        self.refresh()
        where, args = ("WHERE id < ?", (before_id,)) if before_id is not None else ("", ())
        sql = f"SELECT session, ns, id FROM checkpoints {where} ORDER BY id DESC, session, ns LIMIT ? OFFSET ?"
        offset = 0
        while True:
            with self.db.lock:
                rows = self.db.conn.execute(sql, (*args, _PAGE, offset)).fetchall()
            yield from rows
            if len(rows) < _PAGE:
                return
            offset += _PAGE

    # ------------------------------------------------------------------ keeping current
    def tokens(self) -> dict[str, str]:
        """Every thread session's change token (JSON text), in one pass over the log's sessions. The tokens as
        the log gave them stay in :attr:`seen_tokens` (a listing preloads the threads it returns with them)."""
        tokens = self.log.change_tokens(self.prefix + ".")
        self.seen_tokens = {
            session: token for session, token in tokens.items() if is_thread_session(session, self.prefix)
        }
        return {session: _dump(token) for session, token in self.seen_tokens.items()}

    def refresh(self) -> None:
        current = self.tokens()
        with self.db.lock:
            stored = dict(self.db.conn.execute("SELECT session, token FROM threads").fetchall())
        changed = [session for session, token in current.items() if stored.get(session) != token]
        gone = [session for session in stored if session not in current]
        if not changed and not gone:
            return
        with self.db.transaction() as conn:
            for session in gone:
                conn.execute("DELETE FROM checkpoints WHERE session = ?", (session,))
                conn.execute("DELETE FROM threads WHERE session = ?", (session,))
            for session in changed:
                row = conn.execute(
                    "SELECT applied_seq, applied_hash, token FROM threads WHERE session = ?", (session,)
                ).fetchone()
                if row is not None and row[2] == current[session]:
                    continue  # another process caught this thread up meanwhile
                seq, hash = self._catch_up(conn, session, *(row[:2] if row is not None else (0, "")))
                conn.execute(
                    "INSERT OR REPLACE INTO threads VALUES (?, ?, ?, ?)", (session, seq, hash, current[session])
                )

    def _catch_up(self, conn: sqlite3.Connection, session: str, seq: int, hash: str) -> tuple[int, str]:
        """Apply the session's events after ``seq`` (re-reading it whole when the event at ``seq`` no longer has
        ``hash``, or when an erasure record comes by). Returns the new position."""
        events = self.log.replay_envelopes(session, max(seq, 1))
        if seq > 0:
            first = next(events, None)
            if first is None or first.get("seq") != seq or first.get("hash") != hash:
                logger.info("checkpoint index of %s no longer matches its log; re-reading the thread", session)
                return self._reread(conn, session)
        for envelope in events:
            if envelope["type"] == ERASURE_TYPE:
                return self._reread(conn, session)
            self._apply(conn, session, envelope)
            seq, hash = envelope["seq"], envelope["hash"]
        return seq, hash

    def _reread(self, conn: sqlite3.Connection, session: str) -> tuple[int, str]:
        conn.execute("DELETE FROM checkpoints WHERE session = ?", (session,))
        seq, hash = 0, ""
        for envelope in self.log.replay_envelopes(session, 1):
            self._apply(conn, session, envelope)
            seq, hash = envelope["seq"], envelope["hash"]
        return seq, hash

    @staticmethod
    def _apply(conn: sqlite3.Connection, session: str, envelope: dict[str, Any]) -> None:
        """The same rules as :meth:`ThreadState.apply` for which checkpoints are live."""
        event_type = envelope["type"]
        if event_type not in _LIVENESS_TYPES or is_erased(envelope):
            return
        payload = envelope["payload"]
        try:
            if event_type == ev.SAVED:
                conn.execute(
                    "INSERT OR REPLACE INTO checkpoints VALUES (?, ?, ?, ?)",
                    (session, payload.get("checkpoint_ns", ""), str(payload["checkpoint_id"]), envelope["seq"]),
                )
            elif event_type == ev.THREAD_DELETED or (event_type == ev.PRUNED and payload.get("strategy") == "delete"):
                conn.execute("DELETE FROM checkpoints WHERE session = ?", (session,))
            else:  # runs_deleted, pruned (keep_latest)
                for group in payload.get("checkpoints", []):
                    conn.executemany(
                        "DELETE FROM checkpoints WHERE session = ? AND ns = ? AND id = ?",
                        [(session, group["checkpoint_ns"], str(checkpoint_id)) for checkpoint_id in group["ids"]],
                    )
        except (KeyError, TypeError, ValueError, AttributeError):
            logger.warning("checkpoint index: skipping malformed %s event at %s seq %s", event_type, session,
                           envelope.get("seq"))  # fmt: skip


_LIVENESS_TYPES = frozenset({ev.SAVED, ev.THREAD_DELETED, ev.RUNS_DELETED, ev.PRUNED})


def _dump(token: Any) -> str:
    """Tokens are tuples of ints and strings (or ``None``): their ``repr`` is exact and cheaper than JSON."""
    return repr(token)
