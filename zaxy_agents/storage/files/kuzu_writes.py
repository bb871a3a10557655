"""Writes to the embedded graph: a projection batch and its cursors in one transaction, or many batches in one.

Write path (measured on this machine): one MERGE per row ~120 rows/s, UNWIND CREATE ~12k node rows/s but
relation creation by MATCH only ~2-3k rows/s, ``COPY FROM`` Arrow ~135k rows/s *inside* a transaction. So a
batch is written as Arrow COPYs plus a few keyed UNWIND updates, all in one transaction together with the
per-session cursor: a crash leaves the graph exactly at a previous cursor, never half a batch. Rows whose columns
the file does not store are checked against what the reads will put back, and refused before anything is written.
"""

from __future__ import annotations

import contextlib
import importlib.util  # noqa: F401 - kuzu's COPY-from-Arrow path needs importlib.util loaded
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from zaxy_agents.eventloom.canonical import GENESIS_HASH
from zaxy_agents.projection.planner import ProjectionBatch, event_node_id

from . import kuzu_layout as layout
from .kuzu_rows import LOOKUP_CHUNK, KuzuRowReads, looked_up

ROW_BY_ROW_LIMIT = 3000  # rows per batch up to which per-row statements beat COPY (cheap commits)
REL_COPY = True  # relationships always by COPY: a per-row CREATE into a two-way rel table costs 2-4 MB of pages
_ARROW_TYPES = {"STRING": pa.string(), "INT64": pa.int64(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_()}
EXTRA_PAIR_ROW_KEYS = {"CITES_SOURCE": "event_cites_source"}


class KuzuWrites(KuzuRowReads):
    """A Kuzu graph file that projection batches are written to, one transaction each or many in one."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self._spanning: int | None = None  # the thread inside spanning_transaction()
        self.rows_applied = 0

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
        for table in layout.NODE_COLUMNS:
            rows = events if table == "Event" else getattr(batch, layout.BATCH_ROW_KEYS[table])
            self._insert(table, layout.stored_node_columns(table), rows, None, bulk)
        for table, (source, target, _columns) in layout.REL_TABLES.items():
            if table != "RELATES" and table not in layout.MIRRORED:
                rows = getattr(batch, layout.BATCH_ROW_KEYS[table])
                self._insert(table, layout.stored_columns(table), rows, (source, target), bulk)
            if table in layout.EXTRA_PAIRS:
                rows = getattr(batch, EXTRA_PAIR_ROW_KEYS[table])
                self._insert(table, layout.stored_columns(table), rows, layout.EXTRA_PAIRS[table], bulk)
        self._insert("RELATES", layout.RELATES_STORED, relates, ("Entity", "Entity"), bulk)
        key = layout.key_name()
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
        for table in layout.DERIVED_NODE_COLUMNS:  # columns made from others (since 0011): a row must agree
            derived = layout.derived_node(table)
            for row in getattr(batch, layout.BATCH_ROW_KEYS[table]) if derived else ():
                for name, (sources, make) in derived.items():
                    if row[name] != make(*(row[source] for source in sources)):
                        raise ValueError(
                            f"{table} {row['id']}: {name} is not made of its {', '.join(sources)} (the embedded graph "
                            "makes it from them)"
                        )
        if layout.DERIVED_HASH_COLUMNS["Event"] in layout.stored_names("Event"):  # the layout of an earlier release
            return batch.events
        hashes = {row["id"]: row["hash"] for row in batch.events}
        before = [event_node_id(r["session_id"], r["seq"] - 1) for r in batch.events if r["seq"] > 1]
        hashes |= looked_up([i for i in before if i not in hashes], LOOKUP_CHUNK, self._event_hashes_found)
        rows = []
        for row in batch.events:
            chained = GENESIS_HASH if row["seq"] == 1 else hashes.get(event_node_id(row["session_id"], row["seq"] - 1))
            own = row["prev_hash"]  # None only on a damaged tombstone: stored as "" (never a hash)
            rows.append({**row, layout.UNCHAINED: None if chained == own is not None else "" if own is None else own})
        if layout.DERIVED_HASH_COLUMNS["Entity"] not in layout.stored_names("Entity"):
            events = {row["event_id"] for row in batch.entities}
            hashes |= looked_up([i for i in events if i not in hashes], LOOKUP_CHUNK, self._event_hashes_found)
            for row in batch.entities:
                _check_source_hash(f"entity version {row['id']}", row["event_id"], row["source_event_hash"], hashes)
        if not any(
            name == layout.DERIVED_HASH_COLUMNS["CITES_SOURCE"] for name, _ in layout.stored_columns("CITES_SOURCE")
        ):
            citations = [*batch.cites_source, *batch.event_cites_source]
            events = [_citing_event(row) for row in citations]
            hashes |= looked_up([i for i in events if i not in hashes], LOOKUP_CHUNK, self._event_hashes_found)
            for row, event in zip(citations, events, strict=True):
                _check_source_hash(f"citation of {row['to']!r}", event, row["source_event_hash"], hashes)
        if "valid_from" not in layout.relates_stored():  # since 0009: an edge is valid from its event's timestamp
            stamps = {row["id"]: row["timestamp"] for row in batch.events}
            events = [event_node_id(row["session_id"], row["source_event_seq"]) for row in batch.relations]
            query = f"UNWIND $ids AS i MATCH (e:Event {{{layout.key_name()}: i}}) RETURN e.id, e.timestamp"
            fetch = lambda chunk: dict(self._rows(query, {"ids": layout.keys(chunk)}))  # noqa: E731
            stamps |= looked_up(sorted({i for i in events if i not in stamps}), LOOKUP_CHUNK, fetch)
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
            pair = endpoints if table in layout.EXTRA_PAIRS else None  # a multi-pair table needs the pair named
            self._copy(table, columns, rows, is_rel=endpoints is not None, pair=pair)
            self.rows_applied += len(rows)
            return
        connection = self._connection()
        assignments = ", ".join(f"{name}: ${name}" for name, _ in columns)
        if endpoints is None:
            statement = f"CREATE (:`{table}` {{{assignments}}})"
        else:
            body = f" {{{assignments}}}" if columns else ""
            key = layout.key_name()
            statement = (
                f"MATCH (a:`{endpoints[0]}` {{{key}: $__from}}), (b:`{endpoints[1]}` {{{key}: $__to}}) "
                f"CREATE (a)-[:`{table}`{body}]->(b)"
            )
        names = [name for name, _ in columns]
        for row in rows:
            parameters = {name: layout.row_value(row, name) for name in names}
            if endpoints is not None:
                parameters["__from"], parameters["__to"] = layout.keys((row["from"], row["to"]))
            connection.execute(statement, parameters)
        self.rows_applied += len(rows)

    def _update(self, statement: str, rows: list[dict[str, Any]]) -> None:
        """``statement`` (which matches its node by primary key, ``$id``) for each row, the row's id as that key."""
        if not rows:
            return
        self._check_interrupted()
        self.rows_applied += len(rows)
        connection = self._connection()
        rows = [{**row, "id": key} for row, key in zip(rows, layout.keys(row["id"] for row in rows), strict=True)]
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
            kind = _ARROW_TYPES["INT64" if layout.key_name() == layout.NODE_KEY[0] else "STRING"]
            arrays["from"] = pa.array(layout.keys(row["from"] for row in rows), type=kind)
            arrays["to"] = pa.array(layout.keys(row["to"] for row in rows), type=kind)
        for name, kind in columns:
            arrays[name] = pa.array([layout.row_value(row, name) for row in rows], type=_ARROW_TYPES[kind])
        options = f" (from='{pair[0]}', to='{pair[1]}')" if pair is not None else ""
        self._connection().execute(f"COPY `{table}` FROM $rows{options}", {"rows": pa.table(arrays)})

    def checkpoint(self) -> None:
        """Merge the write-ahead log into the database file (after which the file alone is the graph); inside this
        thread's :meth:`spanning_transaction`, nothing (its end commits, then the caller checkpoints)."""
        if self._spanning == threading.get_ident():
            return
        with self._writing():
            self._connection().execute("CHECKPOINT")


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


def _as_stored_relation(row: dict[str, Any]) -> dict[str, Any]:
    """A RELATES row as Kuzu stores it (:data:`RELATES_STORED`): evidence equal to the edge's own provenance left
    NULL (a null mask, no string pages; read back by :meth:`.kuzu_rows.KuzuRowReads._relation_audits`). The columns it
    does not store must be what the reads put back, or the row is refused (the planner never writes another)."""
    if row.get("valid_to") is not None:
        raise ValueError(f"relation {row.get('id')}: the embedded graph stores no closed edge (valid_to is derived)")
    if all(row.get(evidence) == row.get(own) for evidence, own in layout.RELATES_EVIDENCE_DEFAULTS.items()):
        return {**row, **dict.fromkeys(layout.RELATES_EVIDENCE_DEFAULTS)}
    return row
