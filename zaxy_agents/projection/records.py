"""Read-side records of the projection: entity versions, relations, traversal hits, statistics."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from zaxy_agents.eventloom.citations import format_citation


@dataclass(frozen=True, slots=True)
class EntityVersion:
    """One version of an entity with its validity window and the event it came from."""

    id: str
    key: str
    session: str
    name: str
    entity_type: str
    summary: str
    properties_json: str
    valid_from: str
    valid_to: str | None
    invalidated: bool
    source_event_seq: int
    source_event_hash: str
    source_event_type: str
    importance: float
    source_path: str | None = None
    asserted: bool = True  # False for versions created by reference (a speaker, a mentioned task)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> EntityVersion:
        """From an ``Entity`` row (planner batch, store query or snapshot): one conversion for every reader."""
        return cls(
            row["id"],
            row["key"],
            row["session_id"],
            row["name"],
            row["entity_type"],
            row["summary"] or "",
            row["properties"] or "",
            row["valid_from"],
            row["valid_to"],
            bool(row["invalidated"]),
            int(row["source_event_seq"]),
            row["source_event_hash"],
            row["source_event_type"],
            float(row["importance"]),
            row.get("source_path"),
            row.get("asserted") is not False,
        )

    @property
    def citation(self) -> str:
        return format_citation(self.session, self.source_event_seq, self.source_event_hash)

    @property
    def properties(self) -> dict[str, Any]:
        return json.loads(self.properties_json) if self.properties_json else {}

    def valid_at(self, moment: str | None) -> bool:
        """Current (``moment`` None) or valid at an ISO instant: ``valid_from <= t < valid_to``."""
        if moment is None:
            return self.valid_to is None
        return self.valid_from <= moment and (self.valid_to is None or self.valid_to > moment)

    def with_validity(self, valid_to: str | None, invalidated: bool) -> EntityVersion:
        return EntityVersion(
            self.id,
            self.key,
            self.session,
            self.name,
            self.entity_type,
            self.summary,
            self.properties_json,
            self.valid_from,
            valid_to,
            invalidated,
            self.source_event_seq,
            self.source_event_hash,
            self.source_event_type,
            self.importance,
            self.source_path,
            self.asserted,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session": self.session,
            "name": self.name,
            "entity_type": self.entity_type,
            "summary": self.summary,
            "properties": self.properties,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "invalidated": self.invalidated,
            "citation": self.citation,
            "source_event_type": self.source_event_type,
            "importance": self.importance,
            **({"source_path": self.source_path} if self.source_path else {}),
        }


@dataclass(frozen=True, slots=True)
class RelationRecord:
    """A typed edge between two entity versions, with its audit trail."""

    id: str
    source_id: str
    target_id: str
    relation_type: str
    session: str
    inferred: bool
    confidence: float
    inference_method: str
    evidence_session: str
    evidence_seq: int
    evidence_hash: str
    valid_from: str
    valid_to: str | None
    source_event_seq: int
    source_event_hash: str

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> RelationRecord:
        """From a relation row (``from``/``to`` are version ids plus the audit columns)."""
        return cls(
            row["id"],
            row["from"],
            row["to"],
            row["relation_type"],
            row["session_id"],
            bool(row["inferred"]),
            float(row["confidence"]),
            row["inference_method"],
            row["evidence_session"],
            int(row["evidence_seq"]),
            row["evidence_hash"],
            row["valid_from"],
            row["valid_to"],
            int(row["source_event_seq"]),
            row["source_event_hash"],
        )

    @property
    def citation(self) -> str:
        return format_citation(self.session, self.source_event_seq, self.source_event_hash)

    @property
    def evidence_citation(self) -> str:
        return format_citation(self.evidence_session, self.evidence_seq, self.evidence_hash)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source_id": self.source_id,
            "target_id": self.target_id,
            "relation_type": self.relation_type,
            "inferred": self.inferred,
            "confidence": self.confidence,
            "inference_method": self.inference_method,
            "evidence": self.evidence_citation,
            "citation": self.citation,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
        }


@dataclass(frozen=True, slots=True)
class TraversalHit:
    """An entity reached from a start entity, with the path length and the last edge taken."""

    entity: EntityVersion
    depth: int
    via: RelationRecord
    direction: str  # "out" or "in"


@dataclass
class ProjectionStats:
    """Counts reported by ``zaxy memory status``."""

    backend: str
    events: int = 0
    entities: int = 0
    current_entities: int = 0
    edges: int = 0
    inferred_edges: int = 0
    extraction_failures: int = 0
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    degraded: str | None = None
