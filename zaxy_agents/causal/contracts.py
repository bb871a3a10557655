"""Payload contract of ``causal.edge.generated``: validated before the append, so an uncited or malformed
causal edge is rejected with a clear error and nothing is written."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from zaxy_agents.projection.contracts import CitedEdgeEvidence, EntityPointer, EvidenceCitation
from zaxy_agents.projection.model import normalise_name

from .taxonomy import GRAPH_PREFIX, CausalRelation

CAUSAL_EDGE_EVENT = "causal.edge.generated"
OUTCOME_EXPLAINED_EVENT = "outcome.explained"


class CausalEdgePayload(BaseModel):
    """A proposed, non-authoritative causal edge citing the source event that supports it."""

    model_config = ConfigDict(extra="forbid")
    contract_remediation: ClassVar[str] = (
        "A causal edge needs source and target {name, entity_type}, relation_type from the taxonomy "
        "(caused, enabled, blocked, prevented, regressed, fixed, explained), graph_relation_type "
        "'causal_<relation_type>', confidence in [0,1], causal_method, review_status 'proposed', "
        "authority_status 'non_authoritative' and evidence {source_event_seq, source_event_hash (64 hex), "
        "reason?, session?} citing a source event; see docs/cognitive.md."
    )

    source: EntityPointer
    target: EntityPointer
    relation_type: CausalRelation
    graph_relation_type: str
    confidence: float = Field(ge=0.0, le=1.0)
    causal_method: str = Field(min_length=1, max_length=120)
    review_status: Literal["proposed"]
    authority_status: Literal["non_authoritative"]
    evidence: CitedEdgeEvidence
    explained_by: EvidenceCitation | None = None
    explanation: str | None = Field(default=None, max_length=2000)
    source_event_seq: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _consistent(self) -> CausalEdgePayload:
        if self.graph_relation_type != GRAPH_PREFIX + self.relation_type:
            raise ValueError(f"graph_relation_type must be {GRAPH_PREFIX + self.relation_type!r}")
        same_type = self.source.entity_type == self.target.entity_type
        if same_type and normalise_name(self.source.name) == normalise_name(self.target.name):
            raise ValueError("a causal edge needs two different entities")
        return self


# Payloads checked before they are appended (collected into the one table in zaxy_agents.fabric.features).
CONTRACTS: dict[str, type[BaseModel]] = {CAUSAL_EDGE_EVENT: CausalEdgePayload}
