"""Payload contracts of the metacognition events (seed 003 beta.2, seed 002 typed metacognition projections).

Every metacognitive record is cited (at least one source event, seq + 64-hex hash), carries
``authority_status: non_authoritative`` and never changes what memory holds as current:

- ``metacognition.known_unknown.recorded``: an open question memory cannot answer (``question``, ``reason``,
  ``claim_key?``, ``priority``), ``status: open``; its id is derived from the question and claim key;
- ``metacognition.known_unknown.resolved``: closes one (``answered`` with the citations that answer it,
  ``dismissed`` or ``superseded``); until then checkout refuses to answer that question from memory;
- ``metacognition.confidence.assessed``: one append-only trajectory point of a claim's confidence;
- ``metacognition.reverification.requested`` / ``.resolved``: an explicit request to re-check a claim, open
  until a resolution event closes it (``verified``, ``refuted``, ``superseded``, ``dismissed``).

Claim keys name what the record is about: ``<entity_type>:<name>`` for a memory entity (``fact:ci runner``),
otherwise any stable key of the caller's.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from zaxy_agents.projection.contracts import EvidenceCitation
from zaxy_agents.projection.model import normalise_name, stable_id

UNKNOWN_RECORDED_EVENT = "metacognition.known_unknown.recorded"
UNKNOWN_RESOLVED_EVENT = "metacognition.known_unknown.resolved"
CONFIDENCE_EVENT = "metacognition.confidence.assessed"
REVERIFY_REQUESTED_EVENT = "metacognition.reverification.requested"
REVERIFY_RESOLVED_EVENT = "metacognition.reverification.resolved"
METACOGNITION_EVENTS = (
    UNKNOWN_RECORDED_EVENT,
    UNKNOWN_RESOLVED_EVENT,
    CONFIDENCE_EVENT,
    REVERIFY_REQUESTED_EVENT,
    REVERIFY_RESOLVED_EVENT,
)

UNKNOWN_ENTITY = "known_unknown"
ASSESSMENT_ENTITY = "confidence_assessment"
REQUEST_ENTITY = "reverification_request"
METACOGNITION_ENTITIES = frozenset({UNKNOWN_ENTITY, ASSESSMENT_ENTITY, REQUEST_ENTITY})

AUTHORITY_STATUS = "non_authoritative"
Priority = Literal["low", "medium", "high"]
UnknownResolution = Literal["answered", "dismissed", "superseded"]
RequestResolution = Literal["verified", "refuted", "superseded", "dismissed"]
PRIORITIES: tuple[str, ...] = get_args(Priority)
UNKNOWN_RESOLUTIONS: tuple[str, ...] = get_args(UnknownResolution)
REQUEST_RESOLUTIONS: tuple[str, ...] = get_args(RequestResolution)
MAX_SOURCES = 50
UNKNOWN_ID_PATTERN = r"^unk_[0-9a-f]{24}$"
REQUEST_ID_PATTERN = r"^rvq_[0-9a-f]{24}$"
CLAIM_KEY_MAX = 300


def unknown_id(question: str, claim_key: str | None) -> str:
    """Same (normalised) question about the same claim -> same id (recording it twice records one)."""
    return "unk_" + stable_id("known_unknown", normalise_name(question), normalise_name(claim_key or ""))


def request_id(claim_key: str, reason: str) -> str:
    """Same claim, same (normalised) reason -> same request id."""
    return "rvq_" + stable_id("reverification", normalise_name(claim_key), normalise_name(reason))


def split_claim_key(claim_key: str) -> tuple[str, str] | None:
    """``fact:ci runner`` -> ``("fact", "ci runner")``; None when the key does not name an entity type."""
    entity_type, sep, name = claim_key.partition(":")
    if not sep or not name.strip() or not entity_type.replace("_", "").isalnum() or len(entity_type) > 64:
        return None
    return entity_type, name.strip()


class _Contract(BaseModel):
    model_config = ConfigDict(extra="forbid")

    authority_status: Literal["non_authoritative"]

    @staticmethod
    def _not_blank(**values: str | None) -> None:
        for name, value in values.items():
            if value is not None and not value.strip():
                raise ValueError(f"{name} must not be blank")


class KnownUnknownPayload(_Contract):
    """``metacognition.known_unknown.recorded``: an open, cited question memory cannot answer yet."""

    contract_remediation: ClassVar[str] = (
        "A known unknown needs unknown_id (unk_ + 24 hex, see metacognition.contracts.unknown_id), question, "
        "reason, source_events [{seq, hash (64 hex), session?}, ...] (at least one), priority (low, medium, high), "
        "status 'open' and authority_status 'non_authoritative'; claim_key is optional. Use "
        "memory_record_known_unknown, which fills these in; see docs/cognitive.md."
    )

    unknown_id: str = Field(pattern=UNKNOWN_ID_PATTERN)
    question: str = Field(min_length=1, max_length=1000)
    reason: str = Field(min_length=1, max_length=2000)
    claim_key: str | None = Field(default=None, min_length=1, max_length=CLAIM_KEY_MAX)
    source_events: list[EvidenceCitation] = Field(min_length=1, max_length=MAX_SOURCES)
    priority: Priority = "medium"
    status: Literal["open"]

    @model_validator(mode="after")
    def _derived_id(self) -> KnownUnknownPayload:
        self._not_blank(question=self.question, reason=self.reason, claim_key=self.claim_key)
        expected = unknown_id(self.question, self.claim_key)
        if self.unknown_id != expected:
            raise ValueError(f"unknown_id must be {expected} (derived from question and claim_key)")
        return self


class KnownUnknownResolvedPayload(_Contract):
    """``metacognition.known_unknown.resolved``: closes a known unknown (answered ones cite the answer)."""

    contract_remediation: ClassVar[str] = (
        "A resolution needs unknown_id, resolution (answered, dismissed, superseded), rationale and "
        "authority_status 'non_authoritative'; an answered one cites the events that answer it in source_events."
    )

    unknown_id: str = Field(pattern=UNKNOWN_ID_PATTERN)
    resolution: UnknownResolution
    rationale: str = Field(min_length=1, max_length=2000)
    source_events: list[EvidenceCitation] = Field(default_factory=list, max_length=MAX_SOURCES)

    @model_validator(mode="after")
    def _answered_is_cited(self) -> KnownUnknownResolvedPayload:
        self._not_blank(rationale=self.rationale)
        if self.resolution == "answered" and not self.source_events:
            raise ValueError("an answered known unknown must cite the events that answer it (source_events)")
        return self


class ConfidenceAssessmentPayload(_Contract):
    """``metacognition.confidence.assessed``: one append-only point of a claim's confidence trajectory."""

    contract_remediation: ClassVar[str] = (
        "A confidence assessment needs claim_key, confidence in [0, 1], rationale, source_events (at least one "
        "{seq, hash, session?}), method and authority_status 'non_authoritative'; it never changes the claim."
    )

    claim_key: str = Field(min_length=1, max_length=CLAIM_KEY_MAX)
    confidence: float = Field(ge=0.0, le=1.0)
    rationale: str = Field(min_length=1, max_length=2000)
    source_events: list[EvidenceCitation] = Field(min_length=1, max_length=MAX_SOURCES)
    method: str = Field(default="agent_assessment", min_length=1, max_length=120)

    @model_validator(mode="after")
    def _filled(self) -> ConfidenceAssessmentPayload:
        self._not_blank(claim_key=self.claim_key, rationale=self.rationale)
        return self


