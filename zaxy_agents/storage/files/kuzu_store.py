"""The embedded graph store: Kuzu 0.11.3 behind the :class:`ProjectionStore` protocol.

The store is the file (:mod:`.kuzu_database`: one ``Database`` per path per process, the thread rules), its schema
(:mod:`.kuzu_migrations`), the columns it stores (:mod:`.kuzu_layout`), what completes its rows
(:mod:`.kuzu_rows`), its writes (:mod:`.kuzu_writes`) and its canonical dump (:mod:`.kuzu_dump`); this module opens
it (starting a graph over when a migration leaves rows that cannot be completed) and answers the protocol's
queries: cursors, the planner's key states, entity history, "as of" listings, traversal, keyword search, stats.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from zaxy_agents.projection.model import typed_label
from zaxy_agents.projection.planner import KeyState, event_node_id
from zaxy_agents.projection.protocol import ProjectionStore
from zaxy_agents.projection.records import EntityVersion, ProjectionStats, RelationRecord, TraversalHit

from . import entity_search
from . import kuzu_layout as layout
from .kuzu_dump import KuzuDump
from .kuzu_migrations import REBUILD_MIGRATIONS, KuzuMigrations
from .kuzu_rows import LOOKUP_CHUNK
from .kuzu_writes import KuzuWrites

# The protocol's total order of listed versions (``protocol.version_order``): Kuzu compares strings by their UTF-8
# bytes, which is code-point order, as Python and PostgreSQL's ``COLLATE "C"`` columns compare them.
VERSION_ORDER = "e.source_event_seq, e.session_id, e.id"


class KuzuProjectionStore(KuzuWrites, KuzuDump, KuzuMigrations, ProjectionStore):
    """Durable projection graph in an embedded Kuzu file."""

    backend = "kuzu"
    shared = False  # one read-write process per file: nobody else writes here

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        held = "Session" in {name for (name,) in self._rows("CALL SHOW_TABLES() RETURN name")} and self.cursors()
        applied = self.migrate()
        # A graph that predates a schema change its rows cannot be completed for starts over (derived data; the
        # projector re-projects it from the log, as for a new workspace). In a new file when this store is the
        # file's only user in the process (the caller holds graph.lock): a Kuzu file never shrinks, so tables
        # emptied in place would keep every page the old rows used. (``held``: rows before a migration that
        # re-creates every table, 0010.)
        rebuild = REBUILD_MIGRATIONS.intersection(applied) and (held or self.cursors() or self.typed_labels())
        if rebuild:
            if self._recreate_file():
                self.migrate()
            else:
                self.reset()

    def typed_labels(self) -> set[str]:
        """The typed relation labels the graph holds edges for: ``typed_label`` of each RELATES ``relation_type``
        (no table each since migration 0007, ``kuzu_schema.MIRRORED``)."""
        rows = self._rows("MATCH ()-[r:RELATES]->() RETURN DISTINCT r.relation_type")
        return {typed_label(relation_type) for (relation_type,) in rows}

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
            identity = layout.column_exprs("k", "EntityKey", "id")
            rows = self._rows(
                f"UNWIND $ids AS i MATCH (k:EntityKey {{{layout.key_name()}: i}}) "
                f"RETURN k.current_version, k.closed, {', '.join(identity)}",
                {"ids": layout.keys(chunk)},
            )
            asked = set(chunk)  # the id each row holds is checked: two ids never share a key unnoticed
            identity_of = layout.column_maker("EntityKey", "id")
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
            query = f"UNWIND $ids AS i MATCH (s:Source {{{layout.key_name()}: i}}) RETURN s.id"
            asked = set(chunk)
            present.update(row[0] for row in self._rows(query, {"ids": layout.keys(chunk)}) if row[0] in asked)
        return present

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
            + layout.entity_projection("e")
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
            + layout.entity_projection("e")
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
        stored_validity = "valid_from" in layout.relates_stored()
        time_filter = " AND r.valid_from <= $t" if as_of and stored_validity else ""
        extra = {**({"types": relation_types} if relation_types else {}), **({"t": as_of} if time_filter else {})}
        seq_at = layout.relates_stored().index("source_event_seq")
        for level in range(1, depth + 1):
            if not frontier or len(hits) >= limit:
                break
            found: dict[str, tuple[str, tuple[str, list[Any]], str, str, str]] = {}
            asked = set(frontier)
            for direction, pattern in (("out", "(va)-[r:RELATES]->(vb)"), ("in", "(vb)-[r:RELATES]->(va)")):
                # the reached version's identity is its ``key`` column (HAS_VERSION is stored forward only)
                origin, reached = (
                    layout.column_exprs("ka", "EntityKey", "id"),
                    layout.column_exprs("vb", "Entity", "key"),
                )
                listed = self._rows(
                    f"MATCH (ka:EntityKey)-[:HAS_VERSION]->(va:Entity), {pattern} "
                    f"WHERE ka.{layout.key_name()} IN $keys{type_filter}{time_filter} "
                    f"RETURN {', '.join(origin)}, {', '.join(reached)}, va.id, vb.id, va.session_id, "
                    + layout.relates_stored_return()
                    + " ORDER BY r.source_event_seq, r.id",
                    {"keys": layout.keys(frontier), **extra},
                )
                ends = len(origin) + len(reached)
                origin_of, reached_of = layout.column_maker("EntityKey", "id"), layout.column_maker("Entity", "key")
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
            f"MATCH (k:EntityKey)-[:HAS_VERSION]->(v:Entity) WHERE k.{layout.key_name()} IN $keys AND {validity} "
            + "RETURN "
            + layout.entity_projection("v"),
            {"keys": layout.keys(keys), **({"t": as_of} if as_of else {})},
        )
        asked = set(keys)
        found = [version for version in self._entity_versions(rows) if version.key in asked]
        return {version.key: version for version in sorted(found, key=lambda v: v.source_event_seq)}

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
        found = entity_search.candidates(
            self._rows, words, session, as_of, self._entity_words, (layout.key_name(), layout.keys)
        )
        best = entity_search.rank(found, self._texts_of, words, text, limit)
        if not best:
            return []
        query = f"MATCH (e:Entity) WHERE e.{layout.key_name()} IN $ids RETURN " + layout.entity_projection("e")
        rows = [row for row in self._rows(query, {"ids": layout.keys(best)}) if row[0] in best]
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


def _relation(audit: dict[str, Any], source_id: str, target_id: str) -> RelationRecord:
    return RelationRecord.from_row({**audit, "from": source_id, "to": target_id})
