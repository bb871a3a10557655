"""Payload contract of ``reasoning.primitive.called`` (seed 002/003 beta.1), checked before the append."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .primitives import PRIMITIVES, Phase

CALLED_EVENT = "reasoning.primitive.called"
OBSERVATION_ENTITY = "reasoning_primitive_call"
AUTHORITY_STATUS = "non_authoritative"
CITATION_PATTERN = r"^eventloom://[A-Za-z0-9_.-]{1,128}/events/[1-9][0-9]*#[0-9a-f]{12}$"


class PrimitiveCalledPayload(BaseModel):
    """One call of a reasoning primitive: what it was, its phase, how it went, what backed it."""

    model_config = ConfigDict(extra="forbid")
    contract_remediation: ClassVar[str] = (
        "A reasoning primitive observation needs primitive (one of zaxy_agents.reasoning.primitives.PRIMITIVES), "
        "phase (its deterministic phase), status (ok, empty), result_count, cited_evidence_count, "
        "citations (eventloom:// strings, at most 20), tool and authority_status 'non_authoritative'. Zaxy records "
        "these itself when an agent calls a primitive tool."
    )

    primitive: str = Field(min_length=1, max_length=64)
    phase: Phase
    status: Literal["ok", "empty"]
    result_count: int = Field(ge=0, le=1_000_000)
    cited_evidence_count: int = Field(ge=0, le=1_000_000)
    citations: list[str] = Field(default_factory=list, max_length=20)
    tool: str = Field(min_length=1, max_length=64)
    authority_status: Literal["non_authoritative"]

    @model_validator(mode="after")
    def _routed(self) -> PrimitiveCalledPayload:
        expected = PRIMITIVES.get(self.primitive)
        if expected is None:
            raise ValueError(f"unknown primitive {self.primitive!r}")
        if self.phase != expected:
            raise ValueError(f"the phase of {self.primitive} is {expected} (deterministic routing)")
        for citation in self.citations:
            if not citation.startswith("eventloom://"):
                raise ValueError(f"not a citation: {citation!r}")
        return self


CONTRACTS: dict[str, type[BaseModel]] = {CALLED_EVENT: PrimitiveCalledPayload}
