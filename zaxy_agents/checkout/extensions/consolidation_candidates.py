"""Checkout extension ``consolidation_candidates``: review-state counts for the checkout's scope.

Candidates never enter the packet as memory; the block only tells the agent they exist and what state they
are in, and the guidance says they are cited summaries still requiring review.
"""

from __future__ import annotations

import weakref
from typing import Any

from zaxy_agents.consolidation.status import candidate_records, closed_acceptances, summarise
from zaxy_agents.projection.catalog import EntityCatalog

from .context import CheckoutContext

GUIDANCE = (
    "consolidation_candidates are cited summaries that still require review; accepted ones appear under reviewed "
    "consolidation labelled non-authoritative (never as current facts), pending or rejected ones never do."
)


MEMO_SIZE = 16
# (id(catalog), events projected, as_of, sessions) -> (catalog ref, counts): repeated checkouts of unchanged memory
# (several questions per turn, context_assemble) do not recount every candidate.
_MEMO: dict[tuple[Any, ...], tuple[weakref.ref[EntityCatalog], dict[str, Any]]] = {}


def consolidation_candidates(context: CheckoutContext) -> tuple[dict[str, Any], list[str]]:
    catalog = context.catalog
    sessions = sorted(context.scope if context.scope is not None else catalog.sessions)
    memo_key = (id(catalog), catalog.generation, context.as_of, tuple(sessions))
    cached = _MEMO.get(memo_key)
    if cached is not None and cached[0]() is catalog:
        counts = cached[1]
    else:
        records = candidate_records(catalog, sessions, context.as_of, context.evidence_resolves)
        counts = summarise(records, closed_acceptances(catalog, sessions, context.as_of))
        if len(_MEMO) >= MEMO_SIZE:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[memo_key] = (weakref.ref(catalog), counts)
    block = {**counts, "by_type": dict(counts["by_type"]), **seed_counts(counts)}
    block["accepted_in_packet"] = sum(1 for fact in context.facts if fact.review_status == "accepted")
    return block, [GUIDANCE] if counts["total"] else []


def seed_counts(counts: dict[str, Any]) -> dict[str, Any]:
    """The same counts under the seed's names (seed 003 checkout contract, seed 001 diagnostics)."""
    return {
        "candidate_count": counts["total"],
        "candidate_types": sorted(kind for kind, count in counts["by_type"].items() if count),
        "pending_count": counts["pending"],
        "accepted_count": counts["accepted"],
        "rejected_count": counts["rejected"],
        "conflicted_count": counts["conflicted"],
        "stale_count": counts["stale"],
        "superseded_count": counts["superseded"],
        "valid_to_count": counts["valid_to_closed"],
    }
