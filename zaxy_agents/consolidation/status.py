"""Consolidation state read from the catalog: every candidate's disposition, staleness and supersession.

- *pending*: never reviewed, or deferred (``deferred`` is also counted on its own);
- *accepted*, *rejected*, *conflicted*: the latest review's disposition at ``as_of``;
- *stale*: a cited source event no longer resolves against the log, or something it asserted has since been
  invalidated (the summary describes a state that is no longer true);
- *superseded*: a newer candidate of the same type and title exists;
- *valid_to_closed*: accepted memories whose validity window has been closed (revoked by a later review,
  superseded by a newer acceptance, or invalidated).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from zaxy_agents.eventloom.citations import format_citation
from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.model import normalise_name
from zaxy_agents.projection.records import EntityVersion
from zaxy_agents.projection.session_memo import SessionMemo

from .contracts import AUTHORITY_STATUS, CANDIDATE_ENTITY, CANDIDATE_EVENT, CANDIDATE_TYPES

EvidenceCheck = Callable[[str, int, str], bool]
DISPOSITIONS = ("pending", "accepted", "rejected", "conflicted")


@dataclass
class CandidateRecord:
    candidate_id: str
    session: str
    candidate_type: str
    title: str
    summary: str
    review_status: str
    confidence: float
    method: str
    purpose: str
    segment_id: str | None
    source_events: list[dict[str, Any]]
    citation: str
    review_citation: str | None = None
    rationale: str | None = None
    stale_reasons: list[str] = field(default_factory=list)
    superseded_by: str | None = None
    created_seq: int = 0

    @property
    def stale(self) -> bool:
        return bool(self.stale_reasons)

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidate_id": self.candidate_id,
            "session": self.session,
            "candidate_type": self.candidate_type,
            "title": self.title,
            "summary": self.summary,
            "review_status": self.review_status,
            "authority_status": AUTHORITY_STATUS,
            "confidence": self.confidence,
            "method": self.method,
            "purpose": self.purpose,
            "segment_id": self.segment_id,
            "source_events": [format_citation(s["session"], s["seq"], s["hash"]) for s in self.source_events],
            "citation": self.citation,
            "review_citation": self.review_citation,
            "rationale": self.rationale,
            "stale": self.stale,
            "stale_reasons": self.stale_reasons,
            "superseded_by": self.superseded_by,
        }


# a session's candidate identities, re-read only when the session changed (its catalog epoch): a whole-memory
# checkout lists the candidates of every session
_CANDIDATE_KEYS: SessionMemo[list[str]] = SessionMemo()


def candidate_records(
    catalog: EntityCatalog, sessions: Iterable[str], as_of: str | None, evidence_check: EvidenceCheck
) -> list[CandidateRecord]:
    """Every candidate visible at ``as_of`` in ``sessions``, in creation order per session."""
    records: list[CandidateRecord] = []
    scope = sorted(sessions)
    listed = _CANDIDATE_KEYS.many(
        catalog, scope, lambda session: catalog.type_keys(session, CANDIDATE_ENTITY), types=(CANDIDATE_ENTITY,)
    )
    for keys in listed:
        if not keys:
            continue
        latest: dict[tuple[str, str], CandidateRecord] = {}
        session_records = []
        for key in keys:
            record = _record(catalog, key, as_of, evidence_check)
            if record is not None:
                session_records.append(record)
        session_records.sort(key=lambda r: r.created_seq)
        for record in session_records:
            topic = (record.candidate_type, normalise_name(record.title))
            previous = latest.get(topic)
            if previous is not None:
                previous.superseded_by = record.candidate_id
            latest[topic] = record
        records += session_records
    return records


def closed_acceptances(catalog: EntityCatalog, sessions: Iterable[str], as_of: str | None) -> int:
    """Accepted memories whose validity window is closed at ``as_of``."""
    if as_of is None:  # each session's count kept until the session changes (its catalog epoch)
        found = _CLOSED.many(
            catalog, sessions, lambda session: _closed_in(catalog, session, None), types=CANDIDATE_TYPES
        )
        return sum(found)
    return sum(_closed_in(catalog, session, as_of) for session in sessions)


_CLOSED: SessionMemo[int] = SessionMemo()


def _closed_in(catalog: EntityCatalog, session: str, as_of: str | None) -> int:
    closed = 0
    for candidate_type in CANDIDATE_TYPES:
        for key in catalog.type_keys(session, candidate_type):
            for version in catalog.history(key):
                if version.valid_to is None or "candidate_id" not in _properties(version.properties_json):
                    continue
                if as_of is None or version.valid_to <= as_of:
                    closed += 1
    return closed


def summarise(records: list[CandidateRecord], closed: int) -> dict[str, Any]:
    """The counts ``consolidation_status`` and the checkout's ``consolidation_candidates`` block report."""
    counts = {name: 0 for name in DISPOSITIONS}
    by_type = {name: 0 for name in CANDIDATE_TYPES}
    deferred = 0
    for record in records:
        status = "pending" if record.review_status == "deferred" else record.review_status
        counts[status] = counts.get(status, 0) + 1
        deferred += record.review_status == "deferred"
        by_type[record.candidate_type] = by_type.get(record.candidate_type, 0) + 1
    return {
        "total": len(records),
        **counts,
        "deferred": deferred,
        "stale": sum(1 for r in records if r.stale),
        "superseded": sum(1 for r in records if r.superseded_by is not None),
        "valid_to_closed": closed,
        "by_type": by_type,
        "authority_status": AUTHORITY_STATUS,
    }


