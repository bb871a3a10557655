"""Checkout extension ``consolidation_candidates``: review-state counts for the checkout's scope.

Candidates never enter the packet as memory; the block only tells the agent they exist and what state they
are in, and the guidance says they are cited summaries still requiring review.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.checkout.assemble import CheckoutContext, register_extension

from .status import candidate_records, closed_acceptances, summarise

GUIDANCE = (
    "consolidation_candidates are cited summaries that still require review; accepted ones appear in stable "
    "memory labelled non-authoritative, pending or rejected ones never do."
)


def consolidation_candidates(context: CheckoutContext) -> tuple[dict[str, Any], list[str]]:
    fabric = context.services.get("fabric")
    catalog = context.catalog
    sessions = sorted(context.scope if context.scope is not None else catalog.sessions)
    check = fabric.evidence_resolves if fabric is not None else (lambda _s, _q, _h: False)
    records = candidate_records(catalog, sessions, context.as_of, check)
    block = summarise(records, closed_acceptances(catalog, sessions, context.as_of))
    block["accepted_in_packet"] = sum(1 for fact in context.facts if fact.review_status == "accepted")
    return block, [GUIDANCE] if records else []


register_extension("consolidation_candidates", consolidation_candidates)
