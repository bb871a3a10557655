"""Causal reads over the in-memory catalog: successors follow outgoing ``causal_*`` edges, predecessors
follow incoming ones (a true reverse walk over the catalog's in-edge index), both as of a time.

An edge is visible at ``as_of`` once its event happened. It is *stale* when either endpoint identity is no
longer valid at that time (invalidated: "this is no longer true"); stale edges are excluded and counted
unless asked for. Every hit keeps its audit trail: method, confidence, the edge's own citation, the evidence
citation (and whether it still resolves), review and authority status, and its path length.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.records import EntityVersion, RelationRecord

from .taxonomy import AUTHORITY_STATUS, REVIEW_STATUS, WEAK_CONFIDENCE, taxonomy_relation

Direction = Literal["successors", "predecessors"]
EvidenceCheck = Callable[[str, int, str], bool]
MAX_DEPTH = 6
MAX_HITS = 200


@dataclass(frozen=True, slots=True)
class CausalHit:
    """One causal edge reached by a walk, with the path that reached it."""

    source: EntityVersion
    target: EntityVersion
    relation_type: str
    graph_relation_type: str
    confidence: float
    path_confidence: float
    method: str
    citation: str
    evidence: str  # the evidence event's citation
    evidence_resolves: bool
    path_length: int
    stale: bool
    valid_from: str
    edge_id: str
    evidence_session: str = ""
    evidence_seq: int = 0
    evidence_hash: str = ""

    @property
    def weak(self) -> bool:
        return self.confidence < WEAK_CONFIDENCE

    @property
    def trust(self) -> float:
        """Confidence, halved when weak, zero when the evidence citation no longer resolves."""
        if not self.evidence_resolves:
            return 0.0
        return self.confidence * (0.5 if self.weak else 1.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": _endpoint(self.source),
            "target": _endpoint(self.target),
            "relation_type": self.relation_type,
            "graph_relation_type": self.graph_relation_type,
            "confidence": self.confidence,
            "path_confidence": round(self.path_confidence, 6),
            "method": self.method,
            "citation": self.citation,
            "evidence": {
                "source_event_seq": self.evidence_seq,
                "source_event_hash": self.evidence_hash,
                "session": self.evidence_session,
                "citation": self.evidence,
                "resolves": self.evidence_resolves,
            },
            "evidence_resolves": self.evidence_resolves,
            "review_status": REVIEW_STATUS,
            "authority_status": AUTHORITY_STATUS,
            "path_length": self.path_length,
            "weak": self.weak,
            "stale": self.stale,
            "valid_from": self.valid_from,
        }


@dataclass
class CausalWalk:
    """The result of one walk: where it started, which way it went, what it found and what it left out."""

    direction: Direction
    start: list[EntityVersion]
    depth: int
    as_of: str | None
    hits: list[CausalHit] = field(default_factory=list)
    stale_excluded: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "start": [_endpoint(version) for version in self.start],
            "depth": self.depth,
            "as_of": self.as_of,
            "count": len(self.hits),
            "stale_excluded": self.stale_excluded,
            "authority_status": AUTHORITY_STATUS,
            "results": [hit.to_dict() for hit in self.hits],
        }


def causal_edges(catalog: EntityCatalog, key: str, direction: Direction) -> list[RelationRecord]:
    """The causal edges leaving (successors) or entering (predecessors) one identity."""
    edges = catalog.out_edges(key) if direction == "successors" else catalog.in_edges(key)
    return [edge for edge in edges if taxonomy_relation(edge.relation_type) is not None]


def walk(
    catalog: EntityCatalog,
    start_keys: list[str],
    *,
    direction: Direction,
    evidence_check: EvidenceCheck,
    relation_types: set[str] | None = None,
    depth: int = 2,
    as_of: str | None = None,
    include_stale: bool = False,
    limit: int = MAX_HITS,
) -> CausalWalk:
    """Breadth-first over causal edges, one level per hop; each edge is reported once, at its shortest path."""
    start = [_display(catalog, key, as_of) for key in start_keys]
    result = CausalWalk(direction, [v for v in start if v is not None], depth, as_of)
    frontier = {key: 1.0 for key in start_keys}
    visited = set(start_keys)
    seen_edges: set[str] = set()
    for level in range(1, depth + 1):
        reached: dict[str, float] = {}
        for key, path_confidence in sorted(frontier.items()):
            for edge in causal_edges(catalog, key, direction):
                relation = taxonomy_relation(edge.relation_type)
                if relation is None or (relation_types and relation not in relation_types) or edge.id in seen_edges:
                    continue
                if as_of is not None and edge.valid_from > as_of:
                    continue  # explained after the requested time
                other_id = edge.target_id if direction == "successors" else edge.source_id
                other = catalog.version(other_id)
                if other is None:
                    continue
                other_key = other.key
                stale = not _valid(catalog, key, as_of) or not _valid(catalog, other_key, as_of)
                if stale and not include_stale:
                    result.stale_excluded += 1
                    continue
                seen_edges.add(edge.id)
                confidence = path_confidence * edge.confidence
                result.hits.append(_hit(catalog, edge, relation, confidence, level, stale, as_of, evidence_check))
                if other_key not in visited:
                    reached[other_key] = max(reached.get(other_key, 0.0), confidence)
        visited.update(reached)
        frontier = reached
        if not frontier:
            break
    result.hits.sort(key=lambda h: (h.path_length, -h.path_confidence, h.citation))
    del result.hits[limit:]
    return result


def _hit(
    catalog: EntityCatalog,
    edge: RelationRecord,
    relation: str,
    path_confidence: float,
    level: int,
    stale: bool,
    as_of: str | None,
    evidence_check: EvidenceCheck,
) -> CausalHit:
    source = catalog.version(edge.source_id)
    target = catalog.version(edge.target_id)
    assert source is not None and target is not None  # edges only join versions the catalog holds
    return CausalHit(
        source=_display(catalog, source.key, as_of) or source,
        target=_display(catalog, target.key, as_of) or target,
        relation_type=relation,
        graph_relation_type=edge.relation_type,
        confidence=edge.confidence,
        path_confidence=path_confidence,
        method=edge.inference_method,
        citation=edge.citation,
        evidence=edge.evidence_citation,
        evidence_resolves=evidence_check(edge.evidence_session, edge.evidence_seq, edge.evidence_hash),
        path_length=level,
        stale=stale,
        valid_from=edge.valid_from,
        edge_id=edge.id,
        evidence_session=edge.evidence_session,
        evidence_seq=edge.evidence_seq,
        evidence_hash=edge.evidence_hash,
    )


def _valid(catalog: EntityCatalog, key: str, as_of: str | None) -> bool:
    return catalog.version_at(key, as_of) is not None


def _display(catalog: EntityCatalog, key: str, as_of: str | None) -> EntityVersion | None:
    """The version to show for an identity: valid at ``as_of``, else its latest one by then (stale endpoints)."""
    version = catalog.version_at(key, as_of)
    if version is not None:
        return version
    for candidate in reversed(catalog.history(key)):
        if as_of is None or candidate.valid_from <= as_of:
            return candidate
    return None


def _endpoint(version: EntityVersion) -> dict[str, Any]:
    return {
        "name": version.name,
        "entity_type": version.entity_type,
        "session": version.session,
        "citation": version.citation,
        "valid_to": version.valid_to,
    }
