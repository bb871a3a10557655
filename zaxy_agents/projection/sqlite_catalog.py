"""The projection catalog as tables of ``derived.sqlite``: written batch by batch, read where it lies.

One class in three layers, each module one job: the read caches and what invalidates them
(:mod:`.catalog_cache`), the identity and version reads (:mod:`.catalog_reads`), and here the edges, aggregates,
the planner's reads and the writes. The tables and row codecs are in :mod:`.catalog_rows`, the write path in
:mod:`.catalog_writes`, the cross-session bulk reads in :mod:`.catalog_bulk`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from zaxy_agents.projection.catalog import FeedbackAggregate
from zaxy_agents.projection.catalog_reads import NO_KEY, CatalogReads
from zaxy_agents.projection.catalog_rows import (
    _VERSION_FROM,
    CACHE_LIMIT,
    EDGE_SELECT,
    ID_OUT,
    KEY_OUT,
    KEY_WHERE,
    KEYS_JSON,
    NAME,
    SCHEMA_VERSION,
    SID_OF,
    _chunks,
    _edge,
    _version,
    create_tables,
    drop_tables,
    key_parts,
    keys_json,
)
from zaxy_agents.projection.catalog_writes import apply_batch, delete_session_rows
from zaxy_agents.projection.erase_local import erase_locally
from zaxy_agents.projection.logged_text import fill
from zaxy_agents.projection.model import Extraction
from zaxy_agents.projection.planner import KeyState, ProjectionBatch
from zaxy_agents.projection.records import RelationRecord

__all__ = ["NAME", "SCHEMA_VERSION", "SqliteCatalog", "create_tables", "drop_tables"]

_KEY_WHERE_M = KEY_WHERE.replace("k.", "m.").replace("{", "{{").replace("}", "}}")  # KEY_WHERE on alias m


# neighbour_keys: the other end and confidence of an identity's edges in one direction, in eid order
# (the other end's identity is the edge's other kid: its key is rebuilt by the join, no version is read)
_ENDS = (
    f"SELECT {KEY_OUT}, e.confidence FROM cat_edges e JOIN cat_keys k ON k.kid = e.{{}} "
    "JOIN cat_sessions s ON s.sid = k.sid JOIN cat_types t ON t.tid = k.tid WHERE e.{} = "
    f"(SELECT m.kid FROM cat_keys m WHERE {_KEY_WHERE_M}) ORDER BY e.eid"
)


class SqliteCatalog(CatalogReads):
    """The :class:`~zaxy_agents.projection.catalog.EntityCatalog` over ``derived.sqlite`` (reads and writes)."""

    # ------------------------------------------------------------------ graph
    def _adjacent(self, key: str, direction: str) -> list[RelationRecord]:
        cached = self._edges.get((key, direction))
        if cached is not None:
            return cached or []  # () stands for no edges (below): a caller gets a list of its own
        column = "source_kid" if direction == "out" else "target_kid"
        rows = self._rows(
            f"{EDGE_SELECT} WHERE e.{column} = (SELECT k.kid FROM cat_keys k WHERE {KEY_WHERE}) ORDER BY e.eid",
            key_parts(key) or NO_KEY,
        )
        edges = [_edge(row) for row in rows]
        if len(self._edges) >= CACHE_LIMIT // 10:
            self._edges.clear()
        # most identities have no edge in one direction: the shared empty tuple is no object the garbage collector
        # tracks, where an empty list was one more survivor of each question (docs/benchmarks.md, "the garbage
        # collector's share")
        self._edges[(key, direction)] = edges or ()
        return edges

    def out_edges(self, key: str) -> list[RelationRecord]:
        return self._adjacent(key, "out")

    def neighbour_keys(self, key: str) -> list[tuple[str, float]]:
        """The graph lanes' light read of an identity's relations: the protocol's pairs, from two columns of the
        edges (no records built) and one bulk :meth:`version_sources` of their ends. Cached with the edges (dropped
        with them) when every end was found: a version's identity never changes, and erasure clears every cache;
        an end not found yet is looked up again next time, as :meth:`version_key` would."""
        cached = self._ends.get(key)
        if cached is not None:
            return cached
        out, into = self._edges.get((key, "out")), self._edges.get((key, "in"))
        if out is not None and into is not None:
            ends = [(edge.target_id, edge.confidence) for edge in out]
            ends += [(edge.source_id, edge.confidence) for edge in into]
        else:  # every edge's ends are versions (both kept or both erased with the session): every end is found
            parts = key_parts(key) or NO_KEY
            keys = self._rows(_ENDS.format("target_kid", "source_kid"), parts)
            keys += self._rows(_ENDS.format("source_kid", "target_kid"), parts)
            if len(self._ends) >= CACHE_LIMIT // 10:
                self._ends.clear()
            self._ends[key] = keys
            return keys
        located = self.version_sources([other for other, _ in ends])
        keys = [(located[other][0], confidence) for other, confidence in ends if other in located]
        if len(keys) == len(ends):
            if len(self._ends) >= CACHE_LIMIT // 10:
                self._ends.clear()
            self._ends[key] = keys
        return keys

    def in_edges(self, key: str) -> list[RelationRecord]:
        return self._adjacent(key, "in")

    def degree(self, key: str) -> int:
        cached_out, cached_in = self._edges.get((key, "out")), self._edges.get((key, "in"))
        if cached_out is not None and cached_in is not None:
            return len(cached_out) + len(cached_in)
        ends = self._ends.get(key)
        if ends is not None:  # cached only when every end was found: one pair per edge
            return len(ends)
        rows = self._rows(
            "SELECT (SELECT count(*) FROM cat_edges WHERE source_kid = k.kid) + "
            f"(SELECT count(*) FROM cat_edges WHERE target_kid = k.kid) FROM cat_keys k WHERE {KEY_WHERE}",
            key_parts(key) or NO_KEY,
        )
        return int(rows[0][0]) if rows else 0

    def inferred_edges(self) -> list[RelationRecord]:
        return [_edge(row) for row in self._rows(f"{EDGE_SELECT} WHERE e.inferred ORDER BY e.eid")]

    # ------------------------------------------------------------------ aggregates
    def feedback(self, key: str) -> FeedbackAggregate | None:
        if key in self._feedback:
            return self._feedback[key]
        rows = self._rows("SELECT positive, negative, weight, last FROM cat_feedback WHERE key = ?", (key,))
        found = FeedbackAggregate(*rows[0]) if rows else None
        if len(self._feedback) >= CACHE_LIMIT:
            self._feedback.clear()
        self._feedback[key] = found
        return found

    @property
    def cursors(self) -> dict[str, tuple[int, str]]:
        if self._cursors is None:
            self._cursors = {s: (int(q), h) for s, q, h in self._rows("SELECT session, seq, hash FROM cat_cursors")}
        return self._cursors

    @property
    def sessions(self) -> list[str]:
        return sorted(self.cursors)

    def _counter(self, name: str, default: Any) -> Any:
        if self._counters is None:
            self._counters = dict(self._rows("SELECT name, value FROM cat_counters"))
        return self._counters.get(name, default)

    @property
    def latest_timestamp(self) -> str:
        return str(self._counter("latest_timestamp", ""))

    @property
    def event_count(self) -> int:
        return sum(seq for seq, _ in self.cursors.values())

    @property
    def failure_count(self) -> int:
        return int(self._rows("SELECT coalesce(sum(n), 0) FROM cat_failure_counts")[0][0])

    @property
    def failure_samples(self) -> list[dict[str, Any]]:
        rows = self._rows("SELECT id, session, seq, event_type, reason FROM cat_failures ORDER BY rid")
        return [{"id": i, "session_id": s, "seq": q, "event_type": t, "reason": r} for i, s, q, t, r in rows]

    def labels(self) -> set[str]:
        return {row[0] for row in self._rows("SELECT label FROM cat_labels")}

    def counts(self, session: str | None = None) -> dict[str, int]:
        parameters = (session,) if session is not None else ()
        by_sid = f"WHERE sid = {SID_OF.format('?')}" if session is not None else ""
        open_keys = f"{'AND' if by_sid else 'WHERE'} NOT closed"
        one = lambda sql: int(self._rows(sql, parameters)[0][0])  # noqa: E731
        edges_where = f"{by_sid} {'AND' if by_sid else 'WHERE'} inferred"
        return {
            "entities": one(f"SELECT count(*) FROM cat_versions {by_sid}"),
            "current_entities": one(f"SELECT count(*) FROM cat_keys {by_sid} {open_keys}"),
            "edges": one(f"SELECT count(*) FROM cat_edges {by_sid}"),
            "inferred_edges": one(f"SELECT count(*) FROM cat_edges {edges_where}"),
        }

    def entity_rows(self, session: str, first: int, last: int) -> list[dict[str, Any]]:
        """The versions events ``first..last`` of ``session`` created, as planner rows (for index replays)."""
        rows = self._rows(
            f"{_VERSION_FROM} WHERE v.sid = {SID_OF.format('?')} AND v.seq BETWEEN ? AND ? ORDER BY v.vid",
            (session, first, last),
        )
        versions = [_version(row, self.log_texts) for row in rows]
        fill(versions)
        return [
            {
                "id": v.id,
                "key": v.key,
                "session_id": v.session,
                "name": v.name,
                "entity_type": v.entity_type,
                "summary": v.summary,
                "properties": v.properties_json,
                "valid_from": v.valid_from,
                "valid_to": v.valid_to,
                "invalidated": v.invalidated,
                "source_event_seq": v.source_event_seq,
                "source_event_hash": v.source_event_hash,
                "source_event_type": v.source_event_type,
                "source_thread": v.session,
                "importance": v.importance,
                "source_path": v.source_path,
                "asserted": v.asserted,
            }
            for v in versions
        ]

    # ------------------------------------------------------------------ planner state (what planning reads)
    def key_states(self, keys: Iterable[str], db: sqlite3.Connection | None = None) -> dict[str, KeyState]:
        """Current state of each identity that exists (bulk lookup for the planner, inside its transaction)."""
        connection = db or self.store.reader()
        found: dict[str, KeyState] = {}
        for chunk in _chunks(list(keys)):
            for index, current, valid_from, closed in connection.execute(
                f"SELECT j.key, {ID_OUT}, v.valid_from, k.closed FROM {KEYS_JSON} JOIN cat_versions v ON v.vid = k.cur",
                (keys_json(chunk),),
            ):
                found[chunk[index]] = KeyState(current, valid_from, bool(closed))
        return found

    def sources_present(self, ids: Iterable[str], db: sqlite3.Connection | None = None) -> set[str]:
        connection = db or self.store.reader()
        present: set[str] = set()
        for chunk in _chunks(list(ids)):
            marks = ",".join("?" * len(chunk))
            present.update(
                row[0] for row in connection.execute(f"SELECT id FROM cat_sources WHERE id IN ({marks})", chunk)
            )
        return present

    # ------------------------------------------------------------------ writes
    def apply(self, db: sqlite3.Connection, batch: ProjectionBatch, generation: int | None = None) -> None:
        """Write one planned batch (inside the projector's transaction): see :func:`.catalog_writes.apply_batch`.

        ``generation``: ``PRAGMA data_version`` read inside this transaction (the projector reads it with the
        cursors; read here when not given). When another connection committed since the caches were filled, they
        are dropped before any remembered id is used: ids change only by deletes, which another process's erasure
        or reset may have made."""
        if generation is None:
            generation = int(db.execute("PRAGMA data_version").fetchone()[0])
        if generation != self._seen_generation:
            self._seen_generation = generation
            self._clear()
        apply_batch(self._touching(), db, batch, summaries_in_log=self.log_texts is not None, ids=self._ids)

    def delete_session(self, db: sqlite3.Connection, session: str) -> None:
        """Remove every row planned from ``session`` (erasure: the session is then replayed from the log)."""
        delete_session_rows(self._touching(), db, session)

    def erase_events(
        self,
        db: sqlite3.Connection,
        session: str,
        envelopes: dict[int, dict[str, Any]],
        extractions: dict[int, Extraction],
    ) -> bool:
        """Remove the rows of erased, projected events without re-planning the session when no other event depends
        on them (see :mod:`.erase_local`); False, nothing changed, when one does."""
        self._touching().everything = True
        return erase_locally(db, session, envelopes, extractions)
