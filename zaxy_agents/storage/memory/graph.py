"""The projection graph held in dicts: the same tables, rows, queries and canonical dump as the Kuzu store.

Rows are typed by the shared graph schema (``NODE_COLUMNS``, ``REL_TABLES``), so the dump and therefore the
rebuild digest are byte-identical to the other stores' for the same log (the conformance kit checks it).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from zaxy_agents.projection.planner import KeyState, ProjectionBatch
from zaxy_agents.projection.protocol import ProjectionStore, version_order
from zaxy_agents.projection.records import EntityVersion, ProjectionStats, RelationRecord, TraversalHit

from ..files.kuzu_schema import BATCH_ROW_KEYS, EDGE_AUDIT_COLUMNS, NODE_COLUMNS, REL_TABLES

_WORDS = re.compile(r"\w+")
_CASTS = {"STRING": str, "INT64": int, "DOUBLE": float, "BOOLEAN": bool}
UPDATES = {  # batch field -> (table, {stored column: batch key})
    "closures": (
        "Entity",
        {"valid_to": "valid_to", "invalidated": "invalidated", "closed_by_seq": "closed_by_seq"}
        | {"invalidation_reason": "reason"},
    ),
    "key_updates": ("EntityKey", {"current_version": "current_version", "closed": "closed"}),
}


def _typed(row: dict[str, Any], columns: list[tuple[str, str]]) -> dict[str, Any]:
    return {name: None if row.get(name) is None else _CASTS[kind](row[name]) for name, kind in columns}


class MemoryGraphStore(ProjectionStore):
    backend = "memory"
    shared = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.closed = False
        self.reset()

    def reset(self) -> None:
        self.nodes: dict[str, dict[str, dict[str, Any]]] = {table: {} for table in NODE_COLUMNS}
        self.edges: dict[str, list[tuple[str, str, dict[str, Any]]]] = {table: [] for table in REL_TABLES}

    def close(self) -> None:
        """A closed in-memory graph is gone: the backend opens an empty one next time."""
        self.closed = True

    # ------------------------------------------------------------------ writes
    def apply(self, batch: ProjectionBatch) -> None:
        """All rows of the batch and its cursors, or (on any error) none of them."""
        with self._lock:
            nodes = {table: dict(rows) for table, rows in self.nodes.items()}
            edges = {table: list(rows) for table, rows in self.edges.items()}
            for table, columns in NODE_COLUMNS.items():
                for row in getattr(batch, BATCH_ROW_KEYS[table]):
                    if row["id"] in nodes[table]:
                        raise ValueError(f"{table} {row['id']!r} exists already")
                    nodes[table][row["id"]] = _typed(row, columns)
            for table, (_source, _target, columns) in REL_TABLES.items():
                for row in batch.relations if table == "RELATES" else getattr(batch, BATCH_ROW_KEYS[table]):
                    edges[table].append((row["from"], row["to"], _typed(row, columns)))
            for row in batch.relations:  # each relation is also stored under its typed label
                edges.setdefault(row["label"], []).append((row["from"], row["to"], _typed(row, EDGE_AUDIT_COLUMNS)))
            for label in batch.new_labels:
                edges.setdefault(label, [])
            for field, (table, assignments) in UPDATES.items():
                kinds = dict(NODE_COLUMNS[table])
                for row in getattr(batch, field):  # like MATCH ... SET: an id that is not stored updates nothing
                    if row["id"] not in nodes[table]:
                        continue
                    stored = nodes[table][row["id"]] = dict(nodes[table][row["id"]])
                    for column, key in assignments.items():
                        stored[column] = None if row[key] is None else _CASTS[kinds[column]](row[key])
            for session, (seq, digest) in batch.cursors.items():
                if session not in nodes["Session"]:
                    continue
                stored = nodes["Session"][session] = dict(nodes["Session"][session])
                stored["projected_seq"], stored["projected_hash"] = seq, digest
            self.nodes, self.edges = nodes, edges

    # ------------------------------------------------------------------ reads
    def cursors(self) -> dict[str, tuple[int, str]]:
        return {
            session: (row["projected_seq"], row["projected_hash"])
            for session, row in self.nodes["Session"].items()
            if row["projected_seq"] is not None
        }

    def migrations(self) -> list[dict[str, Any]]:
        return []

    def key_states(self, keys: Iterable[str]) -> dict[str, KeyState]:
        stored = self.nodes["EntityKey"]
        return {
            key: KeyState(stored[key]["current_version"], "", bool(stored[key]["closed"]))
            for key in keys
            if key in stored
        }

    def sources_present(self, ids: Iterable[str]) -> set[str]:
        return {source for source in ids if source in self.nodes["Source"]}

    def typed_labels(self) -> set[str]:
        return set(self.edges) - set(REL_TABLES)

    def _versions(self, where: Any) -> list[EntityVersion]:
        """The versions whose row ``where`` accepts, in the protocol's :func:`version_order`."""
        found = (EntityVersion.from_row(row) for row in self.nodes["Entity"].values() if where(row))
        return sorted(found, key=version_order)

    def entity_history(
        self, name: str, entity_type: str | None = None, session: str | None = None
    ) -> list[EntityVersion]:
        wanted = " ".join(name.casefold().split())
        keys = {
            key
            for key, row in self.nodes["EntityKey"].items()
            if row["norm_name"] == wanted
            and (not entity_type or row["entity_type"] == entity_type)
            and (not session or row["session_id"] == session)
        }
        versions = {to for source, to, _row in self.edges["HAS_VERSION"] if source in keys}
        return self._versions(lambda row: row["id"] in versions)

    def entities_as_of(self, moment: str, *, session: str | None = None, limit: int = 1000) -> list[EntityVersion]:
        return self._versions(lambda row: _valid(row, moment) and (not session or row["session_id"] == session))[:limit]

    def traverse(
        self,
        start_keys: list[str],
        *,
        depth: int = 2,
        relation_types: list[str] | None = None,
        as_of: str | None = None,
        limit: int = 200,
    ) -> list[TraversalHit]:
        """Breadth-first between identities, hop by hop, as the Kuzu store walks them (see its docstring)."""
        key_of = {version: key for key, version, _row in self.edges["HAS_VERSION"]}
        relates = sorted(self.edges["RELATES"], key=lambda edge: (edge[2]["source_event_seq"], edge[2]["id"]))
        relates = [
            edge
            for edge in relates
            if (not relation_types or edge[2]["relation_type"] in relation_types)
            and (as_of is None or _valid(edge[2], as_of))
        ]
        seen, frontier, hits = set(start_keys), list(start_keys), []
        for level in range(1, max(1, min(depth, 5)) + 1):
            if not frontier or len(hits) >= limit:
                break
            reached: dict[str, tuple[str, dict[str, Any], str, str]] = {}
            current = set(frontier)
            for direction in ("out", "in"):
                for source, target, audit in relates:
                    origin, other = (source, target) if direction == "out" else (target, source)
                    if key_of.get(origin) not in current:
                        continue
                    key = key_of.get(other)
                    if key is None or key in seen or key in reached:
                        continue
                    reached[key] = (direction, audit, origin, other)
            versions = self._versions_at(list(reached), as_of)
            frontier = []
            for key, (direction, audit, origin, other) in reached.items():
                if key not in versions:
                    continue
                seen.add(key)
                source, target = (origin, other) if direction == "out" else (other, origin)
                relation = RelationRecord.from_row({**audit, "from": source, "to": target})
                hits.append(TraversalHit(versions[key], level, relation, direction))
                frontier.append(key)
        return hits[:limit]

    def _versions_at(self, keys: list[str], as_of: str | None) -> dict[str, EntityVersion]:
        wanted = set(keys)
        ids = {version for key, version, _row in self.edges["HAS_VERSION"] if key in wanted}
        found = self._versions(lambda row: row["id"] in ids and _current(row, as_of))
        return {version.key: version for version in found}

    def search_entities(
        self, text: str, *, session: str | None = None, as_of: str | None = None, limit: int = 20
    ) -> list[tuple[EntityVersion, float]]:
        """Scored like the Kuzu store: distinct query words found as whole words, plus one for the exact name."""
        words = set(_WORDS.findall(text.casefold()))
        if not words:
            return []
        name = " ".join(text.casefold().split())
        scored = []
        for row in self.nodes["Entity"].values():
            if not _current(row, as_of) or (session and row["session_id"] != session):
                continue
            found = words & set(_WORDS.findall(f"{row['name']} {row['summary']}".casefold()))
            if found:
                version = EntityVersion.from_row(row)
                exact = 1.0 if " ".join(version.name.casefold().split()) == name else 0.0
                scored.append((version, len(found) + exact))
        scored.sort(key=lambda pair: (-pair[1], -pair[0].source_event_seq, pair[0].id))
        return scored[:limit]

    def stats(self) -> ProjectionStats:
        entities = list(self.nodes["Entity"].values())
        relates = self.edges["RELATES"]
        stats = ProjectionStats(
            backend=self.backend,
            events=len(self.nodes["Event"]),
            entities=len(entities),
            current_entities=sum(1 for row in entities if row["valid_to"] is None),
            edges=len(relates),
            inferred_edges=sum(1 for _s, _t, row in relates if row["inferred"]),
            extraction_failures=len(self.nodes["ExtractionFailure"]),
        )
        for session, (seq, digest) in sorted(self.cursors().items()):
            stats.sessions[session] = {"projected_seq": seq, "projected_hash": digest}
        return stats

    def dump_lines(self) -> Iterator[str]:
        """Canonical sorted lines of every node and edge, in the Kuzu store's table order and layout."""
        encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str).encode
        for table, columns in NODE_COLUMNS.items():
            yield from sorted(
                encode([table, *(row[name] for name, _ in columns)]) for row in self.nodes[table].values()
            )
        for table in sorted(self.edges):
            columns = REL_TABLES.get(table, ("Entity", "Entity", EDGE_AUDIT_COLUMNS))[2]
            yield from sorted(
                encode([table, source, target, *(row[name] for name, _ in columns)])
                for source, target, row in self.edges[table]
            )


def _valid(row: dict[str, Any], moment: str | None) -> bool:
    """``valid_from <= moment < valid_to`` (an open ``valid_to`` never ends)."""
    if moment is None:
        return True
    return (
        row["valid_from"] is not None
        and row["valid_from"] <= moment
        and (row["valid_to"] is None or row["valid_to"] > moment)
    )


def _current(row: dict[str, Any], as_of: str | None) -> bool:
    """Valid at ``as_of``, or still open when no moment is given."""
    return _valid(row, as_of) if as_of else row["valid_to"] is None
