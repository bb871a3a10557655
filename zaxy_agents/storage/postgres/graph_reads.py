"""Queries of the PostgreSQL projection store: history, ``as_of``, traversal, keyword search, stats, dump.

Results have the embedded store's shapes and orderings (listed versions in ``protocol.version_order``: source
event seq, session, id), and :meth:`dump_lines` produces the embedded store's canonical lines, so the rebuild
digest of a log is the same on both backends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from zaxy_agents.projection.model import normalise_name
from zaxy_agents.projection.records import EntityVersion, ProjectionStats, RelationRecord, TraversalHit

from .graph_sql import (
    DUMP_EDGES,
    DUMP_NODES,
    DUMP_TYPED,
    ENTITY_COLUMNS,
    RELATION_COLUMNS,
    search_sql,
    traverse_sql,
)

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    import psycopg

    from .graph_features import Features

MAX_DEPTH = 5
DUMP_FETCH_ROWS = 5000
_WORDS = re.compile(r"\w+")


class PostgresProjectionReads:
    """Mixin: the read side of :class:`~zaxy_agents.storage.postgres.graph_store.PostgresProjectionStore`."""

    backend: str
    schema: str
    features: Features
    _sql: dict[str, str]

    def _connection(self) -> AbstractContextManager[psycopg.Connection[Any]]: ...

    def _query(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        with self._connection() as conn:
            return conn.execute(sql, params).fetchall()

    def _schema_sql(self, sql: str) -> str:
        return sql.replace("{schema}", f'"{self.schema}"')

    # ------------------------------------------------------------------ cursors and labels
    def cursors(self) -> dict[str, tuple[int, str]]:
        return {row[0]: (int(row[1]), str(row[2])) for row in self._query(self._sql["cursors"])}

    def typed_labels(self) -> set[str]:
        return {row[0] for row in self._query(self._sql["labels"])}

    # ------------------------------------------------------------------ temporal reads
    def entity_history(
        self, name: str, entity_type: str | None = None, session: str | None = None
    ) -> list[EntityVersion]:
        """Every version of entities with this name (optionally typed / per session), in ``version_order``."""
        rows = self._query(self._sql["history"], {"n": normalise_name(name), "t": entity_type, "s": session})
        return [_version(row) for row in rows]

    def entities_as_of(self, moment: str, *, session: str | None = None, limit: int = 1000) -> list[EntityVersion]:
        """Versions valid at ``moment`` (``valid_from <= t < valid_to``), the first ``limit`` in ``version_order``."""
        rows = self._query(self._sql["as_of"], {"t": moment, "s": session, "limit": limit})
        return [_version(row) for row in rows]

    def traverse(
        self,
        start_keys: list[str],
        *,
        depth: int = 2,
        relation_types: list[str] | None = None,
        as_of: str | None = None,
        limit: int = 200,
    ) -> list[TraversalHit]:
        """Breadth-first traversal between entity identities in one recursive query (see ``traverse_sql``)."""
        if not start_keys:
            return []
        sql = self._schema_sql(traverse_sql(typed=bool(relation_types), as_of=as_of is not None))
        params = {
            "keys": list(dict.fromkeys(start_keys)),
            "depth": max(1, min(depth, MAX_DEPTH)),
            "types": relation_types,
            "t": as_of,
            "limit": limit,
        }
        hits = []
        width = len(ENTITY_COLUMNS)
        for row in self._query(sql, params):
            level, direction = int(row[0]), "out" if row[1] == 0 else "in"
            entity = _version(row[2 : 2 + width])
            relation = _relation(row[2 + width :])
            hits.append(TraversalHit(entity, level, relation, direction))
        return hits

    def search_entities(
        self, text: str, *, session: str | None = None, as_of: str | None = None, limit: int = 20
    ) -> list[tuple[EntityVersion, float]]:
        """Entity versions valid at ``as_of`` (now by default) whose name or summary holds a word of ``text``
        (``tsvector``, ranked by ``ts_rank_cd``), plus, with ``pg_trgm``, identities whose name is similar to
        ``text``; best first."""
        words = list(dict.fromkeys(_WORDS.findall(text.casefold())))
        sql = search_sql(words=bool(words), trigram_schema=self.features.trigram_schema)
        if sql is None or not words:
            return []
        params = {"words": " | ".join(words), "name": normalise_name(text), "t": as_of, "s": session, "limit": limit}
        rows = self._query(self._schema_sql(sql), params)
        return [(_version(row[:-1]), float(row[-1])) for row in rows]

    # ------------------------------------------------------------------ status and dump
    def stats(self) -> ProjectionStats:
        events, entities, current, edges, inferred, failures = self._query(self._sql["counts"])[0]
        stats = ProjectionStats(
            backend=self.backend,
            events=int(events),
            entities=int(entities),
            current_entities=int(current),
            edges=int(edges),
            inferred_edges=int(inferred),
            extraction_failures=int(failures),
        )
        for session, (seq, digest) in sorted(self.cursors().items()):
            stats.sessions[session] = {"projected_seq": seq, "projected_hash": digest}
        return stats

    def dump_lines(self) -> Iterator[str]:
        """The embedded store's canonical lines (same tables, columns, order and encoding)."""
        encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str).encode
        for table, sql in DUMP_NODES:
            yield from sorted(encode([table, *row]) for row in self._stream(self._schema_sql(sql)))
        labels = self.typed_labels()
        for table in sorted(set(DUMP_EDGES) | labels):
            sql, params = (DUMP_EDGES[table], None) if table in DUMP_EDGES else (DUMP_TYPED, (table,))
            yield from sorted(encode([table, *row]) for row in self._stream(self._schema_sql(sql), params))

    def _stream(self, sql: str, params: Any = None) -> Iterator[tuple[Any, ...]]:
        """Rows through a server-side cursor (bounded client memory for large tables)."""
        with self._connection() as conn, conn.transaction(), conn.cursor(name="zaxy_dump") as cursor:
            cursor.itersize = DUMP_FETCH_ROWS
            cursor.execute(sql, params)
            yield from cursor


def _version(values: Any) -> EntityVersion:
    return EntityVersion.from_row(dict(zip(ENTITY_COLUMNS, values, strict=True)))


def _relation(values: Any) -> RelationRecord:
    source, target, *audit = values
    return RelationRecord.from_row({"from": source, "to": target, **dict(zip(RELATION_COLUMNS, audit, strict=True))})
