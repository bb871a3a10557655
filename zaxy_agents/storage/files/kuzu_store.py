"""The embedded graph store: Kuzu 0.11.3 behind the :class:`ProjectionStore` protocol.

Write path (measured on this machine): one MERGE per row ~120 rows/s, UNWIND CREATE ~12k node rows/s but
relation creation by MATCH only ~2-3k rows/s, ``COPY FROM`` Arrow ~135k rows/s *inside* a transaction. So a
batch is written as Arrow COPYs plus a few keyed UNWIND updates, all in one transaction together with the
per-session cursor: a crash leaves the graph exactly at a previous cursor, never half a batch.

Kuzu facts that shape this module: one read-write process per database file (a second process cannot even
open it read-only while it is held -> :class:`LockedError`, callers fall back to log-only mode); exactly one
``Database`` object per path per process (two silently lose writes), hence the process-wide registry; one
write transaction at a time, hence the writer lock; and no read from another thread while a write transaction or a
checkpoint runs (it crashed the process, or made the checkpoint time out), hence :meth:`_exclusive`.
"""

from __future__ import annotations

import contextlib
import importlib.util  # noqa: F401 - kuzu's COPY-from-Arrow path needs importlib.util loaded
import json
import math
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import kuzu
import pyarrow as pa

from zaxy_agents.errors import LockedError
from zaxy_agents.eventloom.canonical import GENESIS_HASH
from zaxy_agents.projection.model import typed_label
from zaxy_agents.projection.planner import KeyState, ProjectionBatch, event_node_id
from zaxy_agents.projection.protocol import EntityWords, ProjectionStore
from zaxy_agents.projection.records import EntityVersion, ProjectionStats, RelationRecord, TraversalHit
from zaxy_agents.storage.files.folder import ensure_eventloom_dir

from . import entity_search
from .kuzu_schema import (
    BATCH_ROW_KEYS,
    DERIVED_HASH_COLUMNS,
    DERIVED_NODE_COLUMNS,
    EDGE_AUDIT_COLUMNS,
    ENTITY_TEXT_COLUMNS,
    EXTRA_PAIRS,
    MIGRATION_RECORD_TABLE,
    MIGRATION_TABLE_DDL,
    MIGRATIONS,
    MIRRORED,
    NODE_COLUMNS,
    NODE_KEY,
    REL_TABLES,
    RELATES_EVIDENCE_DEFAULTS,
    RELATES_STORED,
    UNCHAINED_PREV_HASH,
    node_key,
    stored_columns,
    stored_node_columns,
)

