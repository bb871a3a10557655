"""Belief-update proposals read from the catalog: each proposal's claim, citations and latest disposition."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from zaxy_agents.eventloom.citations import format_citation
from zaxy_agents.projection.catalog import EntityCatalog

from .contracts import AUTHORITY_STATUS, DISPOSITIONS, PROPOSAL_ENTITY, PROPOSED_EVENT

EvidenceCheck = Callable[[str, int, str], bool]
STATUSES = ("pending", *DISPOSITIONS)


@lru_cache(maxsize=8192)
def _properties(properties_json: str) -> dict[str, Any]:
    return json.loads(properties_json) if properties_json else {}


def _cite(source: dict[str, Any]) -> str:
    return format_citation(source["session"], source["seq"], source["hash"])


def proposals(
    catalog: EntityCatalog, sessions: Iterable[str], as_of: str | None, evidence_check: EvidenceCheck
) -> list[dict[str, Any]]:
    """Every proposal visible at ``as_of`` in ``sessions``, newest first, with its latest disposition."""
    items = []
    for session in sorted(sessions):
        for key in catalog.type_keys(session, PROPOSAL_ENTITY):
            versions = [v for v in catalog.history(key) if as_of is None or v.valid_from <= as_of]
            created = [v for v in versions if v.source_event_type == PROPOSED_EVENT]
            if not created:
                continue
            first, state = created[-1], versions[-1]
            data, current = _properties(first.properties_json), _properties(state.properties_json)
            reviewed = state.source_event_type != PROPOSED_EVENT
            citations = [c for c in data.get("citations", []) if isinstance(c, dict)]
            items.append(
                {
                    "proposal_id": first.name,
                    "session": session,
                    "claim": data.get("claim"),
                    "rationale": data.get("rationale"),
                    "confidence": data.get("confidence"),
                    "phase": data.get("phase"),
                    "claim_key": data.get("claim_key"),
                    "citations": [_cite(c) for c in citations],
                    "citations_resolve": all(evidence_check(c["session"], c["seq"], c["hash"]) for c in citations),
                    "review_status": str(current.get("review_status", "pending")) if reviewed else "pending",
                    "review_rationale": current.get("rationale") if reviewed else None,
                    "review_citation": state.citation if reviewed else None,
                    "authority_status": AUTHORITY_STATUS,
                    "citation": first.citation,
                    "proposed_at": first.valid_from,
                }
            )
    items.sort(key=lambda item: item["proposed_at"], reverse=True)
    return items


def counts(items: list[dict[str, Any]]) -> dict[str, Any]:
    """The seed's ``proposal_count``, ``pending_count`` and ``authority_status`` (+ one count per disposition)."""
    by_status = {status: sum(1 for item in items if item["review_status"] == status) for status in STATUSES}
    return {
        "proposal_count": len(items),
        "pending_count": by_status["pending"] + by_status["deferred"],
        **{f"{status}_count": count for status, count in by_status.items() if status != "pending"},
        "authority_status": AUTHORITY_STATUS,
    }
