"""What a Memory Checkout tells the agent besides memory: the inferred-edge diagnostics, the bootstrap verdict,
the guidance (what to trust, what to ignore, feedback payloads, the follow-up checkout) and its prompt lines.

Why a module of its own: these are the packet's advice, built from its facts and verdict; the packing only decides
how many of these lines fit (:func:`.packing.fit`).
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.retrieval.engine import RetrievalHit

from .models import (
    FactItem,
    FeedbackGuidance,
    Guidance,
    Quality,
    RequiredAction,
)

# the follow-up checkout a bootstrap packet (no question yet) recommends (seed 003's CLI example)
LOW_TRUST = 0.5  # an inferred edge below this trust gets a guidance line
FOLLOW_UP_QUERY = "current task, project direction, and recent decisions"
FOLLOW_UP_REASON = "Refresh memory before major follow-up work, after compaction/resume, or when task scope changes."


def inferred_context(catalog: EntityCatalog, hits: list[RetrievalHit]) -> dict[str, Any]:
    """Seed 002's ``inferred_context``: the inferred edges around the retrieved entities and how far to trust them.

    An edge's trust is its confidence scaled by its coverage: the share of a named (not ``unknown``) inference
    method, Eventloom provenance of the edge (source event seq and hash) and cited evidence (seq and hash) it has
    (trust = confidence x (0.5 + 0.5 x coverage)). Diagnostics only: ranking does not use it.
    """
    edges = {}
    contexts = 0
    for hit in hits:
        if hit.entity is None:
            continue
        near = [e for e in (*catalog.out_edges(hit.entity.key), *catalog.in_edges(hit.entity.key)) if e.inferred]
        contexts += bool(near)
        edges.update((edge.id, edge) for edge in near)
    coverage = {key: _edge_coverage(edge) for key, edge in edges.items()}
    trust = {key: edge.confidence * (0.5 + 0.5 * coverage[key]) for key, edge in edges.items()}
    mean = lambda values: round(sum(values) / len(values), 4) if values else None  # noqa: E731
    return {
        "count": len(edges),
        "context_count": contexts,
        "edge_count": len(edges),
        "relation_labels": sorted({edge.relation_type for edge in edges.values()}),
        "methods": sorted({edge.inference_method for edge in edges.values()}),
        "average_confidence": mean([edge.confidence for edge in edges.values()]),
        "average_trust": mean(list(trust.values())),
        "average_coverage": mean(list(coverage.values())),
        "uncited": sum(1 for edge in edges.values() if not (edge.evidence_seq and edge.evidence_hash)),
        "low_trust": sum(1 for value in trust.values() if value < LOW_TRUST),
    }


def _edge_coverage(edge: Any) -> float:
    factors = (
        bool(edge.inference_method) and edge.inference_method != "unknown",
        bool(edge.source_event_seq and edge.source_event_hash),
        bool(edge.evidence_seq and edge.evidence_hash),
    )
    return sum(factors) / len(factors)


def bootstrap_quality(has_state: bool, held: bool, warnings: list[str]) -> Quality:
    """``has_state``: the prompt shows cited session state; ``held``: memory holds some (the budget may have
    left it all out)."""
    if held and not has_state:
        return Quality(
            answerability="refresh_recommended",
            confidence=0.2,
            reasons=["bootstrap: session state exists but max_tokens left all of it out"],
            required_action=RequiredAction(
                tool="memory_bootstrap", query="", reason="raise max_tokens: the budget left all session state out"
            ),
        )
    if has_state and not warnings:
        return Quality(
            answerability="answer_from_memory", confidence=0.7, reasons=["bootstrap: cited session state is available"]
        )
    if has_state:
        return Quality(
            answerability="refresh_recommended",
            confidence=0.4,
            reasons=["bootstrap: session state available but the packet carries warnings"],
        )
    return Quality(answerability="ask_user", confidence=0.1, reasons=["bootstrap: no memory for this scope yet"])


def build_guidance(facts: list[FactItem], session: str | None, extra: list[str], query: str) -> Guidance:
    payloads = [  # valid memory_feedback arguments, in the seed's names
        {
            "entity_name": fact.name,
            "entity_type": fact.entity_type,
            "feedback": "used",
            "actor": "assistant",
            "citation": fact.citation,
            "session_id": session or fact.session,
        }
        for fact in facts[:5]
        if fact.citation
    ]
    return Guidance(
        trust=[
            "Trust current facts and evidence that carry an eventloom:// citation; cite them in your answer.",
            "Prefer tier-1 stable memory for standing decisions, and newer evidence over older evidence.",
            *extra,
        ],
        ignore=[
            "Ignore anything superseded or invalidated: it is excluded here on purpose.",
            "Do not treat missing evidence as a negative answer; follow quality.required_action instead.",
        ],
        feedback=FeedbackGuidance(payloads=payloads),
        recommended_checkout={  # seed 003: the follow-up checkout (with the reason of the seed's example)
            "tool": "memory_checkout",
            "arguments": {"query": query or FOLLOW_UP_QUERY, **({"session_id": session} if session else {})},
            "reason": FOLLOW_UP_REASON,
        },
    )


def render_guidance(quality: Quality, guidance: Guidance) -> list[str]:
    lines = [f"- answerability: {quality.answerability} (confidence {quality.confidence:.2f})"]
    if quality.required_action is not None:
        action = quality.required_action
        lines.append(f"- next: {action.tool}({action.query!r}) because {action.reason}")
    if quality.missing_slots:
        lines.append(f"- missing: {', '.join(quality.missing_slots)}")
    lines += [f"- {line}" for line in guidance.trust[:2] + guidance.ignore[:1] + guidance.trust[2:]]
    return lines
