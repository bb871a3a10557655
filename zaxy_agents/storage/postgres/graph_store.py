"""The graph projection on PostgreSQL: one shared graph of record for every worker on every host.

Selected by the same setting as the Eventloom (``ZAXY_BACKEND=postgresql://...``). Each worker keeps its own
in-memory catalog and indexes, built from the log by cursor as on the embedded backend; this store is the
durable graph they all write to and query (temporal versions, supersession, typed relations with their audit
trail, provenance, ``as_of``, traversals as recursive CTEs, keyword search on ``tsvector``).

Concurrent writers. Every worker plans the same rows for the same events (the planner is deterministic), so
the only question is who writes them. :meth:`apply` takes one advisory lock per session in the batch (in key
order: no deadlocks), reads the stored cursors and, per session:

* the batch starts right after the stored cursor -> its rows are written and the cursor moves, in the same
  transaction (``written``);
* the stored cursor is already at or past the batch's end -> another worker wrote these events: nothing is
  written (``skipped``); the worker's memory is still right, because it planned the same rows;
* anything else (the store is behind the batch, or stopped in its middle) -> ``behind``: the projector
  continues that session from the store's own cursor, with a planner restored from the store
  (:meth:`session_state`), so the store never has a gap and never a duplicate.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import weakref
from collections.abc import Iterator
from typing import Any

import psycopg

from zaxy_agents.projection.planner import KeyState, ProjectionBatch
from zaxy_agents.projection.protocol import ProjectionStore
from zaxy_agents.storage.postgres.connect import acquire_pool, probe_connection, release_pool, unavailable
from zaxy_agents.storage.postgres.dsn import PostgresOptions, redact_dsn
from zaxy_agents.storage.postgres.migrations import ensure_schema, migration_state
from zaxy_agents.storage.records import MigrationState

from .graph_features import Features, detect_features
from .graph_reads import PostgresProjectionReads
from .graph_schema import MIGRATIONS
from .graph_sql import INSERT_SQL, READS, RELATION_COLUMNS, ROW_INSERTS, STATEMENTS

WRITTEN, SKIPPED, BEHIND = "written", "skipped", "behind"


class SessionState:
    """What the store holds for one session: its cursor and the planner state needed to continue from it."""

    __slots__ = ("cursor", "keys", "sources")

    def __init__(self, cursor: tuple[int, str] | None, keys: dict[str, KeyState], sources: set[str]) -> None:
        self.cursor, self.keys, self.sources = cursor, keys, sources


class PostgresProjectionStore(PostgresProjectionReads, ProjectionStore):
    """Durable projection graph in PostgreSQL tables (see :mod:`.graph_schema`), shared by many workers."""

    backend = "postgresql"
    shared = True  # other processes write here too: cursors may move ahead of this process's memory

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        schema_mode: str = "auto",
        options: PostgresOptions | None = None,
    ) -> None:
        self.dsn = dsn
        self.options = options or PostgresOptions.from_env(schema=schema)
        self.schema = self.options.schema
        self.location = redact_dsn(dsn)
        quoted = f'"{self.schema}"'
        self._sql = {name: text.replace("{schema}", quoted) for name, text in {**STATEMENTS, **READS}.items()}
        self._inserts = {name: text.replace("{schema}", quoted) for name, text in INSERT_SQL.items()}
        probe = probe_connection(dsn, self.options)
        try:
            self.migration_state: MigrationState = ensure_schema(probe, self.schema, MIGRATIONS, schema_mode)
            self.features: Features = detect_features(probe, self.schema, create=schema_mode != "skip")
        except psycopg.Error as exc:
            raise unavailable(dsn, exc) from exc
        finally:
            probe.close()
        self._pool = acquire_pool(dsn, self.options, name=f"zaxy-{self.schema}")
        self._closed = False
        atexit.register(_close_quietly, weakref.ref(self))

    # ------------------------------------------------------------------ plumbing
    @contextlib.contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError, psycopg.errors.ReadOnlySqlTransaction) as exc:
            raise unavailable(self.dsn, exc) from exc

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            release_pool(self._pool)

    def migrations(self) -> list[dict[str, Any]]:
        with self._connection() as conn:
            state = migration_state(conn, self.schema, MIGRATIONS)
        return [
            {"name": r.name, "checksum": r.checksum, "statement_count": r.statement_count}
            for r in state.records
            if r.state == "applied"
        ]

    # ------------------------------------------------------------------ writes
    def apply(self, batch: ProjectionBatch) -> dict[str, str]:
        """Write the sessions of ``batch`` that start at the stored cursor; report each session's outcome."""
        ranges = _session_ranges(batch)
        if not ranges:
            return {}
        outcome: dict[str, str] = {}
        with self._connection() as conn, conn.transaction():
            # Derived data: a server crash may lose the last commits, and the cursor goes with them.
            conn.execute("SET LOCAL synchronous_commit = off")
            conn.execute(self._sql["lock_sessions"], (sorted({self._lock_key(s) for s in ranges}),))
            stored = {
                row[0]: (int(row[1]), str(row[2]))
                for row in conn.execute(self._sql["cursors_of"], (sorted(ranges),)).fetchall()
            }
            for session, (start, prev_hash, end) in ranges.items():
                have = stored.get(session)
                if (have is None and start == 1) or have == (start - 1, prev_hash):
                    outcome[session] = WRITTEN
                elif have is not None and have[0] >= end:
                    outcome[session] = SKIPPED
                else:
                    outcome[session] = BEHIND
            writing = {session for session, result in outcome.items() if result == WRITTEN}
            if writing:
                self._write(conn, batch, writing)
        return outcome

    def _lock_key(self, session: str) -> int:
        digest = hashlib.blake2b(f"zaxy-projection\x1f{self.schema}\x1f{session}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big", signed=True)

    def _write(self, conn: psycopg.Connection[Any], batch: ProjectionBatch, sessions: set[str]) -> None:
        mine = lambda row: row["session_id"] in sessions  # noqa: E731
        version_session = {row["id"]: row["session_id"] for row in batch.entities}
        previous = {row["to"]: row["from"] for row in batch.superseded_by}
        rows: dict[str, list[dict[str, Any]]] = {
            "events": [row for row in batch.events if mine(row)],
            "entity_keys": [row for row in batch.entity_keys if mine(row)],
            "entities": [{**row, "previous_version": previous.get(row["id"])} for row in batch.entities if mine(row)],
            "sources": [row for row in batch.sources if mine(row)],
            "cites_source": [row for row in batch.cites_source if version_session.get(row["from"]) in sessions],
            "event_cites_source": [row for row in batch.event_cites_source if _event_session(row) in sessions],
            "projected_relations": [row for row in batch.projected_relations if mine(row)],
            "feedback": [row for row in batch.feedback if mine(row)],
            "failures": [row for row in batch.failures if mine(row)],
        }
        for attribute, _table, columns in ROW_INSERTS:
            if rows[attribute]:
                conn.execute(self._inserts[attribute], _columns(rows[attribute], [key for key, _, _ in columns]))
        relations = [row for row in batch.relations if mine(row)]
        if relations:
            names = ["from", "to", "label", *RELATION_COLUMNS]
            conn.execute(self._sql["insert_relations"], _columns(relations, names))
        if batch.closures:
            names = ["id", "valid_to", "invalidated", "closed_by_seq", "reason"]
            conn.execute(self._sql["close_versions"], (*_columns(batch.closures, names), sorted(sessions)))
        key_updates = [row for row in batch.key_updates if row["id"].split("\x1f", 1)[0] in sessions]
        if key_updates:
            conn.execute(self._sql["update_keys"], _columns(key_updates, ["id", "current_version", "closed"]))
        cursors = sorted((s, c) for s, c in batch.cursors.items() if s in sessions)
        conn.execute(
            self._sql["set_cursors"], ([s for s, _ in cursors], [c[0] for _, c in cursors], [c[1] for _, c in cursors])
        )

    def session_state(self, session: str) -> SessionState:
        """The stored cursor of ``session`` and the planner state (identities, sources) that goes with it."""
        with self._connection() as conn, conn.transaction():
            conn.execute(self._sql["lock_sessions"], ([self._lock_key(session)],))
            row = conn.execute(self._sql["cursors_of"], ([session],)).fetchone()
            keys = {
                key: KeyState(str(current), str(valid_from), bool(closed))
                for key, current, valid_from, closed in conn.execute(self._sql["session_keys"], (session,))
            }
            sources = {str(r[0]) for r in conn.execute(self._sql["session_sources"], (session,))}
        return SessionState(None if row is None else (int(row[1]), str(row[2])), keys, sources)

    def reset(self) -> None:
        """Empty every projection table (``zaxy reproject`` on a shared store); embeddings are kept."""
        with self._connection() as conn:
            conn.execute(self._sql["reset"])


def _event_session(row: dict[str, Any]) -> str:
    """The session of an Event node id ``<session>:<seq>``."""
    return str(row["from"]).rsplit(":", 1)[0]


def _columns(rows: list[dict[str, Any]], names: list[str]) -> tuple[list[Any], ...]:
    """Rows as one list per column (the ``unnest`` parameters)."""
    return tuple([row.get(name) for row in rows] for name in names)


def _session_ranges(batch: ProjectionBatch) -> dict[str, tuple[int, str, int]]:
    """Per session: the first event's seq and prev_hash, and the batch's last seq for it."""
    ranges: dict[str, tuple[int, str, int]] = {}
    for row in batch.events:
        session = row["session_id"]
        if session not in ranges or row["seq"] < ranges[session][0]:
            ranges[session] = (int(row["seq"]), str(row["prev_hash"]), 0)
    return {session: (start, prev, int(batch.cursors[session][0])) for session, (start, prev, _) in ranges.items()}


def _close_quietly(ref: weakref.ReferenceType[PostgresProjectionStore]) -> None:
    store = ref()
    if store is not None:
        with contextlib.suppress(Exception):
            store.close()
