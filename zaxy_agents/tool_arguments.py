"""Argument fields of the memory tools that more than one surface offers (MCP full profile, LangGraph tools).

Each field is declared once, with its bounds, default and description, so the MCP server and the LangGraph
tools cannot drift apart. A surface combines a field set with its own base model: MCP's strict ``ToolArgs``
(``session_id``, strict types, the published JSON schema) or LangGraph's lenient one (the run's session, no
session argument). Optional fields use :func:`optional`: shown to clients as their plain type, ``None`` accepted.

Only pydantic and domain types are imported here: surfaces import this module, never the other way round.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from zaxy_agents.causal.taxonomy import CausalRelation
from zaxy_agents.consolidation.contracts import CandidateType
from zaxy_agents.consolidation.contracts import ReviewDecision as Decision
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.instants import parse_instant

Citation = Annotated[str, Field(min_length=20, max_length=300)]
PurposePreset = Literal["general", "coding", "review", "release", "security", "research", "coordinate"]
ShortText = Annotated[str, Field(min_length=1, max_length=500)]
CANDIDATE_ID = r"^(cand_[0-9a-f]{24}|consolidation:(episode|claim|procedure):[0-9a-f]{16})$"  # ours | the seed's
CandidateId = Annotated[str, Field(min_length=29, max_length=64, pattern=CANDIDATE_ID)]
Operation = Literal["candidate", "propose_from_log", "review", "status"]
SOURCES_HELP = (
    "The events the summary is based on (at least one): {seq, hash} objects (this session unless session is "
    "given) or eventloom:// citations."
)


class SourceEvent(BaseModel):
    """A cited source event: ``{seq, hash (64 hex), session?}`` (the seeds' shape)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    seq: int = Field(ge=1, description="The event's seq.")
    hash: str = Field(min_length=64, max_length=64, pattern=r"^[0-9a-f]{64}$", description="Its full 64-hex hash.")
    session: optional(str, "Its session, when not this one.", max_length=128) = None


SourceRef = Citation | SourceEvent


def source_value(source: Any) -> str | dict[str, Any]:
    """A validated source reference as the fabric takes it (a citation string or a plain dict)."""
    return source.model_dump(exclude_none=True) if isinstance(source, BaseModel) else source


def _instant(value: str) -> str:
    try:
        return parse_instant(value) or value
    except InvalidRequestError as exc:
        raise ValueError(f"{exc.message}. {exc.remediation}") from None


# An instant (``as_of``): parsed, never compared as text; shown to clients as a plain bounded string.
Instant = Annotated[str, AfterValidator(_instant)]
INSTANT_HELP = "an ISO-8601 instant or date (2026-03-12 means its end), 'now', 'N days ago', 'yesterday', 'last week'"


def as_of_field(what: str) -> Any:
    """The optional ``as_of`` argument: ``what`` the tool reads as it was at the instant (parsed, bounded)."""
    return optional(Instant, f"{what} as it was at {INSTANT_HELP}.", max_length=40)


def field_path(loc: tuple[Any, ...] | list[Any]) -> str:
    """A validation error's location as the caller wrote it (``scope[2]``, ``as_of``): pydantic's internal
    labels (union members, validator names) are left out."""
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        elif isinstance(part, str) and part.isidentifier():
            parts.append(("." if parts else "") + part)
    return "".join(parts)


def validation_problems(errors: list[Any]) -> list[dict[str, Any]]:
    """One problem per field (the first pydantic reports), ``{"field", "message"}``: an optional argument's
    rejected value also fails the union's ``None`` member, which would only repeat the field as noise."""
    problems: dict[str, dict[str, Any]] = {}
    for error in errors:
        field = field_path(error.get("loc", ()))
        problems.setdefault(field, {"field": field, "message": error.get("msg")})
    return list(problems.values())


def optional(annotation: Any, description: str, **bounds: Any) -> Any:
    """An optional argument shown to clients as its plain type (``None`` accepted, not advertised)."""
    return Annotated[Annotated[annotation, Field(**bounds)] | SkipJsonSchema[None], Field(description=description)]


# ---------------------------------------------------------------------- purpose
class PurposeObject(BaseModel):
    """A structured purpose (seed 003): what the memory is for, beyond a preset name."""

    model_config = ConfigDict(extra="forbid", strict=True)

    role: optional(str, "Who is acting; a preset name (coding, review, ...) picks that preset.", max_length=120) = None
    task: optional(str, "The task at hand; its words are emphasised.", max_length=1000) = None
    risk: optional(Literal["low", "medium", "high", "critical"], "High or critical keeps more evidence.") = None
    time_horizon: optional(str, "e.g. this session, this release, long term.", max_length=120) = None
    expected_action: optional(str, "What the memory will be used to do (e.g. handoff, merge).", max_length=500) = None
    evidence_policy: optional(str, "e.g. cited_only.", max_length=200) = None
    retention_policy: optional(str, "e.g. session, project.", max_length=200) = None
    ontology_lens: optional(str, "Domain vocabulary to emphasise.", max_length=500) = None
    profile: optional(Literal["balanced", "precision", "recall", "temporal", "cognitive"], "Retrieval profile.") = None
    emphasis_terms: optional(list[ShortText], "Words whose hits are boosted.", max_length=32) = None
    recall_floor: optional(int, "Evidence items kept even under a tight budget.", ge=0, le=50) = None
    suppress_event_types: optional(list[ShortText], "Event types to leave out.", max_length=32) = None
    suppress_entity_types: optional(list[ShortText], "Entity types to leave out.", max_length=32) = None


PurposeArgument = optional(
    PurposePreset | PurposeObject,
    "What the memory is for: a preset (general, coding, review, release, security, research, coordinate) or an "
    "object {role, task, risk, time_horizon, expected_action, evidence_policy, retention_policy, ontology_lens}.",
)


RetrievalProfileName = Literal["plain", "balanced", "full"]
RetrievalProfileArgument = optional(
    RetrievalProfileName,
    "Which 2.2 ranking features apply: plain (none: pre-2.2 ranking), balanced (the measured default), full "
    "(salience, PageRank, attenuation floor, cue overlap).",
)


def purpose_value(purpose: Any) -> str | dict[str, Any] | None:
    """A validated purpose argument as the fabric takes it (a preset name or a plain dict)."""
    return purpose.model_dump(exclude_none=True) if isinstance(purpose, BaseModel) else purpose


# ---------------------------------------------------------------------- causal memory
class CausalFields(BaseModel):
    entity_name: str = Field(min_length=1, max_length=500, description="Entity name, as a checkout or query showed it.")
    relation_type: optional(
        CausalRelation | Annotated[list[CausalRelation], Field(min_length=1, max_length=7)],
        "Only this causal relation (caused, enabled, blocked, prevented, regressed, fixed, explained), or a list "
        "of them (default: all seven).",
    ) = None
    entity_type: optional(str, "Its entity_type (default: every entity with that name).", max_length=64) = None
    depth: int = Field(default=2, ge=1, le=6, description="Hops to follow.")
    as_of: as_of_field("Read memory") = None
    include_stale: bool = Field(
        default=False, description="Also return edges whose cause or effect has since been invalidated (flagged)."
    )

    @property
    def relation_types(self) -> list[str] | None:
        """The relation filter as a list (the fabric's form)."""
        value = self.relation_type
        return [value] if isinstance(value, str) else (list(value) if value is not None else None)


# ---------------------------------------------------------------------- consolidation
class CandidateFields(BaseModel):
    candidate_type: CandidateType = Field(description="episode, claim or procedure.")
    title: str = Field(min_length=1, max_length=200, description="Short title (with the type, its identity).")
    summary: str = Field(min_length=1, max_length=4000, description="The proposed summary.")
    source_events: list[SourceRef] = Field(min_length=1, max_length=200, description=SOURCES_HELP)
    confidence: float = Field(ge=0.0, le=1.0, description="How sure you are, 0..1.")
    method: str = Field(default="agent", min_length=1, max_length=120, description="How it was derived.")
    purpose: str = Field(default="general", min_length=1, max_length=120, description="Why it is proposed.")
    actor: str = Field(default="zaxy-consolidation", min_length=1, max_length=256, description="Who proposes it.")


class ProposeFields(BaseModel):
    window_size: int = Field(default=8, ge=2, le=100, description="Actionable events per segment window.")
    purpose: str = Field(default="general", min_length=1, max_length=120, description="Recorded with each candidate.")
    max_events: int = Field(default=500, ge=1, le=100_000, description="Scan at most this many recent events.")
    limit: optional(int, "Create at most this many candidates (oldest segments first).", ge=1, le=200) = None
    dry_run: bool = Field(default=False, description="Show the proposals without appending them.")
    actor: str = Field(default="zaxy-consolidation", min_length=1, max_length=256, description="Who proposes them.")


class ReviewFields(BaseModel):
    candidate_id: CandidateId = Field(description="The id of the candidate to review.")
    status: Decision = Field(description="The disposition: accepted, rejected, deferred or conflicted.")
    rationale: str = Field(min_length=1, max_length=2000, description="Why.")
    actor: str = Field(default="zaxy-reviewer", min_length=1, max_length=256, description="Who records the review.")
    reviewer: optional(str, "Who reviewed it (when not the actor).", max_length=256) = None
    conflicts_with: optional(list[Citation], "For conflicted: citations of the conflicting events.", max_length=50) = (
        None
    )


class StatusFields(BaseModel):
    as_of: as_of_field("Report the state") = None
    include_candidates: bool = Field(default=True, description="List the candidates too (newest first).")
    limit: int = Field(default=50, ge=0, le=200, description="At most this many candidates.")


OPERATION_FIELDS: dict[str, type[BaseModel]] = {
    "candidate": CandidateFields,
    "propose_from_log": ProposeFields,
    "review": ReviewFields,
    "status": StatusFields,
}


def check_operation_fields(call: Any, umbrella: type[BaseModel], table: dict[str, type[BaseModel]]) -> Any:
    """An umbrella tool's call: every given field belongs to the operation, every field it requires is given."""
    fields = table[call.operation].model_fields
    given = {name for name in umbrella.model_fields if getattr(call, name) is not None}
    foreign = sorted(given - set(fields) - {"operation"})
    if foreign:
        raise ValueError(f"{', '.join(foreign)} do not apply to operation {call.operation!r}")
    missing = [name for name, info in fields.items() if info.is_required() and name not in given]
    if missing:
        raise ValueError(f"operation {call.operation!r} needs {', '.join(missing)}")
    return call


def operation_arguments(call: Any, model: type[BaseModel]) -> Any:
    """An umbrella call as ``model`` (the surface's own argument model of the operation), validated again."""
    return model.model_validate(
        {name: getattr(call, name) for name in model.model_fields if getattr(call, name, None) is not None}
    )


class ConsolidationFields(BaseModel):
    """One tool for every consolidation operation; each operation takes the fields of its own tool."""

    operation: Operation = Field(description="candidate, propose_from_log, review or status.")
    candidate_type: optional(CandidateType, "candidate: episode, claim or procedure.") = None
    title: optional(str, "candidate: short title.", min_length=1, max_length=200) = None
    summary: optional(str, "candidate: the proposed summary.", min_length=1, max_length=4000) = None
    source_events: optional(list[SourceRef], "candidate: " + SOURCES_HELP, min_length=1, max_length=200) = None
    confidence: optional(float, "candidate: how sure, 0..1.", ge=0.0, le=1.0) = None
    method: optional(str, "candidate: how it was derived.", min_length=1, max_length=120) = None
    purpose: optional(str, "candidate / propose_from_log: why.", min_length=1, max_length=120) = None
    actor: optional(str, "candidate / propose_from_log / review: who.", min_length=1, max_length=256) = None
    window_size: optional(int, "propose_from_log: actionable events per window.", ge=2, le=100) = None
    max_events: optional(int, "propose_from_log: recent events to scan.", ge=1, le=100_000) = None
    dry_run: optional(bool, "propose_from_log: do not append.") = None
    candidate_id: optional(CandidateId, "review: the candidate id.") = None
    status: optional(Decision, "review: accepted, rejected, deferred or conflicted.") = None
    rationale: optional(str, "review: why.", min_length=1, max_length=2000) = None
    reviewer: optional(str, "review: who reviewed it.", max_length=256) = None
    conflicts_with: optional(list[Citation], "review (conflicted): conflicting events.", max_length=50) = None
    as_of: as_of_field("status: report the state") = None
    include_candidates: optional(bool, "status: list the candidates.") = None
    limit: optional(int, "status: candidates listed; propose_from_log: candidates created (at most).", ge=0, le=200) = (
        None
    )

    @model_validator(mode="after")
    def _fields_fit_the_operation(self) -> ConsolidationFields:
        return check_operation_fields(self, ConsolidationFields, OPERATION_FIELDS)

    def for_operation(self, model: type[BaseModel]) -> Any:
        """This call as ``model`` (the surface's own argument model of the operation), validated again."""
        return operation_arguments(self, model)


# ---------------------------------------------------------------------- metacognition (seed 003 beta.2)
ClaimKey = Annotated[str, Field(min_length=1, max_length=300)]
Priority = Literal["low", "medium", "high"]
ConfidenceOperation = Literal["claim", "trajectory", "reverification", "known_unknowns", "record_known_unknown"]
CLAIM_KEY_HELP = (
    "What it is about: <entity_type>:<name> for a memory entity (e.g. fact:launch date), or a stable key of yours."
)
UNKNOWN_SOURCES_HELP = (
    "The events that show the gap (at least one): {seq, hash} objects (this session unless session is given) "
    "or eventloom:// citations."
)


class RecordKnownUnknownFields(BaseModel):
    question: str = Field(min_length=1, max_length=1000, description="The question memory cannot answer yet.")
    reason: str = Field(min_length=1, max_length=2000, description="Why it is unknown (what is missing or unclear).")
    source_events: list[SourceRef] = Field(min_length=1, max_length=50, description=UNKNOWN_SOURCES_HELP)
    claim_key: optional(ClaimKey, "The claim it is about. " + CLAIM_KEY_HELP) = None
    priority: Priority = Field(default="medium", description="low, medium or high.")
    actor: str = Field(default="agent", min_length=1, max_length=256, description="Who records it.")


class KnownUnknownsFields(BaseModel):
    status: Literal["open", "resolved", "all"] = Field(default="open", description="Which ones to list.")
    as_of: as_of_field("List them") = None
    limit: int = Field(default=50, ge=0, le=200, description="At most this many (newest first).")


class TrajectoryFields(BaseModel):
    claim_key: ClaimKey = Field(description=CLAIM_KEY_HELP)
    as_of: as_of_field("Read the trajectory") = None


class ReverificationFields(BaseModel):
    as_of: as_of_field("Report the needs") = None
    max_age_days: optional(
        int, "Evidence older than this many days needs a re-check (default 90).", ge=1, le=36_500
    ) = None
    include_resolved: bool = Field(default=False, description="Also list resolved requests.")
    limit: int = Field(default=50, ge=0, le=200, description="At most this many of each list.")


class ClaimConfidenceFields(BaseModel):
    claim_key: ClaimKey = Field(description=CLAIM_KEY_HELP)
    as_of: as_of_field("Read the claim") = None
    confidence: optional(float, "Record an assessment point first: your confidence, 0..1.", ge=0.0, le=1.0) = None
    rationale: optional(str, "With confidence: why.", min_length=1, max_length=2000) = None
    source_events: optional(
        list[SourceRef], "With confidence: the events the assessment rests on.", min_length=1, max_length=50
    ) = None
    method: str = Field(default="agent_assessment", min_length=1, max_length=120, description="How it was assessed.")
    actor: str = Field(default="agent", min_length=1, max_length=256, description="Who assesses it.")


CONFIDENCE_OPERATION_FIELDS: dict[str, type[BaseModel]] = {
    "claim": ClaimConfidenceFields,
    "trajectory": TrajectoryFields,
    "reverification": ReverificationFields,
    "known_unknowns": KnownUnknownsFields,
    "record_known_unknown": RecordKnownUnknownFields,
}


class ConfidenceFields(BaseModel):
    """One tool for the confidence and metacognition operations; each takes the fields of its own tool."""

    operation: ConfidenceOperation = Field(
        description="claim, trajectory, reverification, known_unknowns or record_known_unknown."
    )
    claim_key: optional(ClaimKey, "claim / trajectory / record_known_unknown: " + CLAIM_KEY_HELP) = None
    question: optional(str, "record_known_unknown: the question.", min_length=1, max_length=1000) = None
    reason: optional(str, "record_known_unknown: why it is unknown.", min_length=1, max_length=2000) = None
    source_events: optional(
        list[SourceRef], "record_known_unknown / claim: cited events.", min_length=1, max_length=50
    ) = None
    priority: optional(Priority, "record_known_unknown: low, medium or high.") = None
    confidence: optional(float, "claim: record an assessment point, 0..1.", ge=0.0, le=1.0) = None
    rationale: optional(str, "claim: why (with confidence).", min_length=1, max_length=2000) = None
    method: optional(str, "claim: how it was assessed.", min_length=1, max_length=120) = None
    actor: optional(str, "claim / record_known_unknown: who.", min_length=1, max_length=256) = None
    status: optional(Literal["open", "resolved", "all"], "known_unknowns: which ones.") = None
    max_age_days: optional(int, "reverification: age that needs a re-check.", ge=1, le=36_500) = None
    include_resolved: optional(bool, "reverification: list resolved requests too.") = None
    as_of: as_of_field("claim / trajectory / reverification / known_unknowns: read memory") = None
    limit: optional(int, "known_unknowns / reverification: at most this many.", ge=0, le=200) = None

    @model_validator(mode="after")
    def _fields_fit_the_operation(self) -> ConfidenceFields:
        return check_operation_fields(self, ConfidenceFields, CONFIDENCE_OPERATION_FIELDS)

    def for_operation(self, model: type[BaseModel]) -> Any:
        return operation_arguments(self, model)


# ---------------------------------------------------------------------- belief-update proposals (seed 002/003 beta.1)
BeliefPhase = Literal["planning", "execution", "review", "reflection"]
BeliefStatus = Literal["pending", "accepted", "rejected", "deferred", "conflicted"]
ProposalId = Annotated[str, Field(min_length=28, max_length=28, pattern=r"^bel_[0-9a-f]{24}$")]


class ProposeBeliefFields(BaseModel):
    claim: str = Field(min_length=1, max_length=2000, description="The belief as it should read after the update.")
    rationale: str = Field(min_length=1, max_length=2000, description="Why memory's current belief should change.")
    confidence: float = Field(ge=0.0, le=1.0, description="How sure you are, 0..1.")
    citations: list[SourceRef] = Field(
        min_length=1,
        max_length=50,
        description="The events the proposal rests on (at least one): {seq, hash} objects or eventloom:// citations.",
    )
    phase: BeliefPhase = Field(default="reflection", description="planning, execution, review or reflection.")
    claim_key: optional(ClaimKey, "The claim it would change. " + CLAIM_KEY_HELP) = None
    actor: str = Field(default="agent", min_length=1, max_length=256, description="Who proposes it.")


class ReviewBeliefFields(BaseModel):
    proposal_id: ProposalId = Field(description="The id of the proposal to review (bel_...).")
    status: Literal["accepted", "rejected", "deferred", "conflicted"] = Field(
        description="The disposition: accepted, rejected, deferred or conflicted (never a promotion)."
    )
    rationale: str = Field(min_length=1, max_length=2000, description="Why.")
    reviewer: optional(str, "Who reviewed it (when not the actor).", max_length=256) = None
    actor: str = Field(default="zaxy-reviewer", min_length=1, max_length=256, description="Who records the review.")


class BeliefListFields(BaseModel):
    status: optional(BeliefStatus, "Only proposals in this review state.") = None
    as_of: as_of_field("List them") = None
    limit: int = Field(default=50, ge=0, le=200, description="At most this many (newest first).")


# ---------------------------------------------------------------------- synthesis artifacts and evidence (seed 003)
CandidateRef = (
    Annotated[str, Field(max_length=20, pattern=r"^ans_[0-9a-f]{16}$")]
    | Annotated[int, Field(ge=1, le=10)]
    | Annotated[dict[str, Any], Field(json_schema_extra={"maxProperties": 20})]
)
CHECKOUT_HELP = (
    "The memory_checkout response, unchanged (its session owns the artifact; its diagnostics.synthesis holds "
    "the answer_candidates and ledger_rows)."
)
CANDIDATE_HELP = "One of diagnostics.synthesis.answer_candidates: the object, its candidate_id (ans_...) or its rank."


class CheckoutArgument(BaseModel):
    """The MCP form: the checkout response itself."""

    checkout: dict[str, Any] = Field(description=CHECKOUT_HELP, json_schema_extra={"maxProperties": 40})


class CheckoutQueryArgument(BaseModel):
    """The LangGraph form: the model saw the checkout as text, so the tool checks the same query out again (same
    session and scope; unchanged memory gives the same candidates and rows, with the same ids)."""

    query: str = Field(
        min_length=1, max_length=4000, description="The query you called memory_checkout with (same words)."
    )
    purpose: optional(PurposePreset, "The purpose you checked out with, if any.") = None


class SynthesisArtifactFields(BaseModel):
    candidate: optional(CandidateRef, CANDIDATE_HELP + " Needs outcome.") = None
    outcome: optional(
        Literal["used", "helpful", "accepted", "rejected", "irrelevant", "wrong", "corrected", "excluded"],
        "What happened to the candidate: used (helpful, accepted), rejected (irrelevant, wrong), corrected (with "
        "corrected_value) or excluded. Needs candidate.",
    ) = None
    corrected_value: optional(str, "The answer given instead (outcome corrected).", min_length=1, max_length=200) = None
    reason: optional(str, "Why.", min_length=1, max_length=2000) = None
    actor: str = Field(default="agent", min_length=1, max_length=256, description="Who records it.")


class SynthesisEvidenceFields(BaseModel):
    row: (
        Annotated[str, Field(max_length=20, pattern=r"^row_[0-9a-f]{16}$")]
        | Annotated[dict[str, Any], Field(json_schema_extra={"maxProperties": 20})]
    ) = Field(description="One of diagnostics.synthesis.ledger_rows: the object or its row_id (row_...).")
    outcome: Literal["used", "helpful", "excluded"] = Field(
        description="used or helpful (memory.evidence.reinforced) or excluded (memory.evidence.excluded)."
    )
    candidate: optional(CandidateRef, CANDIDATE_HELP + " The answer the row supports or was excluded from.") = None
    reason: optional(str, "Why.", min_length=1, max_length=2000) = None
    actor: str = Field(default="agent", min_length=1, max_length=256, description="Who records it.")


# ---------------------------------------------------------------------- planning from procedures (seed 003 beta.2)
class PlanFromProceduresFields(BaseModel):
    goal: str = Field(min_length=1, max_length=2000, description="What you want to do (matched against procedures).")
    as_of: as_of_field("Plan from procedural memory") = None
    limit: int = Field(default=5, ge=1, le=50, description="At most this many procedures per class.")


class SkillFromProcedureFields(BaseModel):
    candidate_id: CandidateId = Field(description="An accepted procedure candidate (cand_...), e.g. a mined one.")
    skill_id: optional(
        Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$")],
        "The new skill's id (default procedure-<candidate>).",
        max_length=200,
    ) = None
    actor: str = Field(default="agent", min_length=1, max_length=256, description="Who proposes it.")
