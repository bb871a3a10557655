"""Fabric operations for metacognition (seed 003 beta.2): reading known unknowns, confidence trajectories, conflict
clusters and re-verification needs, and recording confidence assessments (``claim_confidence``).

The ledgers' writes (known unknowns, re-verification requests) are :mod:`.uncertainty_ops`. Writes go through
the log service's ``append`` (payload contracts are checked before anything is written);
reads replay the projected catalog as of an instant. Nothing here changes what memory holds as current: every
record and every answer is labelled ``non_authoritative`` and cites its sources. See docs/cognitive.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zaxy_agents.errors import InvalidRequestError, ZaxyError
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.instants import parse_instant
from zaxy_agents.metacognition import context as metacognition_context  # noqa: F401 - registers the extension
from zaxy_agents.metacognition.contracts import (
    AUTHORITY_STATUS,
    CLAIM_KEY_MAX,
    CONFIDENCE_EVENT,
)
from zaxy_agents.metacognition.state import (
    WEAK_CONFIDENCE,
    claim_versions,
    conflict_cluster,
    conflict_clusters,
    derived_needs,
    known_unknowns,
    reverification_requests,
    trajectory,
)
from zaxy_agents.projection.model import normalise_name

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from .cognitive_ops import CognitiveService
    from .log_ops import LogService
    from .projection_ops import ProjectionService

STATUSES = ("open", "resolved", "all")
MAX_ITEMS = 200
DEFAULT_MAX_AGE_DAYS = 90


class ConfidenceService(FabricService):
    """Service: the metacognition reads and confidence assessments (never an authority change)."""

    def __init__(
        self, core: FabricCore, events: LogService, projection: ProjectionService, cognitive: CognitiveService
    ) -> None:
        super().__init__(core)
        self.events = events
        self.projection = projection
        self.cognitive = cognitive

    # ------------------------------------------------------------------ reads
    def known_unknowns(
        self,
        session: str,
        *,
        scope: list[str] | None = None,
        status: str = "open",
        as_of: str | None = None,
        limit: int = 50,
    ) -> dict[str, Any]:
        """Known unknowns of the session (and ``scope``), newest first: open ones by default."""
        sessions, as_of = self._metacognition_scope(session, scope, as_of)
        _choice("status", status, STATUSES)
        _limit(limit)
        items = known_unknowns(self.projection.projector.catalog, sessions, as_of)
        shown = [item for item in items if status == "all" or item.status == status]
        return {
            "session": session,
            "sessions": sessions,
            "as_of": as_of,
            "status": status,
            "open_count": sum(1 for item in items if item.status == "open"),
            "resolved_count": sum(1 for item in items if item.status == "resolved"),
            "count": len(shown),
            "items": [item.to_dict() for item in shown[:limit]],
            "authority_status": AUTHORITY_STATUS,
        }

    def confidence_trajectory(
        self, session: str, claim_key: str, *, scope: list[str] | None = None, as_of: str | None = None
    ) -> dict[str, Any]:
        """Every confidence assessment of ``claim_key``, oldest first (append-only points; none rewrites the
        claim), with the latest value and the direction it moved."""
        sessions, as_of = self._metacognition_scope(session, scope, as_of)
        _text("claim_key", claim_key, CLAIM_KEY_MAX)
        points = trajectory(self.projection.projector.catalog, sessions, claim_key, as_of)
        return {"claim_key": claim_key, "sessions": sessions, "as_of": as_of, **_trend(points)}

    def reverification_needs(
        self,
        session: str,
        *,
        scope: list[str] | None = None,
        as_of: str | None = None,
        max_age_days: int | None = DEFAULT_MAX_AGE_DAYS,
        include_resolved: bool = False,
        limit: int = 50,
    ) -> dict[str, Any]:
        """Explicit re-verification requests (open until resolved) and the current claims that need a re-check
        (evidence unresolvable, weak, contradicted or older than ``max_age_days``), with conflict clusters."""
        sessions, as_of = self._metacognition_scope(session, scope, as_of)
        _limit(limit)
        if max_age_days is not None and (
            isinstance(max_age_days, bool) or not isinstance(max_age_days, int) or not 1 <= max_age_days <= 36_500
        ):
            raise InvalidRequestError(
                "max_age_days must be an integer between 1 and 36500", field="max_age_days", remediation="Use 90."
            )
        catalog = self.projection.projector.catalog
        requests = reverification_requests(catalog, sessions, as_of)
        clusters = conflict_clusters(catalog, sessions, as_of)
        derived = derived_needs(
            catalog, sessions, as_of, self.cognitive.evidence_resolves, max_age_days=max_age_days, clusters=clusters
        )
        open_requests = [r for r in requests if r["status"] == "open"]
        return {
            "session": session,
            "sessions": sessions,
            "as_of": as_of,
            "max_age_days": max_age_days,
            "open_request_count": len(open_requests),
            "requests": (requests if include_resolved else open_requests)[:limit],
            "derived_count": len(derived),
            "derived": derived[:limit],
            "conflict_cluster_count": len(clusters),
            "conflict_clusters": clusters[:limit],
            "authority_status": AUTHORITY_STATUS,
        }

    def claim_confidence(
        self,
        session: str,
        claim_key: str,
        *,
        scope: list[str] | None = None,
        as_of: str | None = None,
        confidence: float | None = None,
        rationale: str | None = None,
        source_events: list[str | dict[str, Any]] | None = None,
        method: str = "agent_assessment",
        actor: str = "agent",
    ) -> dict[str, Any]:
        """How far memory backs ``claim_key``: its current versions and whether their evidence resolves, the
        latest assessed confidence and trajectory, open known unknowns and re-verification requests about it,
        and whether current claims contradict each other. With ``confidence`` (plus ``rationale`` and cited
        ``source_events``) an assessment point is appended first — it never changes the claim itself."""
        _text("claim_key", claim_key, CLAIM_KEY_MAX)
        recorded = None
        if confidence is not None:
            validate_session_id(session)
            if as_of is not None:
                raise InvalidRequestError(
                    "an assessment is recorded now: as_of cannot be combined with confidence",
                    field="as_of",
                    remediation="Drop as_of to record, or drop confidence to read the past.",
                )
            if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
                raise InvalidRequestError(
                    "confidence must be a number in [0, 1]", field="confidence", remediation="Use e.g. 0.4."
                )
            _text("rationale", rationale, 2000)
            _text("method", method, 120)
            payload = {
                "claim_key": claim_key,
                "confidence": float(confidence),
                "rationale": rationale,
                "source_events": self.cited_sources(source_events or [], session, required=True),
                "method": method,
                "authority_status": AUTHORITY_STATUS,
            }
            recorded = self.events.append(session, CONFIDENCE_EVENT, payload, actor=actor).citation
        elif rationale is not None or source_events:
            raise InvalidRequestError(
                "rationale and source_events describe an assessment: pass confidence too",
                field="confidence",
                remediation="Add confidence (0..1) to record an assessment, or drop rationale/source_events.",
            )
        sessions, as_of = self._metacognition_scope(session, scope, as_of)
        catalog = self.projection.projector.catalog
        wanted = normalise_name(claim_key)
        versions = claim_versions(catalog, sessions, claim_key, as_of)
        facts = [
            {
                "session": v.session,
                "content": v.summary,
                "citation": v.citation,
                "valid_from": v.valid_from,
                "resolves": self.cognitive.evidence_resolves(v.session, v.source_event_seq, v.source_event_hash),
            }
            for v in versions
        ]
        trend = _trend(trajectory(catalog, sessions, claim_key, as_of))
        unknowns = [
            item.to_dict()
            for item in known_unknowns(catalog, sessions, as_of)
            if item.status == "open" and normalise_name(item.claim_key or "") == wanted
        ]
        requests = [
            r
            for r in reverification_requests(catalog, sessions, as_of)
            if r["status"] == "open" and normalise_name(str(r["claim_key"])) == wanted
        ]
        cluster = conflict_cluster(versions) if len(versions) >= 2 else None
        reasons = _doubts(facts, trend["current_confidence"], unknowns, requests, cluster)
        return {
            "claim_key": claim_key,
            "sessions": sessions,
            "as_of": as_of,
            "current_facts": facts,
            "assessed_confidence": trend["current_confidence"],
            "trend": trend["trend"],
            "point_count": trend["point_count"],
            "open_known_unknowns": unknowns,
            "open_reverify_requests": requests,
            "conflict_cluster": cluster,
            "supported": bool(facts) and not reasons,
            "doubts": reasons,
            "recorded": recorded,
            "authority_status": AUTHORITY_STATUS,
        }

    # ------------------------------------------------------------------ internals
    def _metacognition_scope(
        self, session: str, scope: list[str] | None, as_of: str | None
    ) -> tuple[list[str], str | None]:
        validate_session_id(session)
        for index, name in enumerate(scope or []):
            validate_session_id(name, field=f"scope[{index}]")
        sessions = sorted(set(scope or []) | {session})
        as_of = parse_instant(as_of)
        self.projection.project(sessions)
        return sessions, as_of

    def cited_sources(
        self, sources: list[str | dict[str, Any]], session: str, *, required: bool, field: str = "source_events"
    ) -> list[dict[str, Any]]:
        """Cited sources -> the payload form ``{seq, hash, session?}``; each must resolve against the log."""
        name = field
        if not isinstance(sources, list) or (required and not sources):
            raise InvalidRequestError(
                "cite at least one source event" if required else f"{name} must be a list",
                field=name,
                remediation="Pass the eventloom:// citations (or {seq, hash}) of the events this is based on.",
            )
        events = []
        for index, item in enumerate(sources):
            field = f"{name}[{index}]"
            try:
                events.append(self.cognitive.resolve_source(item, field, session))
            except ZaxyError as exc:  # name the argument, not the log's internal field
                if exc.field is not None and exc.field.startswith(name):
                    raise
                raise type(exc)(
                    f"{field}: {exc.message}", field=field, remediation=exc.remediation, code=exc.code
                ) from None
        return [
            {"seq": e.seq, "hash": e.hash, **({"session": e.session} if e.session != session else {})} for e in events
        ]


def _trend(points: list[dict[str, Any]]) -> dict[str, Any]:
    if not points:
        trend, current = "unassessed", None
    else:
        current = points[-1]["confidence"]
        delta = current - points[0]["confidence"]
        trend = "single" if len(points) == 1 else ("rising" if delta > 0 else "falling" if delta < 0 else "flat")
    return {
        "points": points,
        "point_count": len(points),
        "current_confidence": current,
        "trend": trend,
        "authority_status": AUTHORITY_STATUS,
    }


def _doubts(
    facts: list[dict[str, Any]],
    confidence: float | None,
    unknowns: list[dict[str, Any]],
    requests: list[dict[str, Any]],
    cluster: dict[str, Any] | None,
) -> list[str]:
    reasons = []
    if not facts:
        reasons.append("no current fact in memory holds this claim")
    if any(not fact["resolves"] for fact in facts):
        reasons.append("a current fact's evidence no longer resolves")
    if confidence is not None and confidence < WEAK_CONFIDENCE:
        reasons.append(f"assessed confidence {confidence:.2f} is below {WEAK_CONFIDENCE}")
    if unknowns:
        reasons.append(f"{len(unknowns)} open known unknown(s) about it")
    if requests:
        reasons.append(f"{len(requests)} open re-verification request(s)")
    if cluster is not None:
        reasons.append("current claims in different sessions contradict each other")
    return reasons


def _text(field: str, value: object, limit: int) -> None:
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise InvalidRequestError(
            f"{field} must be a non-empty string of at most {limit} characters",
            field=field,
            remediation=f"Pass the {field.replace('_', ' ')}.",
        )


def _choice(field: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InvalidRequestError(
            f"unknown {field} {value!r}", field=field, remediation=f"Use one of {', '.join(choices)}."
        )


def _limit(limit: object) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= MAX_ITEMS:
        raise InvalidRequestError(
            f"limit must be an integer between 0 and {MAX_ITEMS}", field="limit", remediation="Use e.g. 50."
        )
