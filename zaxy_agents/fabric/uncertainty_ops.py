"""Fabric operations for the metacognition ledgers (seed 003 beta.2): recording and resolving known unknowns and
re-verification requests.

Why a module of its own: these are the metacognition tools that write (one cited event each, idempotent while
open); the reads over what they recorded (lists, trajectories, needs, claim confidence) are
:mod:`.confidence_ops`, whose ``cited_sources`` checks the citations here. Nothing here changes what memory holds
as current: every record is ``non_authoritative``. See docs/cognitive.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zaxy_agents.errors import ConflictError, InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.metacognition.contracts import (
    AUTHORITY_STATUS,
    CLAIM_KEY_MAX,
    PRIORITIES,
    REQUEST_RESOLUTIONS,
    REVERIFY_REQUESTED_EVENT,
    REVERIFY_RESOLVED_EVENT,
    UNKNOWN_RECORDED_EVENT,
    UNKNOWN_RESOLUTIONS,
    UNKNOWN_RESOLVED_EVENT,
    request_id,
    unknown_id,
)
from zaxy_agents.metacognition.state import KnownUnknown, known_unknowns, reverification_requests

from .confidence_ops import _choice, _text
from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from .confidence_ops import ConfidenceService
    from .log_ops import LogService
    from .projection_ops import ProjectionService


class UncertaintyService(FabricService):
    """Service: the metacognition ledgers (record and resolve uncertainty; never an authority change)."""

    def __init__(
        self, core: FabricCore, events: LogService, projection: ProjectionService, confidence: ConfidenceService
    ) -> None:
        """``confidence``: checks the cited sources (``cited_sources``) the way every metacognition record does."""
        super().__init__(core)
        self.events = events
        self.projection = projection
        self.confidence = confidence

    def record_known_unknown(
        self,
        session: str,
        *,
        question: str,
        reason: str,
        source_events: list[str | dict[str, Any]],
        claim_key: str | None = None,
        priority: str = "medium",
        actor: str = "agent",
    ) -> dict[str, Any]:
        """Record an open, cited question memory cannot answer. Idempotent while open (same question and claim
        key -> same id, recorded once); recording a resolved one again reopens it."""
        validate_session_id(session)
        _text("question", question, 1000)
        _text("reason", reason, 2000)
        if claim_key is not None:
            _text("claim_key", claim_key, CLAIM_KEY_MAX)
        _choice("priority", priority, PRIORITIES)
        sources = self.confidence.cited_sources(source_events, session, required=True)
        identifier = unknown_id(question, claim_key)
        existing = self._unknown(session, identifier)
        if existing is not None and existing.status == "open":
            return {**_unknown_result(existing), "created": False}
        payload = {
            "unknown_id": identifier,
            "question": question,
            "reason": reason,
            **({"claim_key": claim_key} if claim_key is not None else {}),
            "source_events": sources,
            "priority": priority,
            "status": "open",
            "authority_status": AUTHORITY_STATUS,
        }
        self.events.append(session, UNKNOWN_RECORDED_EVENT, payload, actor=actor)
        recorded = self._unknown(session, identifier)
        assert recorded is not None
        return {**_unknown_result(recorded), "created": True}

    def resolve_known_unknown(
        self,
        session: str,
        unknown_id: str,
        *,
        resolution: str,
        rationale: str,
        source_events: list[str | dict[str, Any]] | None = None,
        actor: str = "agent",
    ) -> dict[str, Any]:
        """Close an open known unknown: ``answered`` (citing what answers it), ``dismissed`` or ``superseded``."""
        validate_session_id(session)
        _choice("resolution", resolution, UNKNOWN_RESOLUTIONS)
        _text("rationale", rationale, 2000)
        item = self._unknown(session, unknown_id)
        if item is None:
            raise NotFoundError(
                f"no known unknown {unknown_id!r} in session {session!r}",
                field="unknown_id",
                remediation="List them with memory_known_unknowns.",
            )
        if item.status != "open":
            raise ConflictError(
                f"known unknown {unknown_id} is already resolved ({item.resolution})",
                field="unknown_id",
                remediation="Record the question again to reopen it.",
            )
        sources = self.confidence.cited_sources(source_events or [], session, required=resolution == "answered")
        payload = {
            "unknown_id": unknown_id,
            "resolution": resolution,
            "rationale": rationale,
            "source_events": sources,
            "authority_status": AUTHORITY_STATUS,
        }
        self.events.append(session, UNKNOWN_RESOLVED_EVENT, payload, actor=actor)
        resolved = self._unknown(session, unknown_id)
        assert resolved is not None
        return _unknown_result(resolved)

    def request_reverification(
        self,
        session: str,
        claim_key: str,
        *,
        reason: str,
        source_events: list[str | dict[str, Any]],
        priority: str = "medium",
        actor: str = "agent",
    ) -> dict[str, Any]:
        """Ask for a claim to be re-checked; the request stays open until :meth:`resolve_reverification`."""
        validate_session_id(session)
        _text("claim_key", claim_key, CLAIM_KEY_MAX)
        _text("reason", reason, 2000)
        _choice("priority", priority, PRIORITIES)
        sources = self.confidence.cited_sources(source_events, session, required=True)
        identifier = request_id(claim_key, reason)
        existing = self._request(session, identifier)
        if existing is not None and existing["status"] == "open":
            return {**existing, "created": False}
        payload = {
            "request_id": identifier,
            "claim_key": claim_key,
            "reason": reason,
            "priority": priority,
            "source_events": sources,
            "status": "open",
            "authority_status": AUTHORITY_STATUS,
        }
        self.events.append(session, REVERIFY_REQUESTED_EVENT, payload, actor=actor)
        return {**(self._request(session, identifier) or {}), "created": True}

    def resolve_reverification(
        self,
        session: str,
        request_id: str,
        *,
        resolution: str,
        rationale: str,
        source_events: list[str | dict[str, Any]],
        actor: str = "agent",
    ) -> dict[str, Any]:
        """The separate workflow that closes a re-verification request (verified, refuted, superseded,
        dismissed), citing what was checked."""
        validate_session_id(session)
        _choice("resolution", resolution, REQUEST_RESOLUTIONS)
        _text("rationale", rationale, 2000)
        existing = self._request(session, request_id)
        if existing is None:
            raise NotFoundError(
                f"no re-verification request {request_id!r} in session {session!r}",
                field="request_id",
                remediation="List them with memory_reverification_needs.",
            )
        if existing["status"] != "open":
            raise ConflictError(
                f"re-verification request {request_id} is already resolved",
                field="request_id",
                remediation="Request it again to reopen it.",
            )
        payload = {
            "request_id": request_id,
            "resolution": resolution,
            "rationale": rationale,
            "source_events": self.confidence.cited_sources(source_events, session, required=True),
            "authority_status": AUTHORITY_STATUS,
        }
        self.events.append(session, REVERIFY_RESOLVED_EVENT, payload, actor=actor)
        return self._request(session, request_id) or {}

    # ------------------------------------------------------------------ internals
    def _unknown(self, session: str, identifier: str) -> KnownUnknown | None:
        if not isinstance(identifier, str) or not identifier.startswith("unk_"):
            raise InvalidRequestError(
                f"not a known unknown id: {identifier!r}",
                field="unknown_id",
                remediation="Use an unknown_id (unk_...) from memory_known_unknowns.",
            )
        self.projection.project([session])
        for item in known_unknowns(self.projection.projector.catalog, [session], None):
            if item.unknown_id == identifier:
                return item
        return None

    def _request(self, session: str, identifier: str) -> dict[str, Any] | None:
        if not isinstance(identifier, str) or not identifier.startswith("rvq_"):
            raise InvalidRequestError(
                f"not a re-verification request id: {identifier!r}",
                field="request_id",
                remediation="Use a request_id (rvq_...) from memory_reverification_needs.",
            )
        self.projection.project([session])
        for item in reverification_requests(self.projection.projector.catalog, [session], None):
            if item["request_id"] == identifier:
                return item
        return None


def _unknown_result(item: KnownUnknown) -> dict[str, Any]:
    return {
        "unknown_id": item.unknown_id,
        "citation": item.citation,
        "status": item.status,
        "authority_status": AUTHORITY_STATUS,
        "known_unknown": item.to_dict(),
    }
