"""Derived state of one session in an SQLite file, tied to the log by the (seq, hash) it was built from.

A view of a session (the LangGraph store's items) is rebuildable from the log, so it may live on disk in any
data-only form. Keeping it in SQLite makes opening cost O(1) and reading cost O(what is read), whatever the
session's history, where replaying the log costs O(history) at every open.

The file records ``kind`` / ``format`` (the code's schema), ``session``, ``identity`` (which log: folder or
server) and the position it was built to: ``applied_seq``, ``applied_hash`` and the log's ``change_token``
when it was last checked. Because the log is hash-chained, an event at ``applied_seq`` that still has
``applied_hash`` proves the whole prefix is the one the file was built from; only the tail after it is read.
A file of another format, session or log, one whose position the log no longer has (replaced, truncated),
and a damaged file are rebuilt from the log. Several processes share one file: catching up takes SQLite's
write lock and re-reads the position inside it, so a tail is applied once. The log stays the truth: the file
may lag it (a crash between an append and the file's commit) and is caught up on the next read; SQLite runs
in WAL mode with ``synchronous=NORMAL`` (never corrupt after a crash, may lose its last commits, which the log
still has) and ``secure_delete`` (deleted content is overwritten, not left in free pages). Nothing here ever
executes stored data (no pickle).

Erasure: erased events keep their hashes (the position stays valid), so a follower that meets an
``eventloom.erased`` record after its position asks its owner whether a live row still derives from an erased
event (``holds``; without it, assume so): if so it empties the derived tables and rebuilds them from the scrubbed
log (erased events are skipped). Either way it then rewrites the file (``VACUUM``) and truncates its WAL, so no
page of the file keeps erased content (rows deleted earlier were zeroed by ``secure_delete`` but their old
images may sit in the WAL).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from zaxy_agents.eventloom.erasure import ERASURE_TYPE, is_erased
from zaxy_agents.eventloom.protocol import EventLog, LogCapability

logger = logging.getLogger(__name__)

# apply(seq, type, timestamp, payload) -> settled: False while the event opens or continues a group of events
# whose end has not been read yet (a chunked value: chunks, then the put that uses them). The recorded position
# never moves past an unsettled event, so a pass that stops inside a group reads the group again next time; an
# event that does not continue an open group abandons it (an orphan left by a crash), so only the last events
# of a pass can be unsettled.
Apply = Callable[[int, str, str, dict[str, Any]], bool]
# holds(ranges) -> whether a live row derives from an event in one of the inclusive (from_seq, to_seq) ranges.
Holds = Callable[[list[tuple[int, int]]], bool]

_META = "CREATE TABLE IF NOT EXISTS derived_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
# Every read of the meta table is this one statement (a handful of rows): the connection's statement cache then
# compiles it once per open, where the position's own ``WHERE key IN (...)`` cost ~90 us more of a fresh
# process's open (docs/benchmarks.md, "ZaxyStore open + first get").
_META_ROWS = "SELECT key, value FROM derived_meta"


class DerivedDatabase:
    """One SQLite file: ``schema`` statements create its tables; the meta table ties it to a log session."""

    def __init__(
        self, path: Path, *, kind: str, format_version: int, session: str, identity: str, schema: Sequence[str]
    ) -> None:
        self.path = path
        self.expected = {"kind": kind, "format": str(format_version), "session": session, "identity": identity}
        self.schema = tuple(schema)
        self.lock = threading.RLock()
        self.rebuilt = False  # True when this open found no usable file and starts from an empty state
        # The meta rows the open read to accept the file: the first plain position read takes them instead of
        # reading them again (``position(reuse_open_read=True)``); any position read clears them.
        self._open_rows: dict[str, str] | None = None
        if not os.path.isdir(os.path.dirname(path)):  # one stat; mkdir(exist_ok=True) raised and caught an error
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = self._open()
        except sqlite3.DatabaseError as exc:  # damaged: derived state is disposable, the log is the truth
            logger.warning("derived state %s is unreadable (%s); rebuilding it from the log", path, exc)
            self._remove_files()
            self.conn = self._open()

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA secure_delete=ON")
            if not self._matches(conn, keep=True):  # the common case reads the meta rows and takes no write lock
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.execute(_META)
                    if not self._matches(conn):
                        self._wipe(conn)
                        for statement in self.schema:
                            conn.execute(statement)
                        conn.executemany("INSERT INTO derived_meta VALUES (?, ?)", self.expected.items())
                        self.rebuilt = True
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
        except BaseException:
            conn.close()
            raise
        return conn

    def _matches(self, conn: sqlite3.Connection, *, keep: bool = False) -> bool:
        try:
            stored = dict(conn.execute(_META_ROWS).fetchall())
        except sqlite3.OperationalError:  # no meta table yet
            return False
        matches = all(stored.get(key) == value for key, value in self.expected.items())
        if matches and keep:
            self._open_rows = stored
        return matches

    @staticmethod
    def _wipe(conn: sqlite3.Connection) -> None:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            if table != "derived_meta" and not table.startswith("sqlite_"):
                conn.execute(f'DROP TABLE "{table}"')
        conn.execute("DELETE FROM derived_meta")

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")

    # ------------------------------------------------------------------ position
    def position(self, *, reuse_open_read: bool = False) -> tuple[int, str, Any]:
        """``(applied_seq, applied_hash, change_token)``. ``reuse_open_read``: the rows the open read, if no position
        was read since, for a plain read outside any transaction (the follower's check that nothing is new: the
        token it compares is read after them, so a file caught up since only sends it to its transaction, which
        reads the position again under the write lock). Saves a fresh process's open one statement (~50 us)."""
        rows, self._open_rows = (self._open_rows if reuse_open_read else None), None
        if rows is None:
            rows = dict(self.conn.execute(_META_ROWS).fetchall())
        token = rows.get("change_token")
        return int(rows.get("applied_seq", 0)), rows.get("applied_hash", ""), _token(token)

    def set_position(self, seq: int, hash: str, token: Any) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO derived_meta VALUES (?, ?)",
            [("applied_seq", str(seq)), ("applied_hash", hash), ("change_token", _dump_token(token))],
        )

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` (the write lock, so other processes wait) ... ``COMMIT``, or ``ROLLBACK``."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def scrub(self) -> None:
        """Leave no page holding deleted rows: ``VACUUM`` rewrites the file, the WAL is checkpointed and truncated
        before and after (``secure_delete`` already zeroes freed cells). Outside any transaction."""
        with self.lock:
            try:
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self.conn.execute("VACUUM")
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.OperationalError as exc:  # another process holds a read snapshot past the timeout
                logger.warning("could not compact %s after an erasure (%s); the next erasure retries", self.path, exc)

    def close(self) -> None:
        with self.lock:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.conn.close()


def _erased_ranges(payload: Any) -> list[tuple[int, int]]:
    """The inclusive seq ranges an ``eventloom.erased`` record names (never content)."""
    ranges = payload.get("ranges") if isinstance(payload, dict) else None
    return [
        (item["from_seq"], item["to_seq"])
        for item in (ranges if isinstance(ranges, list) else [])
        if isinstance(item, dict) and isinstance(item.get("from_seq"), int) and isinstance(item.get("to_seq"), int)
    ]


_NEVER: Any = object()  # a change token no log ever has: "check the log again"


def _dump_token(token: Any) -> str:
    return "" if token is _NEVER else json.dumps(token)


def _token(text: str | None) -> Any:
    if not text:
        return _NEVER
    value = json.loads(text)
    return tuple(value) if isinstance(value, list) else value


class DerivedFollower:
    """Keeps a :class:`DerivedDatabase` in step with its session's log (this process's appends and others').

    ``apply`` writes one event into the database (inside the follower's transaction); ``reset`` empties the
    derived tables before a rebuild. ``foreign`` is set when events were applied by another process since
    this one last looked, so in-memory caches over the database must be dropped.
    """

    def __init__(
        self, log: EventLog, db: DerivedDatabase, apply: Apply, reset: Callable[[], None], holds: Holds | None = None
    ) -> None:
        self.log = log
        self.holds = holds
        self.db = db
        self.session = db.expected["session"]
        self.apply = apply
        self.reset = reset
        self._token_is_head = LogCapability.CHANGE_TOKEN not in log.capabilities
        self._token: Any = _NEVER
        self._seen_seq = -1  # the position this process last knew the database to be at
        self._erased = False  # an erasure record was applied: the file is compacted after the transaction

    def token(self) -> Any:
        return self.log.change_token(self.session)

    def catch_up(self) -> bool:
        """Bring the database up to the log. True when anything changed that this process did not apply
        itself (the caller drops caches)."""
        token = self.token()
        if token == self._token:
            return False
        with self.db.lock:
            seq, _hash, stored = self.db.position(reuse_open_read=True)  # a plain read: no write lock if nothing is new
        if stored == token:
            foreign = seq != self._seen_seq
            self._token, self._seen_seq = token, seq
            return foreign
        with self.db.transaction():
            seq, hash, stored = self.db.position()
            foreign = seq != self._seen_seq
            if stored != token:
                seq, hash, settled = self._replay(seq, hash)
                foreign = True
                if not settled:
                    token = _NEVER  # stopped inside a group: read it again next time
                self.db.set_position(seq, hash, token)
        self._token, self._seen_seq = token, seq
        self._scrub_if_erased()
        return foreign

    def _scrub_if_erased(self) -> None:
        if self._erased:
            self._erased = False
            self.db.scrub()

    def absorb(self, events: Sequence[Any], apply_own: Callable[[Any], bool]) -> bool:
        """Apply this process's just-appended ``events`` (pydantic Events), replaying any gap before them.

        Returns True when another process had already applied some of them (in-memory caches must be dropped).
        """
        if not events:
            return False
        with self.db.transaction():
            seq, hash, _stored = self.db.position()
            foreign = seq != self._seen_seq
            if events[0].seq > seq + 1:
                seq, hash, _settled = self._replay(seq, hash, to_seq=events[0].seq - 1)
                foreign = True
            fresh = [event for event in events if event.seq > seq]
            foreign = foreign or len(fresh) < len(events)
            settled = (seq, hash)
            for event in fresh:
                if apply_own(event):
                    settled = (event.seq, event.hash)
            token = self._confirm(events[-1]) if settled[0] == events[-1].seq else _NEVER
            self.db.set_position(*settled, token)
        self._seen_seq = settled[0]
        self._token = token
        self._scrub_if_erased()
        return foreign

    def _confirm(self, last: Any) -> Any:
        """The log's change token right after our append, if nobody appended since (else: unknown)."""
        if self._token_is_head:
            return (last.seq, last.hash)
        written = self.log.last_written(self.session)
        if written is not None:
            if written[1] == last.seq and self.token() == written[0]:
                return written[0]
            return _NEVER
        token = self.token()
        head = self.log.head(self.session)
        return token if head is not None and head.seq == last.seq else _NEVER

    def _replay(self, seq: int, hash: str, to_seq: int | None = None) -> tuple[int, str, bool]:
        """Apply the log after ``seq`` (checking the event at ``seq`` still has ``hash``; else rebuild), skipping
        erased events; an erasure record after ``seq`` means rows already applied may hold erased content, so
        the tables are emptied and rebuilt. Returns the settled position and whether the pass ended settled."""
        events = self.log.replay_envelopes(self.session, max(seq, 1), to_seq)
        if seq > 0:
            first = next(events, None)
            if first is None or first.get("seq") != seq or first.get("hash") != hash:
                logger.info("derived state of %s no longer matches its log; rebuilding", self.session)
                self.reset()
                seq, hash = 0, ""
                events = self.log.replay_envelopes(self.session, 1, to_seq)
        settled, last = (seq, hash), seq
        for envelope in events:
            if is_erased(envelope):
                continue
            if envelope["type"] == ERASURE_TYPE and seq > 0:
                self._erased = True
                ranges = _erased_ranges(envelope.get("payload"))
                if self.holds is None or self.holds(ranges):
                    logger.info("an erasure in %s: rebuilding its derived state from the scrubbed log", self.session)
                    self.reset()
                    return self._replay(0, "", to_seq)
            last = envelope["seq"]
            if self.apply(envelope["seq"], envelope["type"], envelope["timestamp"], envelope["payload"]):
                settled = (envelope["seq"], envelope["hash"])
        return settled[0], settled[1], settled[0] == last