_json_string = json.encoder.encode_basestring  # C accelerated, like json.dumps(..., ensure_ascii=False)
_JSON_SCALAR = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
ROW_BY_ROW_LIMIT = 3000  # rows per batch up to which per-row statements beat COPY (cheap commits)
REL_COPY = True  # relationships always by COPY: a per-row CREATE into a two-way rel table costs 2-4 MB of pages
LOOKUP_CHUNK = 2000  # identities looked up per query when the planner continues from the graph
BUFFER_POOL_BYTES = 256 * 1024 * 1024  # Kuzu's default is 80 % of the machine's memory
_ARROW_TYPES = {"STRING": pa.string(), "INT64": pa.int64(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_()}
_REGISTRY_LOCK = threading.Lock()
_DATABASES: dict[str, tuple[kuzu.Database, int]] = {}

EXTRA_PAIR_ROW_KEYS = {"CITES_SOURCE": "event_cites_source"}
REBUILD_MIGRATIONS = frozenset(migration.name for migration in MIGRATIONS if migration.rebuild)
# The protocol's total order of listed versions (``protocol.version_order``): Kuzu compares strings by their UTF-8
# bytes, which is code-point order, as Python and PostgreSQL's ``COLLATE "C"`` columns compare them.
VERSION_ORDER = "e.source_event_seq, e.session_id, e.id"
TEXT_CHUNK = 2000  # version ids whose text is asked for at once (dump, keyword search)
_UNCHAINED = UNCHAINED_PREV_HASH[0]
_AUDIT_NAMES = [name for name, _ in EDGE_AUDIT_COLUMNS]


def _stored_names(table: str) -> list[str]:
    """The columns of a node table this file stores, its numeric primary key left out (``kuzu_schema.
    stored_node_columns``; read at each use, so a test can write the layout of an earlier release)."""
    return [name for name, _ in stored_node_columns(table) if name != NODE_KEY[0]]


def _key_name() -> str:
    """The primary-key column of this file's node tables: ``pk``, a number made from the node's id
    (``kuzu_schema.NODE_KEY``, since migration 0010), or ``id`` (earlier layouts)."""
    return stored_node_columns("Event")[0][0]


def _derived_node(table: str) -> dict[str, tuple[tuple[str, ...], Callable[..., Any]]]:
    """The columns of ``kuzu_schema.DERIVED_NODE_COLUMNS`` this file does not store for ``table``."""
    stored = _stored_names(table)
    return {name: spec for name, spec in DERIVED_NODE_COLUMNS.get(table, {}).items() if name not in stored}


def _completer(table: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A function that adds to a node's stored columns (a dict) the columns the file does not store, made from them
    (built once per read: the layout is looked up here, not per row)."""
    derived = list(_derived_node(table).items())

    def complete(fields: dict[str, Any]) -> dict[str, Any]:
        for name, (sources, make) in derived:
            fields[name] = make(*(fields[source] for source in sources))
        return fields

    return complete


def _column_exprs(alias: str, table: str, name: str) -> list[str]:
    """What to RETURN for ``alias.name``: the column, or the stored columns it is made from."""
    spec = _derived_node(table).get(name)
    return [f"{alias}.{name}"] if spec is None else [f"{alias}.{source}" for source in spec[0]]


def _column_maker(table: str, name: str) -> Callable[[Sequence[Any]], Any]:
    """A function giving ``alias.name`` from the values :func:`_column_exprs` returned (built once per read)."""
    spec = _derived_node(table).get(name)
    if spec is None:
        return lambda values: values[0]
    make = spec[1]
    return lambda values: make(*values)


def _keys(ids: Iterable[str]) -> list[Any]:
    """The primary-key values of the nodes whose ids are ``ids`` (in order)."""
    return [node_key(node_id) for node_id in ids] if _key_name() == NODE_KEY[0] else list(ids)


def _relates_stored() -> list[str]:
    """The RELATES columns this file stores (``kuzu_schema.RELATES_STORED``; read at each use, so a test can write
    the layout of an earlier release)."""
    return [name for name, _ in RELATES_STORED]


def _relates_stored_return() -> str:
    return ", ".join(f"r.{name}" for name in _relates_stored())


Texts = Callable[[Sequence[str]], dict[str, tuple[str, str]]]  # version ids -> (summary, properties JSON)


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


class KuzuProjectionStore(ProjectionStore):
    """Durable projection graph in an embedded Kuzu file."""

    backend = "kuzu"
    shared = False  # one read-write process per file: nobody else writes here

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
        self._spanning: int | None = None  # the thread inside spanning_transaction()
        self.rows_applied = 0
        self._closed = False
        self._texts: Texts | None = None
        self._entity_words: EntityWords | None = None
        held = "Session" in {name for (name,) in self._rows("CALL SHOW_TABLES() RETURN name")} and self.cursors()
        applied = self.migrate()
        # A graph that predates a schema change its rows cannot be completed for starts over (derived data; the
        # projector re-projects it from the log, as for a new workspace). In a new file when this store is the
        # file's only user in the process (the caller holds graph.lock): a Kuzu file never shrinks, so tables
        # emptied in place would keep every page the old rows used. (``held``: rows before a migration that
        # re-creates every table, 0010.)
        rebuild = REBUILD_MIGRATIONS.intersection(applied) and (held or self.cursors() or self.typed_labels())
        if rebuild and not self._recreate_file():
            self.reset()

    # ------------------------------------------------------------------ plumbing
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

    # ------------------------------------------------------------------ schema
    def migrate(self) -> list[str]:
        """Apply missing migrations (idempotent); returns the names applied now.

        Each applied migration is recorded at once in the ``Migration`` table's comment (see
        ``kuzu_schema.MIGRATION_RECORD_TABLE``): a crash between two migrations leaves the earlier ones recorded.
        The statements of migrations before one that re-creates every table (``Migration.recreates``) are not run,
        only recorded: that one drops what they would build (a new file gets one schema, not every past one; each
        DDL statement is a commit).
        """
        connection = self._connection()
        with self._writing():
            connection.execute(MIGRATION_TABLE_DDL)
            records = self._migration_records()
            applied = {record["name"] for record in records}
            pending = [migration for migration in MIGRATIONS if migration.name not in applied]
            fresh = max((at for at, migration in enumerate(pending) if migration.recreates), default=0)
            done = []
            for at, migration in enumerate(pending):
                if migration.recreates:  # every table of the file goes; the statements create the whole schema
                    tables = self._rows("CALL SHOW_TABLES() RETURN name, type")
                    for name, _kind in sorted(tables, key=lambda row: row[1] != "REL"):  # relationships first
                        if name != MIGRATION_RECORD_TABLE:
                            connection.execute(f"DROP TABLE `{name}`")
                for statement in migration.statements if at >= fresh else ():
                    connection.execute(statement)
                records.append(
                    {
                        "name": migration.name,
                        "checksum": migration.checksum,
                        "statement_count": len(migration.statements),
                        "applied_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    }
                )
                self._record_migrations([r for r in records if not r.get("row")])
                done.append(migration.name)
            return done

    def _migration_records(self) -> list[dict[str, Any]]:
        """Applied migrations: the comment's records, plus the rows a file written before 0005 holds."""
        comment = next(
            (c for name, c in self._rows("CALL SHOW_TABLES() RETURN name, comment") if name == MIGRATION_RECORD_TABLE),
            "",
        )
        records = [dict(record) for record in json.loads(comment)] if comment else []
        rows = self._rows("MATCH (m:Migration) RETURN m.name, m.checksum, m.statement_count, m.applied_at")
        records += [
            {"name": n, "checksum": c, "statement_count": k, "applied_at": t, "row": True} for n, c, k, t in rows
        ]
        return records

    def _record_migrations(self, records: list[dict[str, Any]]) -> None:
        text = json.dumps(records, separators=(",", ":"), sort_keys=True)
        # Kuzu takes a comment only as a literal: the records are our own names, hex checksums, counts and times
        if "'" in text or "\\" in text:
            raise ValueError(f"a migration record cannot be written as a Kuzu comment: {text}")
        self._connection().execute(f"COMMENT ON TABLE {MIGRATION_RECORD_TABLE} IS '{text}'")

    def reset(self) -> None:
        """Drop every table and re-create the schema, keeping the database (and its file lock) open.

        ``zaxy reproject`` rebuilds through this: closing the file and removing it would let another process
        take the graph between the close and the re-open, and the rebuild would then fail half-way.
        """
        with self._writing():
            tables = self._rows("CALL SHOW_TABLES() RETURN name, type")
            for name, _kind in sorted(tables, key=lambda row: row[1] != "REL"):  # relationships before their nodes
                self._connection().execute(f"DROP TABLE `{name}`")
        self.migrate()

    def _recreate_file(self) -> bool:
        """Replace the database with a new, empty file (then migrate it); False when another store of this process
        shares the open database (it is then emptied in place instead)."""
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
        self.migrate()
        return True

    def migrations(self) -> list[dict[str, Any]]:
        records = sorted(self._migration_records(), key=lambda record: record["name"])
        return [{k: record[k] for k in ("name", "checksum", "statement_count")} for record in records]

    def attach_texts(self, texts: Texts) -> None:
        """Where entity versions' text comes from (the catalog, attached by GraphSync): this file holds none."""
        self._texts = texts

    def attach_entity_words(self, words: EntityWords) -> None:
        """Which versions may hold a word (the catalog's entity keyword index): :meth:`search_entities` reads only
        their text."""
        self._entity_words = words

    def _texts_of(self, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        if self._texts is None:
            raise RuntimeError(
                f"{self.path}: entity text is read from the catalog and none is attached; open the graph through "
                "MemoryFabric (projector.store), which attaches it"
            )
        found = _looked_up(ids, TEXT_CHUNK, self._texts)
        problem = "entity versions of the graph are not in the catalog"
        return _every_one(self.path, ids, found, problem, "the derived state does not match the graph")

    def _text_columns(self, ids: list[str]) -> dict[str, list[str]]:
        texts = self._texts_of(ids)
        return {
            "summary": [texts[version_id][0] for version_id in ids],
            "properties": [texts[version_id][1] for version_id in ids],
        }

    def _entity_versions(self, rows: list[list[Any]]) -> list[EntityVersion]:
        """Entity versions from rows of :func:`_entity_projection`, their text from the catalog."""
        if not rows:
            return []
        texts = self._texts_of(list(dict.fromkeys(row[0] for row in rows)))
        stored = _stored_names("Entity")
        derived = DERIVED_HASH_COLUMNS["Entity"] not in stored
        at = stored.index("event_id")
        hashes = self._event_hashes(sorted({row[at] for row in rows})) if derived else {}
        versions = []
        complete = _completer("Entity")
        for row in rows:
            fields = complete(dict(zip(stored, row, strict=True)))
            fields["summary"], fields["properties"] = texts[row[0]]
            if derived:  # the hash of the event that projected the version (kuzu_schema.DERIVED_HASH_COLUMNS)
                fields["source_event_hash"] = hashes[row[at]]
            versions.append(EntityVersion.from_row(fields))
        return versions

    def typed_labels(self) -> set[str]:
        """The typed relation labels the graph holds edges for: ``typed_label`` of each RELATES ``relation_type``
        (no table each since migration 0007, ``kuzu_schema.MIRRORED``)."""
        rows = self._rows("MATCH ()-[r:RELATES]->() RETURN DISTINCT r.relation_type")
        return {typed_label(relation_type) for (relation_type,) in rows}

    # ------------------------------------------------------------------ writes
    def apply(self, batch: ProjectionBatch) -> None:
        """Write one batch and its cursors in a single transaction.

        Two write paths, chosen by size: per-row prepared statements (primary-key lookups, WAL-logged, cheap
        commit: ~4k rows/s with a few-ms commit) for small batches, and Arrow ``COPY`` (fast to load, but each
        COPY into a non-empty relation table costs ~0.1-0.2 s at commit) for large ones.
        """
        connection = self._connection()
        relates = [_as_stored_relation(row) for row in batch.relations]  # refused before anything is written
        events = self._as_stored_events(batch)
        if self._spanning == threading.get_ident():  # inside this thread's spanning_transaction: no commit here
            try:  # by COPY whatever the size (one commit at the end: per-row statements would save nothing)
                self._apply_rows(batch, events, relates, bulk=True)
            finally:
                self.rows_applied = 0
            return
        with self._writing():
            self._check_interrupted()
            connection.execute("BEGIN TRANSACTION")
            try:
                self._apply_rows(batch, events, relates, bulk=batch.row_count() > ROW_BY_ROW_LIMIT)
                self._check_interrupted()
                connection.execute("COMMIT")
            except Exception:
                with contextlib.suppress(RuntimeError):  # a failed COMMIT (disk full) already ended it
                    connection.execute("ROLLBACK")
                raise
            finally:
                self.rows_applied = 0

    @contextlib.contextmanager
    def spanning_transaction(self) -> Iterator[Callable[[], None]]:
        """Batches this thread applies inside are one Kuzu transaction, committed when it ends (rolled back if it
        raises); the yielded ``commit()`` commits what was applied so far and begins the next one.

        Why: Kuzu 0.11.3's COMMIT after a COPY rewrites each node group and relationship region it touched, in new
        pages, and frees the old ones, which a later, larger rewrite of the same group cannot reuse. A 100k-event
        graph caught up from the log in five 20,000-event transactions was 279 MB, 105 MB of them free pages and
        the columns half slack; in one transaction, 127 MB (docs/benchmarks.md, "Graph size"). Other threads'
        reads and writes wait until it ends (:meth:`_exclusive`); this thread's own reads see what it applied."""
        connection = self._connection()
        with self._writing():
            self._check_interrupted()
            connection.execute("BEGIN TRANSACTION")
            self._spanning = threading.get_ident()

            def commit() -> None:
                self._check_interrupted()
                connection.execute("COMMIT")
                connection.execute("BEGIN TRANSACTION")

            try:
                yield commit
                self._check_interrupted()
                connection.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):  # a failed COMMIT already ended it; a closed store has none
                    connection.execute("ROLLBACK")
                raise
            finally:
                self._spanning = None

    def _apply_rows(
        self, batch: ProjectionBatch, events: list[dict[str, Any]], relates: list[dict[str, Any]], *, bulk: bool
    ) -> None:
        """Every row of a batch and its cursors, inside the caller's transaction (``bulk``: by COPY)."""
        self._check_interrupted()
        self.rows_applied = 0
        for table in NODE_COLUMNS:
            rows = events if table == "Event" else getattr(batch, BATCH_ROW_KEYS[table])
            self._insert(table, stored_node_columns(table), rows, None, bulk)
        for table, (source, target, _columns) in REL_TABLES.items():
            if table != "RELATES" and table not in MIRRORED:
                rows = getattr(batch, BATCH_ROW_KEYS[table])
                self._insert(table, stored_columns(table), rows, (source, target), bulk)
            if table in EXTRA_PAIRS:
                rows = getattr(batch, EXTRA_PAIR_ROW_KEYS[table])
                self._insert(table, stored_columns(table), rows, EXTRA_PAIRS[table], bulk)
        self._insert("RELATES", RELATES_STORED, relates, ("Entity", "Entity"), bulk)
        key = _key_name()
        self._update(
            f"MATCH (e:Entity {{{key}: $id}}) SET e.valid_to = $valid_to, e.invalidated = $invalidated, "
            "e.closed_by_seq = $closed_by_seq, e.invalidation_reason = $reason",
            batch.closures,
        )
        self._update(
            f"MATCH (k:EntityKey {{{key}: $id}}) SET k.current_version = $current_version, k.closed = $closed",
            batch.key_updates,
        )
        self._update(
            f"MATCH (s:Session {{{key}: $id}}) SET s.projected_seq = $seq, s.projected_hash = $hash",
            [{"id": s, "seq": q, "hash": h} for s, (q, h) in sorted(batch.cursors.items())],
        )

    def _as_stored_events(self, batch: ProjectionBatch) -> list[dict[str, Any]]:
        """The batch's Event rows as this file stores them (``kuzu_schema.DERIVED_HASH_COLUMNS``): ``prev_hash`` only
        when the chain does not give it (``prev_hash_unchained``). A version or citation whose ``source_event_hash`` is
        not its event's hash, or an edge whose ``valid_from`` is not its event's timestamp, is refused before anything
        is written (the planner never plans one)."""
        for table in DERIVED_NODE_COLUMNS:  # columns made from others (since 0011): a row must agree
            derived = _derived_node(table)
            for row in getattr(batch, BATCH_ROW_KEYS[table]) if derived else ():
                for name, (sources, make) in derived.items():
                    if row[name] != make(*(row[source] for source in sources)):
                        raise ValueError(
                            f"{table} {row['id']}: {name} is not made of its {', '.join(sources)} (the embedded graph "
                            "makes it from them)"
                        )
        if DERIVED_HASH_COLUMNS["Event"] in _stored_names("Event"):  # the layout of an earlier release
            return batch.events
        hashes = {row["id"]: row["hash"] for row in batch.events}
        before = [event_node_id(r["session_id"], r["seq"] - 1) for r in batch.events if r["seq"] > 1]
        hashes |= _looked_up([i for i in before if i not in hashes], LOOKUP_CHUNK, self._event_hashes_found)
        rows = []
        for row in batch.events:
            chained = GENESIS_HASH if row["seq"] == 1 else hashes.get(event_node_id(row["session_id"], row["seq"] - 1))
            own = row["prev_hash"]  # None only on a damaged tombstone: stored as "" (never a hash)
            rows.append({**row, _UNCHAINED: None if chained == own is not None else "" if own is None else own})
        if DERIVED_HASH_COLUMNS["Entity"] not in _stored_names("Entity"):
            events = {row["event_id"] for row in batch.entities}
            hashes |= _looked_up([i for i in events if i not in hashes], LOOKUP_CHUNK, self._event_hashes_found)
            for row in batch.entities:
                _check_source_hash(f"entity version {row['id']}", row["event_id"], row["source_event_hash"], hashes)
        if not any(name == DERIVED_HASH_COLUMNS["CITES_SOURCE"] for name, _ in stored_columns("CITES_SOURCE")):
            citations = [*batch.cites_source, *batch.event_cites_source]
            events = [_citing_event(row) for row in citations]
            hashes |= _looked_up([i for i in events if i not in hashes], LOOKUP_CHUNK, self._event_hashes_found)
            for row, event in zip(citations, events, strict=True):
                _check_source_hash(f"citation of {row['to']!r}", event, row["source_event_hash"], hashes)
        if "valid_from" not in _relates_stored():  # since 0009: an edge is valid from its event's timestamp
            stamps = {row["id"]: row["timestamp"] for row in batch.events}
            events = [event_node_id(row["session_id"], row["source_event_seq"]) for row in batch.relations]
            query = f"UNWIND $ids AS i MATCH (e:Event {{{_key_name()}: i}}) RETURN e.id, e.timestamp"
            fetch = lambda chunk: dict(self._rows(query, {"ids": _keys(chunk)}))  # noqa: E731
            stamps |= _looked_up(sorted({i for i in events if i not in stamps}), LOOKUP_CHUNK, fetch)
            for row, event in zip(batch.relations, events, strict=True):
                if event not in stamps or stamps[event] != row["valid_from"]:
                    raise ValueError(
                        f"relation {row['id']}: valid_from is not the timestamp of its event {event} (the embedded "
                        "graph reads it from the Event node)"
                    )
        return rows

    def _insert(
        self,
        table: str,
        columns: list[tuple[str, str]],
        rows: list[dict[str, Any]],
        endpoints: tuple[str, str] | None,
        bulk: bool,
    ) -> None:
        if not rows:
            return
        self._check_interrupted()
        if bulk or (endpoints is not None and REL_COPY):
            pair = endpoints if table in EXTRA_PAIRS else None  # a multi-pair table needs the pair named
            self._copy(table, columns, rows, is_rel=endpoints is not None, pair=pair)
            self.rows_applied += len(rows)
            return
        connection = self._connection()
        assignments = ", ".join(f"{name}: ${name}" for name, _ in columns)
        if endpoints is None:
            statement = f"CREATE (:`{table}` {{{assignments}}})"
        else:
            body = f" {{{assignments}}}" if columns else ""
            key = _key_name()
            statement = (
                f"MATCH (a:`{endpoints[0]}` {{{key}: $__from}}), (b:`{endpoints[1]}` {{{key}: $__to}}) "
                f"CREATE (a)-[:`{table}`{body}]->(b)"
            )
        names = [name for name, _ in columns]
        for row in rows:
            parameters = {name: _value(row, name) for name in names}
            if endpoints is not None:
                parameters["__from"], parameters["__to"] = _keys((row["from"], row["to"]))
            connection.execute(statement, parameters)
        self.rows_applied += len(rows)

    def _update(self, statement: str, rows: list[dict[str, Any]]) -> None:
        """``statement`` (which matches its node by primary key, ``$id``) for each row, the row's id as that key."""
        if not rows:
            return
        self._check_interrupted()
        self.rows_applied += len(rows)
        connection = self._connection()
        rows = [{**row, "id": key} for row, key in zip(rows, _keys(row["id"] for row in rows), strict=True)]
        if len(rows) > ROW_BY_ROW_LIMIT // 4:
            names = list(rows[0])
            unwind = statement.replace("$", "r.")
            connection.execute(f"UNWIND $rows AS r {unwind}", {"rows": [{n: row[n] for n in names} for row in rows]})
            return
        for row in rows:
            connection.execute(statement, row)

    def _copy(
        self,
        table: str,
        columns: list[tuple[str, str]],
        rows: list[dict[str, Any]],
        *,
        is_rel: bool,
        pair: tuple[str, str] | None = None,
    ) -> None:
        if not rows:
            return
        arrays: dict[str, pa.Array] = {}
        if is_rel:
            kind = _ARROW_TYPES["INT64" if _key_name() == NODE_KEY[0] else "STRING"]
            arrays["from"] = pa.array(_keys(row["from"] for row in rows), type=kind)
            arrays["to"] = pa.array(_keys(row["to"] for row in rows), type=kind)
        for name, kind in columns:
            arrays[name] = pa.array([_value(row, name) for row in rows], type=_ARROW_TYPES[kind])
        options = f" (from='{pair[0]}', to='{pair[1]}')" if pair is not None else ""
        self._connection().execute(f"COPY `{table}` FROM $rows{options}", {"rows": pa.table(arrays)})

    # ------------------------------------------------------------------ reads
    def cursors(self) -> dict[str, tuple[int, str]]:
        rows = self._rows(
            "MATCH (s:Session) WHERE s.projected_seq IS NOT NULL RETURN s.id, s.projected_seq, s.projected_hash"
        )
        return {session: (int(seq), str(digest)) for session, seq, digest in rows}

    # ------------------------------------------------------------------ planner state (graph catch-up)
    def key_states(self, keys: Iterable[str]) -> dict[str, KeyState]:
        """Current version and closed flag of each identity the graph holds (the planner continues from them)."""
        wanted = list(keys)
        found: dict[str, KeyState] = {}
        for start in range(0, len(wanted), LOOKUP_CHUNK):
            chunk = wanted[start : start + LOOKUP_CHUNK]
            identity = _column_exprs("k", "EntityKey", "id")
            rows = self._rows(
                f"UNWIND $ids AS i MATCH (k:EntityKey {{{_key_name()}: i}}) "
                f"RETURN k.current_version, k.closed, {', '.join(identity)}",
                {"ids": _keys(chunk)},
            )
            asked = set(chunk)  # the id each row holds is checked: two ids never share a key unnoticed
            identity_of = _column_maker("EntityKey", "id")
            for current, closed, *parts in rows:
                key = identity_of(parts)
                if key in asked:
                    found[key] = KeyState(current, "", bool(closed))
        return found

    def sources_present(self, ids: Iterable[str]) -> set[str]:
        wanted = list(ids)
        present: set[str] = set()
        for start in range(0, len(wanted), LOOKUP_CHUNK):
            chunk = wanted[start : start + LOOKUP_CHUNK]
            query = f"UNWIND $ids AS i MATCH (s:Source {{{_key_name()}: i}}) RETURN s.id"
            asked = set(chunk)
            present.update(row[0] for row in self._rows(query, {"ids": _keys(chunk)}) if row[0] in asked)
        return present

    def checkpoint(self) -> None:
        """Merge the write-ahead log into the database file (after which the file alone is the graph); inside this
        thread's :meth:`spanning_transaction`, nothing (its end commits, then the caller checkpoints)."""
        if self._spanning == threading.get_ident():
            return
        with self._writing():
            self._connection().execute("CHECKPOINT")

    def entity_history(
        self, name: str, entity_type: str | None = None, session: str | None = None
    ) -> list[EntityVersion]:
        """Every version of entities with this name (optionally typed / per session), in the protocol's total
        version order (source event seq, session, id)."""
        where = ["k.norm_name = $n"]
        parameters: dict[str, Any] = {"n": " ".join(name.casefold().split())}
        if entity_type:
            where.append("k.entity_type = $t")
            parameters["t"] = entity_type
        if session:
            where.append("k.session_id = $s")
            parameters["s"] = session
        rows = self._rows(
            f"MATCH (k:EntityKey)-[:HAS_VERSION]->(e:Entity) WHERE {' AND '.join(where)} RETURN "
            + _entity_projection("e")
            + f" ORDER BY {VERSION_ORDER}",
            parameters,
        )
        return self._entity_versions(rows)

    def entities_as_of(self, moment: str, *, session: str | None = None, limit: int = 1000) -> list[EntityVersion]:
        """Versions valid at ``moment`` (``valid_from <= t < valid_to``), filtered in one pass, in the protocol's
        total version order (source event seq, session, id)."""
        session_filter = " AND e.session_id = $s" if session else ""
        rows = self._rows(
            "MATCH (e:Entity) WHERE e.valid_from <= $t AND (e.valid_to IS NULL OR e.valid_to > $t)"
            + session_filter
            + " RETURN "
            + _entity_projection("e")
            + f" ORDER BY {VERSION_ORDER} LIMIT $limit",
            {"t": moment, "limit": limit, **({"s": session} if session else {})},
        )
        return self._entity_versions(rows)

    def traverse(
        self,
        start_keys: list[str],
        *,
        depth: int = 2,
        relation_types: list[str] | None = None,
        as_of: str | None = None,
        limit: int = 200,
    ) -> list[TraversalHit]:
        """Bounded breadth-first traversal between entity identities, hop by hop (each hop filtered on its own).

        Edges connect the versions that were current when the edge was asserted, so a hop goes identity ->
        any of its versions -> edge -> version -> identity, and each reached identity is reported as its
        version valid at ``as_of`` (now by default). Filtering per hop keeps "as of" traversals fast on Kuzu
        (one pattern with an OR over validity on every relationship measured ~50x slower).
        """
        depth = max(1, min(depth, 5))
        seen = set(start_keys)
        frontier = list(start_keys)
        hits: list[TraversalHit] = []
        type_filter = " AND r.relation_type IN $types" if relation_types else ""
        # an edge's valid_to is always NULL and its valid_from its source event's timestamp (RELATES_DERIVED): "as
        # of" keeps the edges whose event is not later (filtered below when the file does not store valid_from)
        stored_validity = "valid_from" in _relates_stored()
        time_filter = " AND r.valid_from <= $t" if as_of and stored_validity else ""
        extra = {**({"types": relation_types} if relation_types else {}), **({"t": as_of} if time_filter else {})}
        seq_at = _relates_stored().index("source_event_seq")
        for level in range(1, depth + 1):
            if not frontier or len(hits) >= limit:
                break
            found: dict[str, tuple[str, tuple[str, list[Any]], str, str, str]] = {}
            asked = set(frontier)
            for direction, pattern in (("out", "(va)-[r:RELATES]->(vb)"), ("in", "(vb)-[r:RELATES]->(va)")):
                # the reached version's identity is its ``key`` column (HAS_VERSION is stored forward only)
                origin, reached = _column_exprs("ka", "EntityKey", "id"), _column_exprs("vb", "Entity", "key")
                listed = self._rows(
                    f"MATCH (ka:EntityKey)-[:HAS_VERSION]->(va:Entity), {pattern} "
                    f"WHERE ka.{_key_name()} IN $keys{type_filter}{time_filter} "
                    f"RETURN {', '.join(origin)}, {', '.join(reached)}, va.id, vb.id, va.session_id, "
                    + _relates_stored_return()
                    + " ORDER BY r.source_event_seq, r.id",
                    {"keys": _keys(frontier), **extra},
                )
                ends = len(origin) + len(reached)
                origin_of, reached_of = _column_maker("EntityKey", "id"), _column_maker("Entity", "key")
                rows = [
                    [origin_of(row[: len(origin)]), reached_of(row[len(origin) : ends]), *row[ends:]] for row in listed
                ]
                rows = [row for row in rows if row[0] in asked]
                if as_of and not time_filter:  # valid from the source event's timestamp
                    events = self._event_facts(sorted({event_node_id(row[4], row[5 + seq_at]) for row in rows}))
                    rows = [row for row in rows if events[event_node_id(row[4], row[5 + seq_at])][1] <= as_of]
                for origin_key, key, origin_version, version, session, *stored in rows:
                    if key in seen or key in found:
                        continue
                    found[key] = (direction, (session, stored), origin_key, origin_version, version)
            audits = self._relation_audits([edge for _direction, edge, *_rest in found.values()])
            reached = {
                key: (direction, audit, origin_key, origin_version, version)
                for (key, (direction, _edge, origin_key, origin_version, version)), audit in zip(
                    found.items(), audits, strict=True
                )
            }
            versions = self._versions_at(list(reached), as_of)
            next_frontier = []
            for key, (direction, audit, _origin_key, origin_version, version) in reached.items():
                entity = versions.get(key)
                if entity is None:
                    continue  # the identity has no version valid at that time
                seen.add(key)
                source, target = (origin_version, version) if direction == "out" else (version, origin_version)
                hits.append(TraversalHit(entity, level, _relation(audit, source, target), direction))
                next_frontier.append(key)
            frontier = next_frontier
        return hits[:limit]

    def _versions_at(self, keys: list[str], as_of: str | None) -> dict[str, EntityVersion]:
        if not keys:
            return {}
        validity = "v.valid_from <= $t AND (v.valid_to IS NULL OR v.valid_to > $t)" if as_of else "v.valid_to IS NULL"
        rows = self._rows(
            f"MATCH (k:EntityKey)-[:HAS_VERSION]->(v:Entity) WHERE k.{_key_name()} IN $keys AND {validity} RETURN "
            + _entity_projection("v"),
            {"keys": _keys(keys), **({"t": as_of} if as_of else {})},
        )
        asked = set(keys)
        found = [version for version in self._entity_versions(rows) if version.key in asked]
        return {version.key: version for version in sorted(found, key=lambda v: v.source_event_seq)}

    def _relation_audits(self, edges: list[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
        """RELATES rows as every store reads them, from (the edge's session, its :data:`RELATES_STORED` values): the
        columns Kuzu does not store (``kuzu_schema.RELATES_DERIVED``) put back, evidence equal to the edge's own
        provenance filled in (``RELATES_EVIDENCE_DEFAULTS``)."""
        names = _relates_stored()
        seq_at = names.index("source_event_seq")
        events = self._event_facts(sorted({event_node_id(session, stored[seq_at]) for session, stored in edges}))
        audits = []
        for session, stored in edges:
            audit = dict(zip(names, stored, strict=True))
            audit["session_id"], audit["valid_to"] = session, None
            event_hash, timestamp = events[event_node_id(session, audit["source_event_seq"])]
            audit["source_event_hash"] = event_hash
            if "valid_from" not in names:  # since 0009: the source event's timestamp
                audit["valid_from"] = timestamp
            for evidence, own in RELATES_EVIDENCE_DEFAULTS.items():
                if audit[evidence] is None:
                    audit[evidence] = audit[own]
            audits.append({name: audit[name] for name in _AUDIT_NAMES})
        return audits

    def _event_hashes(self, ids: list[str]) -> dict[str, str]:
        """Event id -> its Eventloom hash (primary-key lookups); every id must be in the graph."""
        found = _looked_up(ids, LOOKUP_CHUNK, self._event_hashes_found)
        problem = "rows name a source event the graph does not hold"
        return _every_one(self.path, ids, found, problem, "the graph is damaged")

    def _event_facts(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        """Event id -> (hash, timestamp) (primary-key lookups); every id must be in the graph."""
        query = f"UNWIND $ids AS i MATCH (e:Event {{{_key_name()}: i}}) RETURN e.id, e.hash, e.timestamp"
        fetch = lambda chunk: {i: (h, t) for i, h, t in self._rows(query, {"ids": _keys(chunk)})}  # noqa: E731
        found = _looked_up(ids, LOOKUP_CHUNK, fetch)
        return _every_one(
            self.path, ids, found, "relations name a source event the graph does not hold", "the graph is damaged"
        )

    def _event_hashes_found(self, ids: Sequence[str]) -> dict[str, str]:
        """Event id -> hash of the ids the graph holds (one query)."""
        query = f"UNWIND $ids AS i MATCH (e:Event {{{_key_name()}: i}}) RETURN e.id, e.hash"
        return dict(self._rows(query, {"ids": _keys(ids)}))

    def search_entities(
        self, text: str, *, session: str | None = None, as_of: str | None = None, limit: int = 20
    ) -> list[tuple[EntityVersion, float]]:
        """Entity versions valid at ``as_of`` (now by default) whose name or summary holds a word of ``text``.

        Scored by how many distinct query words occur as whole words, plus one for an exact name match. (The
        PostgreSQL store answers the same question with ``tsvector`` ranks and fuzzy names.) The summaries are not
        in this file (``kuzu_schema.ENTITY_TEXT_COLUMNS``): the versions that may match are read here (those the
        attached keyword index names, :mod:`.entity_search`) and their text is matched as the catalog gives it.
        """
        words = entity_search.query_words(text)
        if not words:
            return []
        found = entity_search.candidates(self._rows, words, session, as_of, self._entity_words, (_key_name(), _keys))
        best = entity_search.rank(found, self._texts_of, words, text, limit)
        if not best:
            return []
        query = f"MATCH (e:Entity) WHERE e.{_key_name()} IN $ids RETURN " + _entity_projection("e")
        rows = [row for row in self._rows(query, {"ids": _keys(best)}) if row[0] in best]
        scored = [(version, best[version.id]) for version in self._entity_versions(rows)]
        scored.sort(key=lambda pair: (-pair[1], -pair[0].source_event_seq, pair[0].id))
        return scored[:limit]

    def stats(self) -> ProjectionStats:
        count = lambda q: int(self._rows(q)[0][0])  # noqa: E731
        stats = ProjectionStats(
            backend=self.backend,
            events=count("MATCH (e:Event) RETURN count(e)"),
            entities=count("MATCH (e:Entity) RETURN count(e)"),
            current_entities=count("MATCH (e:Entity) WHERE e.valid_to IS NULL RETURN count(e)"),
            edges=count("MATCH ()-[r:RELATES]->() RETURN count(r)"),
            inferred_edges=count("MATCH ()-[r:RELATES]->() WHERE r.inferred RETURN count(r)"),
            extraction_failures=count("MATCH (f:ExtractionFailure) RETURN count(f)"),
        )
        for session, (seq, digest) in sorted(self.cursors().items()):
            stats.sessions[session] = {"projected_seq": seq, "projected_hash": digest}
        return stats

    def dump_lines(self) -> Iterator[str]:
        """Canonical, sorted text of every node and edge (the input of the rebuild digest).

        Each line is ``json.dumps([table, *row], separators=(",", ":"), ensure_ascii=False)``; it is assembled
        column by column (one C-level encoding pass per column, then a join per row), several times faster than
        encoding row by row, with byte-identical output.
        """
        hashes: dict[str, str] = {}  # event id -> hash, for the hash copies the file does not store
        derived = [column not in _stored_names(t) for t, column in DERIVED_HASH_COLUMNS.items() if t in NODE_COLUMNS]
        if any(derived) or "source_event_hash" not in dict(stored_columns("CITES_SOURCE")):
            hashes = dict(self._rows("MATCH (e:Event) RETURN e.id, e.hash"))
        for table in NODE_COLUMNS:
            names = _stored_names(table)
            query = "MATCH (n:" + table + ") RETURN " + ", ".join(f"n.{c}" for c in names)
            yield from self._canonical(table, query, hashes)
        relations = self._relation_lines()
        for table in sorted(set(REL_TABLES) | set(relations.typed)):
            if table == "RELATES":
                yield from sorted(relations.relates)
            elif table not in REL_TABLES:
                yield from sorted(relations.typed[table])
            elif table == "PROJECTED_RELATION":
                yield from self._projected_relation_lines(relations.audits)
            elif table == "CITES_SOURCE" and "source_event_hash" not in dict(stored_columns(table)):
                yield from self._citation_lines(hashes)
            elif table in MIRRORED:  # the mirrored table's rows, reversed
                lines = self._canonical(table, f"MATCH (a:Event)-[r:`{MIRRORED[table]}`]->(b:Event) RETURN b.id, a.id")
                yield from lines
            else:
                source, target, columns = REL_TABLES[table]
                projection = "".join(f", r.{name}" for name, _ in columns)
                pairs = [(source, target), *([EXTRA_PAIRS[table]] if table in EXTRA_PAIRS else [])]
                lines = [
                    line
                    for start, end in pairs
                    for line in self._canonical(
                        table,
                        f"MATCH (a:{start})-[r:`{table}`]->(b:{end}) RETURN "
                        f"{', '.join(_column_exprs('a', start, 'id') + _column_exprs('b', end, 'id'))}{projection}",
                        ends=(start, end),
                    )
                ]
                yield from sorted(lines) if len(pairs) > 1 else lines

    def _relation_lines(self) -> _RelationLines:
        """Every RELATES row as a dump line, the typed label's line beside it, and its audit columns encoded (keyed
        by the relation id, for PROJECTED_RELATION)."""
        self._check_interrupted()
        with self._reading():
            result = self._connection().execute(
                "MATCH (a:Entity)-[r:RELATES]->(b:Entity) RETURN a.id, b.id, a.session_id, " + _relates_stored_return()
            )
            rows = result.get_all()
            result.close()
        lines = _RelationLines()
        audits = self._relation_audits([(session, stored) for _a, _b, session, *stored in rows])
        for (source, target, *_rest), audit in zip(rows, audits, strict=True):
            encoded = ",".join(_json_value(audit[name]) for name in _AUDIT_NAMES)
            lines.audits[audit["id"]] = encoded
            ends = _json_value(source) + "," + _json_value(target) + "," + encoded + "]"
            lines.relates.append('["RELATES",' + ends)
            label = typed_label(audit["relation_type"])
            lines.typed.setdefault(label, []).append("[" + _json_string(label) + "," + ends)
        return lines

    def _citation_lines(self, hashes: dict[str, str]) -> list[str]:
        """CITES_SOURCE's rows of both pairs, each with its source event's hash (read from ``hashes``, event id ->
        hash) in its place."""
        lines = []
        for start in (REL_TABLES["CITES_SOURCE"][0], EXTRA_PAIRS["CITES_SOURCE"][0]):
            rows = self._rows(
                f"MATCH (a:{start})-[r:CITES_SOURCE]->(b:Source) RETURN a.id, b.id, r.line_start, r.line_end, "
                "r.checksum, r.source_event_seq, b.session_id"
            )
            found = self._known_hashes([event_node_id(session, row[-1]) for *row, session in rows], hashes)
            for *values, session in rows:
                values.append(found[event_node_id(session, values[-1])])
                lines.append('["CITES_SOURCE",' + ",".join(_json_value(value) for value in values) + "]")
        return sorted(lines)

    def _known_hashes(self, ids: list[str], hashes: dict[str, str]) -> dict[str, str]:
        """``hashes`` (event id -> hash, read earlier in a dump) with the ids it lacks looked up now: the dump's
        queries are separate reads, and a write may commit between them (a row and its event are always written
        together, so the event is there)."""
        missing = sorted({event_id for event_id in ids if event_id not in hashes})
        if missing:
            hashes.update(self._event_hashes(missing))
        return hashes

    def _derived_hashes(self, table: str, held: dict[str, Any], hashes: dict[str, str]) -> list[str | None]:
        """The hash column of ``kuzu_schema.DERIVED_HASH_COLUMNS`` for a dump's rows (``held``: column -> values):
        an entity version's source event's hash; an event's ``prev_hash``, unless stored as unchained ("" for a
        null one), the chain's."""
        if table == "Entity":
            event_ids = held["event_id"].to_pylist()
            found = self._known_hashes(event_ids, hashes)
            return [found[event_id] for event_id in event_ids]
        sessions, seqs = held["session_id"].to_pylist(), held["seq"].to_pylist()
        unchained = held[_UNCHAINED].to_pylist()
        hashes.update(zip(held["id"].to_pylist(), held["hash"].to_pylist(), strict=True))
        chained = [event_node_id(s, q - 1) for s, q, own in zip(sessions, seqs, unchained, strict=True) if own is None]
        found = self._known_hashes([i for i in chained if not i.endswith(":0")], hashes)
        return [
            (own or None) if own is not None else GENESIS_HASH if seq == 1 else found[event_node_id(session, seq - 1)]
            for session, seq, own in zip(sessions, seqs, unchained, strict=True)
        ]

    def _projected_relation_lines(self, audits: dict[str, str]) -> list[str]:
        """PROJECTED_RELATION's rows: its own columns, then the RELATES row's audit columns (joined by id)."""
        query = "MATCH (a:Event)-[c:PROJECTED_RELATION]->(b:Entity) RETURN a.id, b.id, c.source, c.target, c.id"
        rows = self._rows(query)
        lines = []
        for *head_values, relation_id in rows:  # the columns every store dumps: source, target, then the audit
            audit = audits.get(relation_id)
            if audit is None:  # as the join of earlier releases: a provenance edge without its relation is not listed
                continue
            head = ",".join(_json_value(value) for value in head_values)
            lines.append('["PROJECTED_RELATION",' + head + "," + audit + "]")
        return sorted(lines)

    def _canonical(
        self, table: str, query: str, hashes: dict[str, str] | None = None, ends: tuple[str, str] | None = None
    ) -> list[str]:
        """Sorted dump lines of a query's rows; a node table's rows with every column of ``NODE_COLUMNS`` in its
        place, those the file does not store put back (the text from the catalog, the hash copies from ``hashes``,
        event id -> hash)."""
        self._check_interrupted()
        with self._reading():
            result = self._connection().execute(query)
            arrow = result.get_as_arrow()
            result.close()
        if not arrow.num_rows:
            return []
        prefix = "[" + _json_string(table) + ","
        if table not in NODE_COLUMNS:
            listed = [column.to_pylist() for column in arrow.columns]
            if ends is not None:  # a relationship's endpoint ids, made from their parts when not stored
                cut = len(_column_exprs("a", ends[0], "id"))
                stop = cut + len(_column_exprs("b", ends[1], "id"))
                start_of, finish_of = _column_maker(ends[0], "id"), _column_maker(ends[1], "id")
                starts = [start_of(parts) for parts in zip(*listed[:cut], strict=True)]
                finishes = [finish_of(parts) for parts in zip(*listed[cut:stop], strict=True)]
                listed = [starts, finishes, *listed[stop:]]
            columns = [[_json_value(value) for value in column] for column in listed]
            return sorted(prefix + ",".join(row) + "]" for row in zip(*columns, strict=True))
        held = dict(zip((name.split(".", 1)[-1] for name in arrow.column_names), arrow.columns, strict=True))
        values: dict[str, list[Any]] = {}
        for name, (sources, make) in _derived_node(table).items():  # made from the node's stored columns
            parts = zip(*(held[source].to_pylist() for source in sources), strict=True)
            values[name] = [make(*row) for row in parts]
        if table == "Entity" and not set(held).issuperset(ENTITY_TEXT_COLUMNS):  # the text, from the catalog
            values |= self._text_columns(held["id"].to_pylist())
        derived = DERIVED_HASH_COLUMNS.get(table)
        if derived is not None and derived not in held:
            values[derived] = self._derived_hashes(table, held, {} if hashes is None else hashes)
        columns = [
            [_json_value(value) for value in (values[name] if name in values else held[name].to_pylist())]
            for name, _ in NODE_COLUMNS[table]
        ]
        return sorted(prefix + ",".join(row) + "]" for row in zip(*columns, strict=True))


def _value(row: dict[str, Any], name: str) -> Any:
    """A node or relationship row's value for a stored column: the numeric primary key is made from its ``id``."""
    return node_key(row["id"]) if name == NODE_KEY[0] else row.get(name)


def _entity_projection(alias: str) -> str:
    """The Entity columns this file stores, as a RETURN list (the id first)."""
    return ", ".join(f"{alias}.{name}" for name in _stored_names("Entity"))


def _citing_event(row: dict[str, Any]) -> str:
    """The Event a CITES_SOURCE row was written by: ``<its Source's session>:<source_event_seq>``."""
    return event_node_id(row["to"].split("\x1f", 1)[0], row["source_event_seq"])


def _check_source_hash(what: str, event_id: str, source_hash: str | None, hashes: dict[str, str]) -> None:
    """A row's ``source_event_hash`` must be its event's (the file reads it from the Event node), or it is refused."""
    if event_id not in hashes or hashes[event_id] != source_hash:
        raise ValueError(
            f"{what}: source_event_hash is not the hash of its event {event_id} (the embedded graph reads it from "
            "the Event node)"
        )


def _looked_up(ids: Sequence[str], chunk: int, fetch: Callable[[Sequence[str]], dict[str, Any]]) -> dict[str, Any]:
    """``fetch`` of ``ids``, ``chunk`` at a time, merged."""
    found: dict[str, Any] = {}
    for start in range(0, len(ids), chunk):
        found.update(fetch(ids[start : start + chunk]))
    return found


def _every_one(path: Path, ids: Sequence[str], found: dict[str, Any], problem: str, meaning: str) -> dict[str, Any]:
    """``found`` when it holds every id; otherwise an error that says what is missing and how to repair it."""
    missing = [item for item in ids if item not in found]
    if missing:
        raise RuntimeError(f"{path}: {len(missing)} {problem} (first: {missing[0]}); {meaning}: run `zaxy reproject`")
    return found


def _as_stored_relation(row: dict[str, Any]) -> dict[str, Any]:
    """A RELATES row as Kuzu stores it (:data:`RELATES_STORED`): evidence equal to the edge's own provenance left
    NULL (a null mask, no string pages; read back by :meth:`KuzuProjectionStore._relation_audits`). The columns it
    does not store must be what the reads put back, or the row is refused (the planner never writes another)."""
    if row.get("valid_to") is not None:
        raise ValueError(f"relation {row.get('id')}: the embedded graph stores no closed edge (valid_to is derived)")
    if all(row.get(evidence) == row.get(own) for evidence, own in RELATES_EVIDENCE_DEFAULTS.items()):
        return {**row, **dict.fromkeys(RELATES_EVIDENCE_DEFAULTS)}
    return row


@dataclass
class _RelationLines:
    relates: list[str] = field(default_factory=list)
    typed: dict[str, list[str]] = field(default_factory=dict)
    audits: dict[str, str] = field(default_factory=dict)  # relation id -> its audit columns, encoded


def _json_value(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, default=str)`` for the scalar types a graph row holds."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value) if math.isfinite(value) else _JSON_SCALAR(value)
    return _json_string(str(value))


def _relation(audit: dict[str, Any], source_id: str, target_id: str) -> RelationRecord:
    return RelationRecord.from_row({**audit, "from": source_id, "to": target_id})
