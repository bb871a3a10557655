"""Payload contracts: event types whose payloads are validated *before* the append.

Free-form event types are accepted as-is (their extractors report what they cannot use). Types listed here
carry machine-generated structure (inferred edges; later causal edges and consolidation records) that other
features rely on, so an invalid payload is rejected with a clear error and nothing is written.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

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


class InferenceEdgePayload(BaseModel):
    """``inference.edge.generated``: a non-deterministic edge with its method, confidence and evidence."""

    model_config = ConfigDict(extra="forbid")

    source: EntityPointer
    target: EntityPointer
    relation_type: str
    confidence: float = Field(ge=0.0, le=1.0)
    inference_method: str = Field(min_length=1, max_length=120)
    evidence: EvidenceCitation
    source_event_seq: int | None = Field(default=None, ge=1)

    @field_validator("relation_type")
    @classmethod
    def _snake_case(cls, value: str) -> str:
        try:
            typed_label(value)
        except InvalidRequestError as exc:
            raise ValueError(f"{exc.message}; {exc.remediation}") from None
        return value


_CONTRACTS: dict[str, type[BaseModel]] = {"inference.edge.generated": InferenceEdgePayload}


def register_contract(event_type: str, model: type[BaseModel]) -> None:
    """Declare that ``event_type`` payloads must validate against ``model`` before they are appended."""
    _CONTRACTS[event_type] = model


def contract_for(event_type: str) -> type[BaseModel] | None:
    return _CONTRACTS.get(event_type)


def validate_contract(event_type: str, payload: Any, *, field_prefix: str = "") -> None:
    """Raise :class:`InvalidRequestError` naming the first bad field when a contracted payload is invalid."""
    model = _CONTRACTS.get(event_type)
    if model is None:
        return
    try:
        model.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(part) for part in first["loc"])
        raise InvalidRequestError(
            f"{event_type} payload is invalid at {location or 'payload'}: {first['msg']}",
            field=f"{field_prefix}payload.{location}" if location else f"{field_prefix}payload",
            remediation=f"Follow the {model.__name__} contract documented in docs/graph-schema.md.",
            details={"errors": [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()[:10]]},
        ) from exc
