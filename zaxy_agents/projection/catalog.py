"""The in-memory mirror of the projection that reads are served from.

Kuzu (or PostgreSQL) holds the durable, queryable graph; the catalog holds what hot reads need — every entity
version with its validity, the current version of each identity, names, key-level adjacency, feedback — so a
checkout never waits on a graph query. It is fed by the same :class:`ProjectionBatch` rows the store writes,
can be rebuilt from the store, and is snapshotted next to it (with the cursor it reflects) so a restart does
not rebuild it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from .planner import KeyState, ProjectionBatch
from .records import EntityVersion, RelationRecord

SNAPSHOT_VERSION = 5


@dataclass(slots=True)
class FeedbackAggregate:
    positive: int = 0
    negative: int = 0
    weight: float = 0.0
    last_timestamp: str = ""


class EntityCatalog:
    """Versions, identities, names, adjacency and feedback, updated batch by batch."""

    def __init__(self) -> None:
        self.versions: dict[str, EntityVersion] = {}
        self.keys: dict[str, KeyState] = {}
        self.history: dict[str, list[str]] = defaultdict(list)
        self.names: dict[str, set[str]] = defaultdict(set)
        self.out_edges: dict[str, list[RelationRecord]] = defaultdict(list)
        self.in_edges: dict[str, list[RelationRecord]] = defaultdict(list)
        self.labels: set[str] = set()
        self.sessions: set[str] = set()
        self.sources: set[str] = set()
        self.feedback: dict[str, FeedbackAggregate] = defaultdict(FeedbackAggregate)
        self.cursors: dict[str, tuple[int, str]] = {}
        self.event_versions: dict[tuple[str, int], list[str]] = defaultdict(list)
        self.type_log: dict[tuple[str, str], list[str]] = defaultdict(list)  # keys in assertion order
        self.latest_timestamp = ""
        self.event_count = 0
        self.edge_count = 0
        self.inferred_edge_count = 0
        self.failure_count = 0
        self.failure_samples: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ updates
    def apply(self, batch: ProjectionBatch) -> None:
        for row in batch.entities:
            version = EntityVersion.from_row(row)
            self.versions[version.id] = version
            self.history[version.key].append(version.id)
            self.names[" ".join(version.name.casefold().split())].add(version.key)
            self.event_versions[(version.session, version.source_event_seq)].append(version.id)
            self.type_log[(version.session, version.entity_type)].append(version.key)
        for row in batch.events:
            if row["timestamp"] > self.latest_timestamp:
                self.latest_timestamp = row["timestamp"]
        for row in batch.entity_keys:
            current = self.versions[row["current_version"]]
            self.keys[row["id"]] = KeyState(current.id, current.valid_from, bool(row["closed"]))
        for row in batch.key_updates:
            current = self.versions[row["current_version"]]
            self.keys[row["id"]] = KeyState(current.id, current.valid_from, bool(row["closed"]))
        for row in batch.closures:
            version = self.versions[row["id"]]
            self.versions[row["id"]] = version.with_validity(row["valid_to"], bool(row["invalidated"]))
        for row in batch.relations:
            record = RelationRecord.from_row(row)
            self.out_edges[self.versions[record.source_id].key].append(record)
            self.in_edges[self.versions[record.target_id].key].append(record)
            self.edge_count += 1
            self.inferred_edge_count += record.inferred
        for row in batch.feedback:
            aggregate = self.feedback[row["entity_key"]]
            if row["positive"]:
                aggregate.positive += 1
                aggregate.weight += float(row["weight"])
            else:
                aggregate.negative += 1
            aggregate.last_timestamp = max(aggregate.last_timestamp, row["timestamp"])
        self.failure_count += len(batch.failures)
        self.failure_samples = (self.failure_samples + batch.failures)[-20:]
        self.labels.update(batch.new_labels)
        self.sessions.update(row["id"] for row in batch.sessions)
        self.sources.update(row["id"] for row in batch.sources)
        self.cursors.update(batch.cursors)
        self.event_count += batch.event_count

    def planner_state(self) -> tuple[dict[str, KeyState], set[str], set[str], set[str]]:
        """Copies the planner can own (it mutates them while planning ahead of the catalog)."""
        keys = {key: KeyState(s.current, s.valid_from, s.closed) for key, s in self.keys.items()}
        return keys, set(self.labels), set(self.sessions), set(self.sources)

    # ------------------------------------------------------------------ reads
    def current(self, key: str) -> EntityVersion | None:
        state = self.keys.get(key)
        if state is None or state.closed:
            return None
        return self.versions[state.current]

    def version_at(self, key: str, moment: str | None) -> EntityVersion | None:
        """The version of ``key`` valid at ``moment`` (``None`` = now)."""
        if moment is None:
            return self.current(key)
        for version_id in reversed(self.history.get(key, ())):
            version = self.versions[version_id]
            if version.valid_at(moment):
                return version
        return None

    def is_current(self, version_id: str) -> bool:
        version = self.versions.get(version_id)
        if version is None:
            return False
        state = self.keys.get(version.key)
        return state is not None and not state.closed and state.current == version_id

    def recent_keys(self, session: str, entity_type: str, scan: int = 500) -> list[str]:
        """Identities of one type in one session, most recently asserted first (bounded scan, no duplicates)."""
        log = self.type_log.get((session, entity_type), [])
        seen: dict[str, None] = {}
        for key in reversed(log[-scan:]):
            seen.setdefault(key, None)
        return list(seen)

    def keys_named(self, name: str) -> set[str]:
        return self.names.get(" ".join(name.casefold().split()), set())

    # ------------------------------------------------------------------ snapshots
    def to_state(self) -> dict[str, Any]:
        """Picklable state (compact tuples) for the projection snapshot."""
        return {
            "version": SNAPSHOT_VERSION,
            "versions": [_version_tuple(v) for v in self.versions.values()],
            "keys": {k: (s.current, s.valid_from, s.closed) for k, s in self.keys.items()},
            "relations": [_relation_tuple(r) for edges in self.out_edges.values() for r in edges],
            "labels": self.labels,
            "sessions": self.sessions,
            "sources": self.sources,
            "feedback": {k: (a.positive, a.negative, a.weight, a.last_timestamp) for k, a in self.feedback.items()},
            "cursors": self.cursors,
            "event_count": self.event_count,
            "failure_count": self.failure_count,
            "failure_samples": self.failure_samples,
            "latest_timestamp": self.latest_timestamp,
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> EntityCatalog | None:
        """Inverse of :meth:`to_state`; ``None`` for a state from another snapshot version."""
        if not isinstance(state, dict) or state.get("version") != SNAPSHOT_VERSION:
            return None
        catalog = cls()
        for values in state["versions"]:
            version = EntityVersion(*values)
            catalog.versions[version.id] = version
            catalog.history[version.key].append(version.id)
            catalog.names[" ".join(version.name.casefold().split())].add(version.key)
            catalog.event_versions[(version.session, version.source_event_seq)].append(version.id)
            catalog.type_log[(version.session, version.entity_type)].append(version.key)
        catalog.latest_timestamp = state["latest_timestamp"]
        catalog.keys = {k: KeyState(*v) for k, v in state["keys"].items()}
        for values in state["relations"]:
            record = RelationRecord(*values)
            catalog.out_edges[catalog.versions[record.source_id].key].append(record)
            catalog.in_edges[catalog.versions[record.target_id].key].append(record)
            catalog.edge_count += 1
            catalog.inferred_edge_count += record.inferred
        catalog.labels, catalog.sessions, catalog.sources = state["labels"], state["sessions"], state["sources"]
        for key, (positive, negative, weight, last) in state["feedback"].items():
            catalog.feedback[key] = FeedbackAggregate(positive, negative, weight, last)
        catalog.cursors = state["cursors"]
        catalog.event_count = state["event_count"]
        catalog.failure_count = state["failure_count"]
        catalog.failure_samples = state["failure_samples"]
        return catalog


def _version_tuple(version: EntityVersion) -> tuple[Any, ...]:
    return tuple(getattr(version, name) for name in EntityVersion.__slots__)


def _relation_tuple(record: RelationRecord) -> tuple[Any, ...]:
    return tuple(getattr(record, name) for name in RelationRecord.__slots__)
