"""What extractors produce and what the projection stores: entity/relation drafts and planned rows.

Extractors are pure functions of one event (no LLM, no I/O). The planner turns their drafts into rows with
stable identities and validity windows; a store writes the rows. Everything here is plain dataclasses so the
projection path stays fast (thousands of events per second).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from zaxy_agents.errors import InvalidRequestError

RELATION_TYPE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
MAX_RELATION_TYPE_LENGTH = 60

EntityMode = Literal["assert", "reference"]

# Relation names the graph spine uses itself; a user relation type may not take one of these labels.
RESERVED_RELATION_LABELS = frozenset(
    {
        "HAS_EVENT",
        "NEXT_EVENT",
        "PREVIOUS_EVENT",
        "HAS_VERSION",
        "PROJECTED_ENTITY",
        "SUPERSEDED_BY",
        "PREVIOUS_VERSION",
        "CITES_SOURCE",
        "RELATES",
        "PROJECTED_RELATION",
        "SESSION",
        "EVENT",
        "ENTITY",
        "ENTITYKEY",
        "SOURCE",
        "FEEDBACK",
        "EXTRACTIONFAILURE",
        "MIGRATION",
    }
)


def normalise_name(name: str) -> str:
    """Identity form of a name: case-folded, whitespace collapsed (display names keep their case)."""
    return " ".join(name.casefold().split())


# Keys of recent (session, type, name) triples. Planning one event asks for the same keys several times (the
# prefetch, the entity, each relation's two ends) and a conversation's speakers recur on every turn: 7.8 calls per
# realistic event, ~2.5 distinct (docs/benchmarks.md, "Round K"). A key is a pure function of its three strings.
_KEYS: dict[tuple[str, str, str], str] = {}
KEY_MEMO_LIMIT = 8192


def entity_key(session: str, entity_type: str, name: str) -> str:
    """Stable identity of an entity across its versions."""
    triple = (session, entity_type, name)
    try:
        key = _KEYS.get(triple)
    except TypeError:  # an unhashable part: computed without the memo
        return f"{session}\x1f{entity_type}\x1f{normalise_name(name)}"
    if key is None:
        key = f"{session}\x1f{entity_type}\x1f{normalise_name(name)}"
        if type(session) is str and type(entity_type) is str and type(name) is str:  # (only str keys:
            if len(_KEYS) >= KEY_MEMO_LIMIT:  # a hit then means the same three strings)
                _KEYS.clear()  # bounded: one-off names (turn ids) would otherwise pile up
            _KEYS[triple] = key
    return key


def stable_id(*parts: object, length: int = 24) -> str:
    """A deterministic id from its parts (rebuilding the same log yields the same ids)."""
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:length]


# Relation types that passed :func:`typed_label`'s checks, with their labels (only valid ones are kept).
_LABELS: dict[str, str] = {}
LABEL_MEMO_LIMIT = 4096


def typed_label(relation_type: str) -> str:
    """``calls_symbol`` -> ``CALLS_SYMBOL``; anything but strict snake_case is rejected.

    This is the only way a user-supplied string becomes part of a Cypher statement (a table name), so the
    check is strict: lowercase ASCII words joined by single underscores, at most 60 characters.
    """
    if type(relation_type) is str:
        label = _LABELS.get(relation_type)
        if label is not None:  # checked before: a stream uses a handful of relation types (one check each)
            return label
    if (
        not isinstance(relation_type, str)
        or len(relation_type) > MAX_RELATION_TYPE_LENGTH
        or not (RELATION_TYPE.fullmatch(relation_type))
    ):
        raise InvalidRequestError(
            f"relation type {relation_type!r} is not strict snake_case",
            field="relation_type",
            remediation="Use lowercase words joined by single underscores, e.g. 'calls_symbol' (max 60 chars).",
        )
    label = relation_type.upper()
    if label in RESERVED_RELATION_LABELS:
        raise InvalidRequestError(
            f"relation type {relation_type!r} is reserved by the graph schema",
            field="relation_type",
            remediation="Choose a more specific name, e.g. 'task_has_event' instead of 'has_event'.",
        )
    if type(relation_type) is str and len(_LABELS) < LABEL_MEMO_LIMIT:
        _LABELS[relation_type] = label
    return label


@dataclass(slots=True)
class EntityDraft:
    """An entity an event asserts (a new version) or merely references (created only if absent)."""

    name: str
    entity_type: str
    summary: str = ""
    properties: dict[str, Any] = field(default_factory=dict)
    mode: EntityMode = "assert"
    valid_from: str | None = None  # defaults to the event's timestamp
    importance: float = 0.5
    source_path: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    checksum: str | None = None


@dataclass(slots=True)
class EntityRef:
    """Points at an entity by identity (its current version is resolved at planning time)."""

    name: str
    entity_type: str


@dataclass(slots=True)
class RelationDraft:
    """A typed edge between two entities, with its audit trail."""

    source: EntityRef
    target: EntityRef
    relation_type: str
    inferred: bool = False
    confidence: float = 1.0
    inference_method: str = "deterministic"
    evidence_session: str | None = None
    evidence_seq: int | None = None
    evidence_hash: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Invalidation:
    """Close the validity window of an entity's current version (nothing is deleted)."""

    target: EntityRef
    reason: str = ""
    at: str | None = None  # when it stopped being true (the seed's invalid_at); default: the event's timestamp


@dataclass(slots=True)
class FeedbackSignal:
    """Reinforcement (positive) or audit-only feedback (negative) about an entity."""

    target: EntityRef
    signal: str
    weight: float
    positive: bool


@dataclass(slots=True)
class Extraction:
    """Everything one event contributes to the projection."""

    entities: list[EntityDraft] = field(default_factory=list)
    relations: list[RelationDraft] = field(default_factory=list)
    invalidations: list[Invalidation] = field(default_factory=list)
    feedback: list[FeedbackSignal] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    searchable_text: str = ""  # what the verbatim lane indexes for this event ("" = not indexed)
    speaker: str | None = None  # who said it (turns, prompts): a retrieval cue learned from metadata
    caption: str | None = None  # text describing an attachment (image caption, file title)
    segment: str | None = None  # a sub-thread inside the session (e.g. a conversation's sitting)
    occurred_at: str | None = None  # when it happened, if the payload says (else the event timestamp)


@dataclass(frozen=True, slots=True)
class SearchDoc:
    """One event as the verbatim lane indexes it: text plus the metadata retrieval uses as cues."""

    session: str
    seq: int
    hash: str
    event_type: str
    text: str
    speaker: str | None
    caption: str | None
    segment: str | None
    occurred_at: str
