"""Fabric operations for review-gated consolidation and procedure mining, and the evidence checks they share.

Everything here writes through :meth:`append` / :meth:`append_many` (payload contracts are checked before
anything is written) and reads from the in-memory catalog (no graph wait), as of a time when asked. Nothing
here can make memory authoritative: candidates are ``pending`` until reviewed, and
accepted candidates stay ``non_authoritative``. See docs/cognitive.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zaxy_agents.consolidation.candidates import candidate_payload, review_payload
from zaxy_agents.consolidation.contracts import (
    CANDIDATE_ENTITY,
    CANDIDATE_EVENT,
    REVIEW_DECISIONS,
    REVIEW_EVENT,
)
from zaxy_agents.consolidation.proposals import LOG_SEGMENT_METHOD, Proposal, procedure_title, propose, select_segments
from zaxy_agents.consolidation.status import CandidateRecord, candidate_records, closed_acceptances, summarise
from zaxy_agents.errors import ConflictError, InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.models import Event
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.instants import parse_instant
from zaxy_agents.procedures.mining import MAX_LENGTH, mine
from zaxy_agents.projection.model import entity_key

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from .log_ops import LogService
    from .projection_ops import ProjectionService

    pass

MINING_METHOD = "procedure_mining_v1"
DEFAULT_PROCEDURE_SESSION = "procedures"
MAX_STATUS_ITEMS = 200


class CognitiveService(FabricService):
    """Service: consolidation candidates and reviews, procedure mining, evidence checks (also for the causal,
    confidence, belief and procedure services)."""

    def __init__(self, core: FabricCore, events: LogService, projection: ProjectionService) -> None:
        super().__init__(core)
        self.events = events
        self.projection = projection

    # ------------------------------------------------------------------ evidence
    def evidence_resolves(self, session: str, seq: int, digest: str) -> bool:
        """True when ``session``/``seq`` exists with exactly hash ``digest`` (positive answers are cached: the
        log is append-only, so an event that resolved once keeps resolving)."""
        return self.evidence_check(session, seq, digest)

    # ------------------------------------------------------------------ consolidation
    def consolidation_candidate(
        self,
        session: str,
        *,
        candidate_type: str,
        title: str,
        summary: str,
        source_events: list[str | dict[str, Any]],
        confidence: float,
        method: str = "manual",
        purpose: str = "general",
        details: dict[str, Any] | None = None,
        actor: str = "agent",
    ) -> dict[str, Any]:
        """Propose one cited summary for review (idempotent: the same type, title and sources -> same id)."""
        validate_session_id(session)
        if not isinstance(source_events, list) or not source_events:
            raise InvalidRequestError(
                "a candidate must cite at least one source event",
                field="source_events",
                remediation="Pass the eventloom:// citations of the events the summary is based on.",
            )
        sources = [self.resolve_source(item, f"source_events[{i}]", session) for i, item in enumerate(source_events)]
        payload = candidate_payload(
            candidate_type=candidate_type,
            title=title,
            summary=summary,
            sources=sources,
            confidence=confidence,
            method=method,
            purpose=purpose,
            details=details,
        )
        created = self._append_candidates(session, [payload], actor)
        return self._candidate_result(session, payload["candidate_id"], created=bool(created))

    def consolidation_propose_from_log(
        self,
        session: str,
        *,
        window_size: int = 8,
        purpose: str = "general",
        max_events: int = 500,
        dry_run: bool = False,
        actor: str = "zaxy-consolidation",
        limit: int | None = None,
    ) -> dict[str, Any]:
        """Deterministic episode/claim/procedure proposals from the session's recent actionable events (at most
        ``limit`` candidates, oldest segments first). Reports the seed's ``session_id``, ``segment_count``,
        ``candidate_count`` and ``events`` (the appended candidate events) with the segments and proposals."""
        validate_session_id(session)
        _check_range("window_size", window_size, 2, 100)
        _check_range("max_events", max_events, 1, 100_000)
        if limit is not None:
            _check_range("limit", limit, 1, 200)
        head = self.log.head(session)
        if head is None:
            raise NotFoundError(
                f"session {session!r} has no events", field="session", remediation="List sessions with `zaxy sessions`."
            )
        from_seq = max(1, head.seq - max_events + 1)
        events = list(self.log.replay(session, from_seq, head.seq))
        from_start = from_seq == 1 or self.log.get(session, from_seq - 1).type == "task.completed"
        selection = select_segments(events, window_size=window_size, from_start=from_start)
        payloads = []
        for segment in selection.segments:
            for proposal in propose(segment):
                payloads.append(_proposal_payload(proposal, LOG_SEGMENT_METHOD, purpose))
        created = [] if dry_run else self._append_candidates(session, payloads, actor, limit)
        created_ids = {event.payload["candidate_id"] for event in created}
        return {
            "session_id": session,
            "segment_count": len(selection.segments),
            "candidate_count": len(created),
            "events": [{"event_type": e.type, "seq": e.seq, "hash": e.hash, "citation": e.citation} for e in created],
            "session": session,
            "window_size": window_size,
            "scanned_from_seq": from_seq,
            "scanned_to_seq": head.seq,
            "segments": [segment.to_dict() for segment in selection.segments],
            "skipped_truncated": selection.skipped_truncated,
            "open_events": selection.open_events,
            "dry_run": dry_run,
            "proposals": [_proposal_summary(p, created_ids) for p in payloads],
            "created": len(created_ids),
        }

    def consolidation_review(
        self,
        session: str,
        candidate_id: str,
        *,
        decision: str,
        rationale: str,
        reviewer: str | None = None,
        conflicts_with: list[str] | None = None,
        actor: str = "reviewer",
    ) -> dict[str, Any]:
        """Record a disposition (accepted, rejected, deferred, conflicted). Never an authority promotion: an
        accepted candidate becomes stable memory labelled non-authoritative."""
        validate_session_id(session)
        if decision not in REVIEW_DECISIONS:
            raise InvalidRequestError(
                f"unknown review decision {decision!r}",
                field="decision",
                remediation=f"Use one of {', '.join(REVIEW_DECISIONS)}.",
            )
        if not isinstance(rationale, str) or not rationale.strip():
            raise InvalidRequestError(
                "a review needs a rationale", field="rationale", remediation="Say why you decided this."
            )
        record = self._candidate_record(session, candidate_id)
        if decision == "accepted":
            if record.review_status == "accepted":
                raise ConflictError(
                    f"candidate {candidate_id} is already accepted",
                    field="candidate_id",
                    remediation="Nothing to do; review it as rejected or conflicted to revoke the acceptance.",
                )
            if record.stale:
                raise ConflictError(
                    f"candidate {candidate_id} is stale: {record.stale_reasons[0]}",
                    field="candidate_id",
                    remediation="Reject it and propose a fresh candidate from current memory.",
                )
            if record.superseded_by is not None:
                raise ConflictError(
                    f"candidate {candidate_id} is superseded by {record.superseded_by}",
                    field="candidate_id",
                    remediation=f"Review {record.superseded_by} instead.",
                )
        conflicts = [
            self.resolve_source(c, f"conflicts_with[{i}]", session) for i, c in enumerate(conflicts_with or [])
        ]
        creation = self.log.resolve(record.citation)
        payload = review_payload(
            candidate=creation,
            decision=decision,
            rationale=rationale,
            reviewer=reviewer,
            revokes_acceptance=record.review_status == "accepted" and decision != "accepted",
            conflicts_with=conflicts,
        )
        event = self.events.append(session, REVIEW_EVENT, payload, actor=actor)
        return {
            "candidate_id": candidate_id,
            "status": decision,
            "citation": event.citation,
            "revoked_acceptance": payload["revokes_acceptance"],
            "authority_status": "non_authoritative",
            "candidate": self._candidate_record(session, candidate_id).to_dict(),
        }

    def consolidation_status(
        self,
        session: str | None = None,
        *,
        as_of: str | None = None,
        include_candidates: bool = True,
        limit: int = 50,
    ) -> dict[str, Any]:
        """Pending, accepted, rejected, conflicted, stale, superseded and valid_to-closed counts (and the
        candidates themselves, newest first, up to ``limit``)."""
        if session is not None:
            validate_session_id(session)
        _check_range("limit", limit, 0, MAX_STATUS_ITEMS)
        as_of = parse_instant(as_of)
        self.projection.project([session] if session is not None else None)
        catalog = self.projection.projector.catalog
        sessions = [session] if session is not None else sorted(catalog.sessions)
        records = candidate_records(catalog, sessions, as_of, self.evidence_resolves)
        status: dict[str, Any] = {"sessions": sessions, "as_of": as_of}
        status.update(summarise(records, closed_acceptances(catalog, sessions, as_of)))
        if include_candidates:
            status["candidates"] = [r.to_dict() for r in sorted(records, key=lambda r: -r.created_seq)[:limit]]
        return status

    def mine_procedures(
        self,
        *,
        min_support: int = 2,
        sessions: list[str] | None = None,
        into: str = DEFAULT_PROCEDURE_SESSION,
        max_length: int = MAX_LENGTH,
        max_candidates: int = 20,
        max_events_per_session: int = 5000,
        purpose: str = "procedure_mining",
        dry_run: bool = False,
        actor: str = "zaxy.procedures",
    ) -> dict[str, Any]:
        """Successful step sequences recurring in at least ``min_support`` sessions -> procedure candidates
        (review pending) in session ``into``, each citing one trace per session."""
        validate_session_id(into, field="into")
        _check_range("min_support", min_support, 2, 10_000)
        _check_range("max_length", max_length, 2, 12)
        _check_range("max_candidates", max_candidates, 1, 200)
        names = sorted(sessions) if sessions is not None else sorted(s.session for s in self.log.sessions())
        traces: dict[str, list[Event]] = {}
        for index, name in enumerate(names):
            validate_session_id(name, field=f"sessions[{index}]")
            head = self.log.head(name)
            if head is not None and name != into:
                traces[name] = list(self.log.replay(name, max(1, head.seq - max_events_per_session + 1)))
        mined = mine(traces, min_support=min_support, max_length=max_length, limit=max_candidates)
        payloads = [
            _proposal_payload(
                Proposal(
                    "procedure",
                    procedure_title(procedure.steps),
                    _mined_summary(procedure.steps, procedure.sessions),
                    [event for name in procedure.sessions[:10] for event in procedure.occurrences[name]],
                    round(min(0.9, 0.4 + 0.1 * procedure.support), 3),
                    details={
                        "steps": list(procedure.steps),
                        "support": procedure.support,
                        "sessions": procedure.sessions,
                    },
                ),
                MINING_METHOD,
                purpose,
            )
            for procedure in mined
        ]
        created = [] if dry_run else self._append_candidates(into, payloads, actor)
        created_ids = {event.payload["candidate_id"] for event in created}
        return {
            "into": into,
            "min_support": min_support,
            "sessions_scanned": len(traces),
            "dry_run": dry_run,
            "procedures": [
                {
                    **_proposal_summary(p, created_ids),
                    "steps": p["details"]["steps"],
                    "support": p["details"]["support"],
                }
                for p in payloads
            ],
            "created": len(created_ids),
        }

    # ------------------------------------------------------------------ internals
    def resolve_source(self, source: str | dict[str, Any], field: str, default_session: str) -> Event:
        """A citation string or ``{seq, hash (64 hex), session?}`` (the seed's shape; ``session`` defaults to
        ``default_session``) -> the event (which must exist, with that hash)."""
        if isinstance(source, str):
            return self.log.resolve(parse_citation(source, field=field))
        if isinstance(source, dict) and isinstance(source.get("seq"), int) and isinstance(source.get("hash"), str):
            session = source.get("session", default_session)
            if not isinstance(session, str):
                raise InvalidRequestError(
                    f"{field}.session must be a session id", field=f"{field}.session", remediation="Omit it or fix it."
                )
            event = self.log.get(validate_session_id(session, field=f"{field}.session"), source["seq"])
            if event.hash != source["hash"]:
                raise NotFoundError(
                    f"{field}: event {source['seq']} of {session!r} has a different hash",
                    field=field,
                    remediation="Cite the event by its current citation (eventloom://...).",
                )
            return event
        raise InvalidRequestError(
            f"{field} must be an eventloom:// citation or {{seq, hash, session}}",
            field=field,
            remediation="Pass the citation a checkout, query or append returned.",
        )

    def _append_candidates(
        self, session: str, payloads: list[dict[str, Any]], actor: str, limit: int | None = None
    ) -> list[Event]:
        """Append the candidates that do not exist yet (by id; at most ``limit``), in one atomic batch."""
        self.projection.project([session])
        catalog = self.projection.projector.catalog
        fresh: dict[str, dict[str, Any]] = {}
        for payload in payloads:
            identifier = payload["candidate_id"]
            if not catalog.has_key(entity_key(session, CANDIDATE_ENTITY, identifier)):
                fresh.setdefault(identifier, payload)
        if not fresh:
            return []
        if limit is not None:
            fresh = dict(list(fresh.items())[:limit])
        drafts = [{"type": CANDIDATE_EVENT, "actor": actor, "payload": payload} for payload in fresh.values()]
        return self.events.append_many(session, drafts)

    def _candidate_record(self, session: str, candidate_id: str) -> CandidateRecord:
        if not isinstance(candidate_id, str) or not candidate_id.startswith(("cand_", "consolidation:")):
            raise InvalidRequestError(
                f"not a candidate id: {candidate_id!r}",
                field="candidate_id",
                remediation="Use a candidate id (cand_... or consolidation:<type>:...) from status or a proposal.",
            )
        self.projection.project([session])
        catalog = self.projection.projector.catalog
        key = entity_key(session, CANDIDATE_ENTITY, candidate_id)
        records = candidate_records(catalog, [session], None, self.evidence_resolves) if catalog.has_key(key) else []
        for record in records:
            if record.candidate_id == candidate_id:
                return record
        raise NotFoundError(
            f"no consolidation candidate {candidate_id} in session {session!r}",
            field="candidate_id",
            remediation="List candidates with `zaxy memory consolidation status --session-id ...`.",
        )

    def _candidate_result(self, session: str, candidate_id: str, *, created: bool) -> dict[str, Any]:
        record = self._candidate_record(session, candidate_id)
        return {
            "candidate_id": candidate_id,
            "created": created,
            "citation": record.citation,
            "candidate": record.to_dict(),
        }


def _proposal_payload(proposal: Proposal, method: str, purpose: str) -> dict[str, Any]:
    return candidate_payload(
        candidate_type=proposal.candidate_type,
        title=proposal.title,
        summary=proposal.summary,
        sources=proposal.sources,
        confidence=proposal.confidence,
        method=method,
        purpose=purpose,
        segment_id=proposal.segment_id,
        details=proposal.details,
    )


def _proposal_summary(payload: dict[str, Any], created: set[str]) -> dict[str, Any]:
    return {
        "candidate_id": payload["candidate_id"],
        "candidate_type": payload["candidate_type"],
        "title": payload["title"],
        "segment_id": payload.get("segment_id"),
        "sources": len(payload["source_events"]),
        "created": payload["candidate_id"] in created,
    }


def _mined_summary(steps: tuple[str, ...], sessions: list[str]) -> str:
    numbered = "; ".join(f"{index}. {label}" for index, label in enumerate(steps, start=1))
    shown = ", ".join(sessions[:10]) + (f" and {len(sessions) - 10} more" if len(sessions) > 10 else "")
    return f"Succeeded in {len(sessions)} sessions ({shown}): {numbered}."


def _check_range(field: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidRequestError(
            f"{field} must be an integer between {low} and {high}", field=field, remediation=f"Use {low}..{high}."
        )
