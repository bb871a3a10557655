"""Payload contracts: event types whose payloads are validated *before* the append.

Free-form event types are accepted as-is (their extractors report what they cannot use). Types listed here
carry machine-generated structure (inferred edges; later causal edges and consolidation records) that other
features rely on, so an invalid payload is rejected with a clear error and nothing is written.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from zaxy_agents.errors import InvalidRequestError

from .model import typed_label

HASH_PATTERN = r"^[0-9a-f]{64}$"


class EntityPointer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=500)
    entity_type: str = Field(min_length=1, max_length=64)


class EvidenceCitation(BaseModel):
    """Cites a source event by seq and full 64-hex hash (optionally in another session)."""

    model_config = ConfigDict(extra="forbid")

    seq: int = Field(ge=1)
    hash: str = Field(pattern=HASH_PATTERN)
    session: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{1,128}$")


class EdgeEvidence(BaseModel):
    """The evidence of an inferred or causal edge, in the seeds' shape: ``{source_event_seq, source_event_hash,
    reason?}`` (plus ``session`` when the event is in another session). This project's earlier shape
    ``{seq, hash, session?}`` is read too (old logs), and is what :attr:`seq` / :attr:`hash` return."""

    model_config = ConfigDict(extra="forbid")

    source_event_seq: int = Field(ge=1)
    source_event_hash: str | None = Field(default=None, pattern=HASH_PATTERN)
    session: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{1,128}$")
    reason: str | None = Field(default=None, max_length=2000)

    @model_validator(mode="before")
    @classmethod
    def _earlier_shape(cls, data: Any) -> Any:
        if isinstance(data, dict) and ("seq" in data or "hash" in data):
            data = dict(data)
            if "source_event_seq" not in data and "seq" in data:
                data["source_event_seq"] = data.pop("seq")
            if "source_event_hash" not in data and "hash" in data:
                data["source_event_hash"] = data.pop("hash")
        return data

    @property
    def seq(self) -> int:
        return self.source_event_seq

    @property
    def hash(self) -> str | None:
        return self.source_event_hash


class CitedEdgeEvidence(EdgeEvidence):
    """Edge evidence that must pin the event by its full hash (causal edges)."""

    source_event_hash: str = Field(pattern=HASH_PATTERN)


class InferenceEdgePayload(BaseModel):
    """``inference.edge.generated``: a non-deterministic edge with its method, confidence and (optional, seed 002)
    evidence. Evidence without a hash, or none, projects an uncited edge (reported by ``inferred-status``)."""

    model_config = ConfigDict(extra="forbid")

    source: EntityPointer
    target: EntityPointer
    relation_type: str
    confidence: float = Field(ge=0.0, le=1.0)
    inference_method: str = Field(min_length=1, max_length=120)
    evidence: EdgeEvidence | None = None
    source_event_seq: int | None = Field(default=None, ge=1)

    @field_validator("relation_type")
    @classmethod
    def _snake_case(cls, value: str) -> str:
        try:
            typed_label(value)
        except InvalidRequestError as exc:
            raise ValueError(f"{exc.message}; {exc.remediation}") from None
        return value


BUILTIN_CONTRACTS: dict[str, type[BaseModel]] = {"inference.edge.generated": InferenceEdgePayload}


class ContractTable:
    """Event type -> payload model, built once from explicit mappings (see ``zaxy_agents.fabric.features``)."""

    def __init__(self, *mappings: dict[str, type[BaseModel]]) -> None:
        self._models: dict[str, type[BaseModel]] = {}
        for mapping in mappings:
            self._models.update(mapping)

    def contract_for(self, event_type: str) -> type[BaseModel] | None:
        return self._models.get(event_type)

    def validate(self, event_type: str, payload: Any, *, field_prefix: str = "") -> None:
        """Raise :class:`InvalidRequestError` naming the first bad field when a contracted payload is invalid."""
        model = self._models.get(event_type)
        if model is not None:
            validate_payload(model, event_type, payload, field_prefix=field_prefix)


def validate_payload(model: type[BaseModel], event_type: str, payload: Any, *, field_prefix: str = "") -> None:
    """Validate ``payload`` against ``model``; a clear :class:`InvalidRequestError` naming the first bad field."""
    try:
        model.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(part) for part in first["loc"])
        remediation = getattr(model, "contract_remediation", None)  # a ClassVar on contracted models
        raise InvalidRequestError(
            f"{event_type} payload is invalid at {location or 'payload'}: {first['msg']}",
            field=f"{field_prefix}payload.{location}" if location else f"{field_prefix}payload",
            remediation=remediation or f"Follow the {model.__name__} contract documented in docs/graph-schema.md.",
            details={"errors": [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()[:10]]},
        ) from exc
