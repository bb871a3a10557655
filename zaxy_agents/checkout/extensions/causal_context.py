"""Checkout extension ``causal_context``: the causal edges touching what a checkout recalled.

Edges are gathered one hop in and out of every entity the packet mentions (retrieved entities, entities an
evidence event asserted, the endpoints an evidence explanation names, current facts). They are explanatory
memory, never state: the block says so, and weak or uncited edges are down-weighted in ``average_trust`` and
flagged.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.causal.contracts import CAUSAL_EDGE_EVENT, OUTCOME_EXPLAINED_EVENT
from zaxy_agents.causal.explanations import endpoint
from zaxy_agents.causal.taxonomy import AUTHORITY_STATUS, REVIEW_STATUS
from zaxy_agents.causal.traversal import CausalHit, causal_edges, walk
from zaxy_agents.projection.model import entity_key

from .context import CheckoutContext

GUIDANCE = "Use causal_context as explanatory memory, not as authoritative state."
WEAK_GUIDANCE = "Treat weak or uncited causal edges in causal_context as hypotheses to verify, not explanations."
EDGE_SAMPLE = 5


def causal_context(context: CheckoutContext) -> tuple[dict[str, Any], list[str]]:
    catalog = context.catalog
    keys = _mentioned_keys(context)
    hits: dict[str, CausalHit] = {}
    with_context: set[str] = set()
    stale_excluded = 0
    check = context.evidence_resolves
    for key in sorted(keys):
        for direction in ("successors", "predecessors"):
            if not causal_edges(catalog, key, direction):
                continue
            found = walk(catalog, [key], direction=direction, evidence_check=check, depth=1, as_of=context.as_of)
            stale_excluded += found.stale_excluded
            for hit in found.hits:
                if context.scope is None or hit.source.session in context.scope:
                    hits.setdefault(hit.edge_id, hit)
                    with_context.add(key)
    edges = sorted(hits.values(), key=lambda h: (-h.trust, h.citation))
    relation_types: dict[str, int] = {}
    methods: dict[str, int] = {}
    for hit in edges:
        relation_types[hit.relation_type] = relation_types.get(hit.relation_type, 0) + 1
        methods[hit.method] = methods.get(hit.method, 0) + 1
    weak = sum(1 for hit in edges if hit.weak)
    uncited = sum(1 for hit in edges if not hit.evidence_resolves)
    block = {
        "count": len(edges),
        # the seed's names (seed 000 task 7): packet entities with causal context, edges, graph relation labels
        "context_count": len(with_context),
        "edge_count": len(edges),
        "graph_relation_types": sorted({hit.graph_relation_type for hit in edges}),
        "relation_types": dict(sorted(relation_types.items())),
        "methods": dict(sorted(methods.items())),
        "average_trust": round(sum(h.trust for h in edges) / len(edges), 4) if edges else None,
        "non_authoritative": True,
        "authority_status": AUTHORITY_STATUS,
        "review_status": REVIEW_STATUS,
        "weak": weak,
        "uncited": uncited,
        "stale_excluded": stale_excluded,
        "edges": [
            {
                "source": hit.source.name,
                "relation_type": hit.relation_type,
                "target": hit.target.name,
                "confidence": hit.confidence,
                "trust": round(hit.trust, 4),
                "method": hit.method,
                "weak": hit.weak,
                "uncited": not hit.evidence_resolves,
                "citation": hit.citation,
                "evidence": hit.evidence,
            }
            for hit in edges[:EDGE_SAMPLE]
        ],
    }
    guidance = [GUIDANCE] if edges else []
    if weak or uncited:
        guidance.append(WEAK_GUIDANCE)
    return block, guidance


def _mentioned_keys(context: CheckoutContext) -> set[str]:
    catalog = context.catalog
    keys: set[str] = set()
    for hit in context.hits:
        if hit.entity is not None:
            keys.add(hit.entity.key)
        for version in catalog.event_versions(hit.session, hit.seq):
            keys.add(version.key)
        if hit.event_type in (OUTCOME_EXPLAINED_EVENT, CAUSAL_EDGE_EVENT):
            payload = context.log.get(hit.session, hit.seq).payload
            for field in ("cause", "effect", "source", "target"):
                point = endpoint(payload.get(field))
                if point is not None:
                    keys.add(entity_key(hit.session, point.entity_type, point.name))
    for fact in context.facts:
        fact_version = catalog.version(fact.id)
        if fact_version is not None:
            keys.add(fact_version.key)
    return {key for key in keys if catalog.has_key(key)}