class ReverificationRequestPayload(_Contract):
    """``metacognition.reverification.requested``: re-check a claim; open until a resolution closes it."""

    contract_remediation: ClassVar[str] = (
        "A re-verification request needs request_id (rvq_ + 24 hex, see metacognition.contracts.request_id), "
        "claim_key, reason, priority (low, medium, high), source_events (at least one), status 'open' and "
        "authority_status 'non_authoritative'."
    )

    request_id: str = Field(pattern=REQUEST_ID_PATTERN)
    claim_key: str = Field(min_length=1, max_length=CLAIM_KEY_MAX)
    reason: str = Field(min_length=1, max_length=2000)
    priority: Priority = "medium"
    source_events: list[EvidenceCitation] = Field(min_length=1, max_length=MAX_SOURCES)
    status: Literal["open"]

    @model_validator(mode="after")
    def _derived_id(self) -> ReverificationRequestPayload:
        self._not_blank(claim_key=self.claim_key, reason=self.reason)
        expected = request_id(self.claim_key, self.reason)
        if self.request_id != expected:
            raise ValueError(f"request_id must be {expected} (derived from claim_key and reason)")
        return self


class ReverificationResolvedPayload(_Contract):
    """``metacognition.reverification.resolved``: the separate workflow that closes a request."""

    contract_remediation: ClassVar[str] = (
        "A re-verification resolution needs request_id, resolution (verified, refuted, superseded, dismissed), "
        "rationale, source_events (at least one: what was checked) and authority_status 'non_authoritative'."
    )

    request_id: str = Field(pattern=REQUEST_ID_PATTERN)
    resolution: RequestResolution
    rationale: str = Field(min_length=1, max_length=2000)
    source_events: list[EvidenceCitation] = Field(min_length=1, max_length=MAX_SOURCES)

    @model_validator(mode="after")
    def _filled(self) -> ReverificationResolvedPayload:
        self._not_blank(rationale=self.rationale)
        return self


CONTRACTS: dict[str, type[BaseModel]] = {
    UNKNOWN_RECORDED_EVENT: KnownUnknownPayload,
    UNKNOWN_RESOLVED_EVENT: KnownUnknownResolvedPayload,
    CONFIDENCE_EVENT: ConfidenceAssessmentPayload,
    REVERIFY_REQUESTED_EVENT: ReverificationRequestPayload,
    REVERIFY_RESOLVED_EVENT: ReverificationResolvedPayload,
}


def citations(sources: list[EvidenceCitation], session: str) -> list[dict[str, Any]]:
    """Projected form of cited sources: ``{session, seq, hash}`` (the event's own session by default)."""
    return [{"session": s.session or session, "seq": s.seq, "hash": s.hash} for s in sources]
