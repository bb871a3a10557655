"""Building candidate and review payloads that satisfy the contracts (validated here, before any append)."""

from __future__ import annotations

from typing import Any

from zaxy_agents.eventloom.models import Event
from zaxy_agents.projection.contracts import validate_payload

from .contracts import (
    AUTHORITY_STATUS,
    CANDIDATE_EVENT,
    REVIEW_EVENT,
    CandidatePayload,
    WrittenReviewPayload,
    candidate_id,
)


def source_citations(sources: list[Event]) -> list[dict[str, Any]]:
    """Sorted, de-duplicated ``{seq, hash, session}`` citations (explicit sessions keep ids stable)."""
    unique = {(event.session, event.seq): event for event in sources}
    return [{"seq": e.seq, "hash": e.hash, "session": e.session} for _, e in sorted(unique.items())]


def candidate_payload(
    *,
    candidate_type: str,
    title: str,
    summary: str,
    sources: list[Event],
    confidence: float,
    method: str,
    purpose: str,
    segment_id: str | None = None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    citations = source_citations(sources)
    title, summary = " ".join(str(title).split()), str(summary).strip()
    payload: dict[str, Any] = {
        "candidate_id": candidate_id(str(candidate_type), title, citations),
        "candidate_type": candidate_type,
        "title": title,
        "summary": summary,
        "source_events": citations,
        "confidence": confidence,
        "method": method,
        "purpose": purpose,
        "review_status": "pending",
        "authority_status": AUTHORITY_STATUS,
        **({"segment_id": segment_id} if segment_id else {}),
        "details": details or {},
    }
    validate_payload(CandidatePayload, CANDIDATE_EVENT, payload)
    return payload


def review_payload(
    *,
    candidate: Event,
    decision: str,
    rationale: str,
    reviewer: str | None,
    revokes_acceptance: bool,
    conflicts_with: list[Event],
) -> dict[str, Any]:
    created = candidate.payload
    payload: dict[str, Any] = {
        "candidate_id": created["candidate_id"],
        "candidate": {"seq": candidate.seq, "hash": candidate.hash, "session": candidate.session},
        "candidate_type": created["candidate_type"],
        "title": created["title"],
        "summary": created["summary"],
        "source_events": created["source_events"],
        "status": decision,
        "rationale": rationale.strip(),
        **({"reviewer": reviewer} if reviewer else {}),
        "authority_status": AUTHORITY_STATUS,
        "revokes_acceptance": revokes_acceptance,
        "conflicts_with": source_citations(conflicts_with),
    }
    validate_payload(WrittenReviewPayload, REVIEW_EVENT, payload)
    return payload
