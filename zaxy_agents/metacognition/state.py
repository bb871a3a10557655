"""Metacognitive state read from the catalog: known unknowns, confidence trajectories, conflict clusters and
re-verification needs, each as of an instant, each cited and non-authoritative.

- *known unknowns*: the latest version of each ``known_unknown`` decides open / resolved;
- *confidence trajectory*: every version of a claim key's ``confidence_assessment``, in log order (append-only
  points; the last one is the current assessment, none rewrites the claim);
- *conflict clusters*: the same claim (entity type + name) held current in two or more sessions of the scope
  with different content — contradicting current claims, unresolved until one side is superseded or invalidated;
- *re-verification needs*: explicit open requests, plus current claims whose evidence no longer resolves
  (``unresolvable``), whose latest assessment is below :data:`WEAK_CONFIDENCE` (``weak``), which sit in a
  conflict cluster (``contradicted``) or whose evidence is older than ``max_age_days`` (``old``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from zaxy_agents.eventloom.citations import format_citation
from zaxy_agents.instants import format_instant
from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.model import entity_key, normalise_name
from zaxy_agents.projection.records import EntityVersion

from .contracts import (
    ASSESSMENT_ENTITY,
    AUTHORITY_STATUS,
    REQUEST_ENTITY,
    REVERIFY_REQUESTED_EVENT,
    UNKNOWN_ENTITY,
    UNKNOWN_RECORDED_EVENT,
    split_claim_key,
)

EvidenceCheck = Callable[[str, int, str], bool]
CLAIM_TYPES = ("fact", "decision", "claim")
WEAK_CONFIDENCE = 0.5
PRIORITY_ORDER = {"high": 0, "medium": 1, "low": 2}


def cite(source: dict[str, Any]) -> str:
    return format_citation(source["session"], source["seq"], source["hash"])


@lru_cache(maxsize=8192)
def _properties(properties_json: str) -> dict[str, Any]:
    """Parsed version properties, cached (versions are immutable; callers only read the result)."""
    return json.loads(properties_json) if properties_json else {}


def _visible(catalog: EntityCatalog, key: str, as_of: str | None) -> list[EntityVersion]:
    return [v for v in catalog.history(key) if as_of is None or v.valid_from <= as_of]


@dataclass
class KnownUnknown:
    unknown_id: str
    session: str
    question: str
    reason: str
    claim_key: str | None
    priority: str
    status: str
    source_events: list[str]
    citation: str
    recorded_at: str
    resolution: str | None = None
    rationale: str | None = None
    resolution_citation: str | None = None
    resolution_sources: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "unknown_id": self.unknown_id,
            "session": self.session,
            "question": self.question,
            "reason": self.reason,
            "claim_key": self.claim_key,
            "priority": self.priority,
            "status": self.status,
            "authority_status": AUTHORITY_STATUS,
            "source_events": self.source_events,
            "citation": self.citation,
            "recorded_at": self.recorded_at,
            "resolution": self.resolution,
            "rationale": self.rationale,
            "resolution_citation": self.resolution_citation,
            "resolution_sources": self.resolution_sources,
        }


def known_unknowns(catalog: EntityCatalog, sessions: Iterable[str], as_of: str | None) -> list[KnownUnknown]:
    """Every known unknown visible at ``as_of`` (open and resolved), newest first."""
    items: list[KnownUnknown] = []
    for session in sorted(sessions):
        for key in catalog.type_keys(session, UNKNOWN_ENTITY):
            versions = _visible(catalog, key, as_of)
            recorded = [v for v in versions if v.source_event_type == UNKNOWN_RECORDED_EVENT]
            if not recorded:
                continue  # a resolution of an id that was never recorded: nothing to show
            first, state = recorded[-1], versions[-1]
            created, current = _properties(first.properties_json), _properties(state.properties_json)
            resolved = current.get("status") == "resolved"
            items.append(
                KnownUnknown(
                    unknown_id=first.name,
                    session=session,
                    question=str(created.get("question", "")),
                    reason=str(created.get("reason", "")),
                    claim_key=created.get("claim_key"),
                    priority=str(created.get("priority", "medium")),
                    status="resolved" if resolved else "open",
                    source_events=[cite(s) for s in created.get("source_events", [])],
                    citation=first.citation,
                    recorded_at=first.valid_from,
                    resolution=current.get("resolution") if resolved else None,
                    rationale=current.get("rationale") if resolved else None,
                    resolution_citation=state.citation if resolved else None,
                    resolution_sources=[cite(s) for s in current.get("resolution_sources", [])] if resolved else [],
                )
            )
    items.sort(key=lambda item: item.recorded_at, reverse=True)
    return items


def trajectory(catalog: EntityCatalog, sessions: Iterable[str], claim_key: str, as_of: str | None) -> list[dict]:
    """Every confidence assessment of ``claim_key`` visible at ``as_of`` (the versions of its assessment entity in
    each session), oldest first."""
    points = []
    for session in sorted(sessions):
        for version in _visible(catalog, entity_key(session, ASSESSMENT_ENTITY, claim_key), as_of):
            data = _properties(version.properties_json)
            points.append(
                {
                    "claim_key": data["claim_key"],
                    "confidence": data["confidence"],
                    "rationale": data.get("rationale"),
                    "method": data.get("method"),
                    "source_events": [cite(s) for s in data.get("source_events", [])],
                    "citation": version.citation,
                    "assessed_at": version.valid_from,
                    "session": session,
                    "authority_status": AUTHORITY_STATUS,
                }
            )
    points.sort(key=lambda point: (point["assessed_at"], point["citation"]))
    return points


def _latest(latest: dict[str, tuple[str, float]], version: EntityVersion) -> None:
    data = _properties(version.properties_json)
    claim = normalise_name(str(data.get("claim_key", "")))
    if claim not in latest or latest[claim][0] <= version.valid_from:
        latest[claim] = (version.valid_from, float(data.get("confidence", 0.0)))


def assessed_claims(catalog: EntityCatalog, sessions: Iterable[str], as_of: str | None) -> dict[str, float]:
    """The latest assessed confidence of every assessed claim key (normalised key -> confidence)."""
    latest: dict[str, tuple[str, float]] = {}
    for session in sorted(sessions):
        for key in catalog.type_keys(session, ASSESSMENT_ENTITY):
            version = catalog.version_at(key, as_of)
            if version is not None:
                _latest(latest, version)
    return {claim: value for claim, (_, value) in latest.items()}


BATCHED_CURRENTS = 4  # holders from which one read of their current versions beats the (cached) reads one by one


def claim_versions(
    catalog: EntityCatalog, sessions: Iterable[str], claim_key: str, as_of: str | None
) -> list[EntityVersion]:
    """The current versions (one per session) of the entity ``claim_key`` names (``<entity_type>:<name>``)."""
    parts = split_claim_key(claim_key)
    if parts is None:
        return []
    entity_type, name = parts
    keys = [entity_key(session, entity_type, name) for session in _holding(catalog, sessions, entity_type, name)]
    if as_of is None and len(keys) >= BATCHED_CURRENTS:
        # a claim held in many sessions (at 1M, ~20 facts of a whole-memory checkout held in ~360 sessions): their
        # current versions in one read, where one identity at a time was two reads each (the same versions)
        currents = catalog.currents(keys)
        versions = [currents.get(key) for key in keys]
    else:
        versions = [catalog.version_at(key, as_of) for key in keys]
    return [version for version in versions if version is not None and version.asserted and not version.invalidated]


def _holding(catalog: EntityCatalog, sessions: Iterable[str], entity_type: str, name: str) -> list[str]:
    """The sessions of ``sessions`` (sorted) that hold the identity ``(entity_type, name)``, from the catalog's
    name lookup (one cached read) instead of one identity read per session: a whole memory has ~1,000 sessions
    and a checkout compares each of its facts across them. Identity keys are ``session, type, normalised name``
    and the lookup finds every key of that normalised name, so no session holding one is missed."""
    suffix = f"\x1f{entity_type}\x1f{normalise_name(name)}"
    holders = {key[: -len(suffix)] for key in catalog.keys_named(name) if key.endswith(suffix)}
    return sorted(holders.intersection(sessions))


def claim_key_of(version: EntityVersion) -> str:
    return f"{version.entity_type}:{normalise_name(version.name)}"


def conflict_cluster(versions: list[EntityVersion]) -> dict[str, Any] | None:
    """Current versions of one claim in several sessions that say different things -> an unresolved cluster."""
    if len({normalise_name(v.summary) for v in versions}) < 2:
        return None
    claim = claim_key_of(versions[0])
    return {
        "cluster_id": f"conflict:{claim}",
        "claim_key": claim,
        "status": "unresolved",
        "authority_status": AUTHORITY_STATUS,
        "members": [
            {"session": v.session, "content": v.summary, "citation": v.citation, "valid_from": v.valid_from}
            for v in versions
        ],
    }


def conflict_clusters(
    catalog: EntityCatalog, sessions: Iterable[str], as_of: str | None, names: Iterable[tuple[str, str]] | None = None
) -> list[dict[str, Any]]:
    """Contradicting current claims across ``sessions``; ``names`` ((entity_type, name) pairs) limits the scan
    to those claims (checkout passes its packet's facts), otherwise every claim-like entity is compared."""
    scope = sorted(sessions)
    if len(scope) < 2:
        return []
    if names is None:
        candidates: dict[tuple[str, str], str] = {}
        for session in scope:
            for entity_type in CLAIM_TYPES:
                for key in catalog.type_keys(session, entity_type):
                    version = catalog.version_at(key, as_of)
                    if version is not None:
                        candidates.setdefault((entity_type, normalise_name(version.name)), version.name)
        pairs = sorted(candidates)
    else:
        pairs = sorted({(entity_type, normalise_name(name)) for entity_type, name in names})
    clusters = []
    for entity_type, name in pairs:
        versions = claim_versions(catalog, scope, f"{entity_type}:{name}", as_of)
        cluster = conflict_cluster(versions) if len(versions) >= 2 else None
        if cluster is not None:
            clusters.append(cluster)
    return clusters


def reverification_requests(catalog: EntityCatalog, sessions: Iterable[str], as_of: str | None) -> list[dict]:
    """Every explicit re-verification request visible at ``as_of`` (open first, then by priority)."""
    items = []
    for session in sorted(sessions):
        for key in catalog.type_keys(session, REQUEST_ENTITY):
            versions = _visible(catalog, key, as_of)
            requested = [v for v in versions if v.source_event_type == REVERIFY_REQUESTED_EVENT]
            if not requested:
                continue
            first, state = requested[-1], versions[-1]
            created, current = _properties(first.properties_json), _properties(state.properties_json)
            resolved = current.get("status") == "resolved"
            items.append(
                {
                    "request_id": first.name,
                    "session": session,
                    "claim_key": created.get("claim_key"),
                    "reason": created.get("reason"),
                    "priority": created.get("priority", "medium"),
                    "status": "resolved" if resolved else "open",
                    "authority_status": AUTHORITY_STATUS,
                    "source_events": [cite(s) for s in created.get("source_events", [])],
                    "citation": first.citation,
                    "requested_at": first.valid_from,
                    "resolution": current.get("resolution") if resolved else None,
                    "resolution_citation": state.citation if resolved else None,
                }
            )
    items.sort(key=lambda item: (item["status"] != "open", PRIORITY_ORDER.get(item["priority"], 1)))
    return items


def derived_needs(
    catalog: EntityCatalog,
    sessions: Iterable[str],
    as_of: str | None,
    evidence_check: EvidenceCheck,
    *,
    max_age_days: int | None,
    clusters: list[dict[str, Any]],
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """Current claims that should be re-checked, each with its reasons (unresolvable, weak, contradicted, old)."""
    scope = sorted(sessions)
    weak = {claim for claim, value in assessed_claims(catalog, scope, as_of).items() if value < WEAK_CONFIDENCE}
    contradicted = {normalise_name(c["claim_key"]) for c in clusters}
    reference = datetime.fromisoformat(as_of) if as_of else (now or datetime.now(UTC))
    cutoff = format_instant(reference - timedelta(days=max_age_days)) if max_age_days is not None else None
    needs = []
    for session in scope:
        for entity_type in CLAIM_TYPES:
            for key in catalog.type_keys(session, entity_type):
                version = catalog.version_at(key, as_of)
                if version is None or not version.asserted or version.invalidated:
                    continue
                claim = claim_key_of(version)
                reasons = []
                if not evidence_check(version.session, version.source_event_seq, version.source_event_hash):
                    reasons.append("unresolvable")
                if claim in weak:
                    reasons.append("weak")
                if claim in contradicted:
                    reasons.append("contradicted")
                if cutoff is not None and version.valid_from < cutoff:
                    reasons.append("old")
                if reasons:
                    needs.append(
                        {
                            "claim_key": claim,
                            "session": session,
                            "content": version.summary,
                            "citation": version.citation,
                            "valid_from": version.valid_from,
                            "reasons": reasons,
                            "authority_status": AUTHORITY_STATUS,
                        }
                    )
    return needs


OPEN_STATE_TYPES = (UNKNOWN_ENTITY, ASSESSMENT_ENTITY, REQUEST_ENTITY)  # the entity types open_state reads


def open_state(catalog: EntityCatalog, sessions: Iterable[str], as_of: str | None, scan: int) -> dict[str, Any]:
    """What checkout needs, from the current versions of each type (one catalog query per session and type, the
    ``scan`` most recent versions): open known unknowns, the latest assessment of each assessed claim
    (``claim -> (assessed_at, confidence)``), open re-verification requests. See :func:`merge_open_states`."""
    unknowns: list[KnownUnknown] = []
    latest: dict[str, tuple[str, float]] = {}
    requests: list[dict[str, Any]] = []
    for session in sorted(sessions):
        for version in catalog.recent_versions(session, UNKNOWN_ENTITY, scan, as_of):
            data = _properties(version.properties_json)
            if data.get("status") == "open":
                unknowns.append(
                    KnownUnknown(
                        unknown_id=version.name,
                        session=session,
                        question=str(data.get("question", "")),
                        reason=str(data.get("reason", "")),
                        claim_key=data.get("claim_key"),
                        priority=str(data.get("priority", "medium")),
                        status="open",
                        source_events=[cite(s) for s in data.get("source_events", [])],
                        citation=version.citation,
                        recorded_at=version.valid_from,
                    )
                )
        for version in catalog.recent_versions(session, ASSESSMENT_ENTITY, scan, as_of):
            _latest(latest, version)
        for version in catalog.recent_versions(session, REQUEST_ENTITY, scan, as_of):
            data = _properties(version.properties_json)
            if data.get("status") == "open":
                requests.append(
                    {
                        "request_id": version.name,
                        "claim_key": data.get("claim_key"),
                        "reason": data.get("reason"),
                        "priority": data.get("priority", "medium"),
                        "citation": version.citation,
                    }
                )
    return {"unknowns": unknowns, "assessed": latest, "requests": requests}


def merge_open_states(states: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Per-session :func:`open_state` results as one scope: newest unknowns first, the latest assessment of each
    claim across sessions (``claim -> confidence``), requests by priority."""
    unknowns: list[KnownUnknown] = []
    latest: dict[str, tuple[str, float]] = {}
    requests: list[dict[str, Any]] = []
    for state in states:
        unknowns += state["unknowns"]
        requests += state["requests"]
        for claim, (moment, value) in state["assessed"].items():
            if claim not in latest or latest[claim][0] <= moment:
                latest[claim] = (moment, value)
    unknowns.sort(key=lambda item: item.recorded_at, reverse=True)
    requests.sort(key=lambda item: PRIORITY_ORDER.get(item["priority"], 1))
    return {"unknowns": unknowns, "assessed": {c: v for c, (_, v) in latest.items()}, "requests": requests}