def _record(
    catalog: EntityCatalog, key: str, as_of: str | None, evidence_check: EvidenceCheck
) -> CandidateRecord | None:
    versions = catalog.history(key)
    visible = [v for v in versions if as_of is None or v.valid_from <= as_of]
    creation = next((v for v in visible if v.source_event_type == CANDIDATE_EVENT), None)
    state = catalog.version_at(key, as_of)
    if creation is None or state is None:
        return None
    created = _properties(creation.properties_json)
    current = _properties(state.properties_json)
    reviewed = state.source_event_type != CANDIDATE_EVENT
    sources = [s for s in created.get("source_events", []) if isinstance(s, dict)]
    record = CandidateRecord(
        candidate_id=creation.name,
        session=creation.session,
        candidate_type=str(created.get("candidate_type")),
        title=str(created.get("title")),
        summary=str(created.get("summary", "")),
        review_status=str(current.get("review_status", "pending")),
        confidence=float(created.get("confidence", 0.0)),
        method=str(created.get("method", "")),
        purpose=str(created.get("purpose", "")),
        segment_id=created.get("segment_id"),
        source_events=sources,
        citation=creation.citation,
        review_citation=state.citation if reviewed else None,
        rationale=current.get("rationale") if reviewed else None,
        created_seq=creation.source_event_seq,
    )
    record.stale_reasons = _stale_reasons(catalog, sources, as_of, evidence_check)
    return record


def _stale_reasons(
    catalog: EntityCatalog, sources: list[dict[str, Any]], as_of: str | None, evidence_check: EvidenceCheck
) -> list[str]:
    reasons = []
    for source in sources:
        session, seq, digest = source.get("session"), source.get("seq"), source.get("hash")
        if not isinstance(session, str) or not isinstance(seq, int) or not isinstance(digest, str):
            reasons.append("a source citation is malformed")
            continue
        if not evidence_check(session, seq, digest):
            reasons.append(f"{format_citation(session, seq, digest)} no longer resolves")
            continue
        for version in catalog.event_versions(session, seq):
            if _invalidated(version, as_of):
                reasons.append(f"{version.entity_type} {version.name!r} from {version.citation} was invalidated")
    return reasons


@lru_cache(maxsize=8192)
def _properties(properties_json: str) -> dict[str, Any]:
    """Parsed version properties, cached (versions are immutable; callers only read the result)."""
    return json.loads(properties_json) if properties_json else {}


def _invalidated(version: EntityVersion, as_of: str | None) -> bool:
    return version.invalidated and version.valid_to is not None and (as_of is None or version.valid_to <= as_of)
