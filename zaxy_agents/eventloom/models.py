"""Pydantic models of the Eventloom: the event envelope, drafts, heads, verification reports."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .citations import format_citation


class SecurityBlock(BaseModel):
    """What redaction changed before hashing: the JSON paths whose values were replaced."""

    model_config = ConfigDict(extra="allow", frozen=True)

    redacted_paths: list[str] = Field(default_factory=list)
    redaction_version: int = 1


class Event(BaseModel):
    """One immutable, hash-chained event. See docs/eventloom.md for the exact hash specification."""

    model_config = ConfigDict(frozen=True)

    seq: int = Field(ge=1, description="1-based, contiguous position in the session log")
    timestamp: str = Field(description="UTC ISO-8601 with a Z suffix, set at append time")
    type: str = Field(description="dotted lowercase event type, e.g. task.completed")
    actor: str
    session: str
    payload: dict[str, Any]
    prev_hash: str
    hash: str
    id: str
    security: SecurityBlock | None = None
    spec: int | None = Field(default=None, description="hash specification (absent: 1); see docs/eventloom.md")
    salt: str | None = None
    batch: list[int] | None = Field(default=None, description="[position, size] in a multi-event write")
    content_digest: str | None = Field(default=None, description="only on an erased event")
    erased: dict[str, Any] | None = Field(default=None, description="set when the content was erased")

    @property
    def citation(self) -> str:
        """``eventloom://<session>/events/<seq>#<hash12>``."""
        return format_citation(self.session, self.seq, self.hash)

    def envelope(self) -> dict[str, Any]:
        """The plain-dict envelope exactly as stored (optional fields omitted when absent)."""
        data = self.model_dump(mode="json")
        for key in _OPTIONAL_ENVELOPE_FIELDS:
            if data.get(key) is None:
                data.pop(key, None)
        return data


_OPTIONAL_ENVELOPE_FIELDS = ("security", "spec", "salt", "batch", "content_digest", "erased")


class EventDraft(BaseModel):
    """What a caller supplies for an append; seq, hashes, id and timestamp are assigned by the log."""

    model_config = ConfigDict(extra="forbid")

    type: str
    payload: dict[str, Any] = Field(default_factory=dict)
    actor: str = "agent"


class EventHead(BaseModel):
    """The last event of a session: where the next append will chain from."""

    session: str
    seq: int
    hash: str

    @property
    def citation(self) -> str:
        return format_citation(self.session, self.seq, self.hash)


class SessionSummary(BaseModel):
    """One row of ``zaxy sessions``."""

    session: str
    event_count: int
    head_hash: str | None = None
    size_bytes: int = 0
    modified: str | None = None
    damaged: str | None = Field(default=None, description="why the session cannot be read (see `zaxy repair`)")


class VerifyReport(BaseModel):
    """Result of recomputing a session's chain. ``ok`` is False at the first broken seq."""

    session: str
    ok: bool
    event_count: int
    head_hash: str | None = None
    first_broken_seq: int | None = None
    reason: str | None = None
    torn_tail_bytes: int = 0
    warnings: list[str] = Field(default_factory=list)


def event_from_envelope(envelope: dict[str, Any]) -> Event:
    """Build an :class:`Event` from an envelope this process just sealed (already valid: skip validation).

    The instance ``Event.model_construct(**envelope)`` builds (with the security block as a ``SecurityBlock``),
    without its generic loop over aliases, validation aliases and default factories: ~16-25 us per event against
    ~10 in isolation on the dev VM, ~8 us of a batched append's ~100 in situ (docs/benchmarks.md). It holds because
    ``Event`` has no alias, no private attribute, no post-init, ignores extra keys and defaults every optional
    field to ``None`` (checked once at import, :func:`_fields`); an envelope without a required field takes
    ``model_construct`` itself (tests/eventloom/test_event_construct.py compares both, attribute by attribute)."""
    security = envelope.get("security")
    fields = dict(envelope)
    fields["security"] = None if security is None else SecurityBlock.model_construct(**security)
    if not fields.keys() >= _REQUIRED:
        return Event.model_construct(**fields)
    event = _new(Event)
    _set(event, "__dict__", {name: fields.get(name) for name in _NAMES})  # declaration order, absent: None
    _set(event, "__pydantic_fields_set__", _NAMES_SET & fields.keys())
    _set(event, "__pydantic_extra__", None)
    _set(event, "__pydantic_private__", None)
    return event


def _fields() -> tuple[tuple[str, ...], frozenset[str]]:
    """:class:`Event`'s field names in declaration order and its required ones; refuses a model the fast path of
    :func:`event_from_envelope` would build differently from ``model_construct``."""
    if (
        Event.model_config.get("extra") not in (None, "ignore")
        or Event.__pydantic_post_init__
        or Event.__private_attributes__
        or Event.__pydantic_root_model__
    ):
        raise TypeError("event_from_envelope's fast path no longer matches Event: use Event.model_construct")
    for name, field in Event.__pydantic_fields__.items():
        aliased = field.alias is not None or field.validation_alias is not None
        if aliased or field.default_factory is not None or (not field.is_required() and field.default is not None):
            raise TypeError(f"Event.{name}: an alias, a default factory or a default other than None")
    names = tuple(Event.__pydantic_fields__)
    return names, frozenset(name for name in names if Event.__pydantic_fields__[name].is_required())


_NAMES, _REQUIRED = _fields()
_NAMES_SET = frozenset(_NAMES)
_new = object.__new__
_set = object.__setattr__
