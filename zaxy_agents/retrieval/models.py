"""Serializable retrieval results (what `fabric.query` returns to surfaces)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .engine import RetrievalHit, RetrievalResult


class QueryHit(BaseModel):
    """One retrieved event with its citation, status and score explanation."""

    citation: str
    session: str
    seq: int
    event_type: str
    text: str
    score: float
    status: str = Field(description="current | superseded | invalidated | event")
    entity: dict[str, Any] | None = None
    salience: dict[str, float] | None = None
    attenuated: bool = Field(
        default=False, description="below the retrieval profile's salience floor: out of default ranking"
    )
    score_explanation: dict[str, Any]

    @classmethod
    def from_hit(cls, hit: RetrievalHit, result: RetrievalResult) -> QueryHit:
        return cls(
            citation=hit.citation,
            session=hit.session,
            seq=hit.seq,
            event_type=hit.event_type,
            text=hit.text,
            score=round(hit.score, 8),
            status=hit.status,
            entity=hit.entity.to_dict() if hit.entity is not None else None,
            salience=hit.salience,
            attenuated=hit.attenuated,
            score_explanation=hit.score_explanation(result.profile),
        )


class QueryResponse(BaseModel):
    query: str
    profile: str
    retrieval_profile: dict[str, Any] = Field(default_factory=dict, description="the 2.2 ranking features applied")
    as_of: str | None = None
    hits: list[QueryHit]
    lane_counts: dict[str, int]
    superseded_excluded: int
    warnings: list[str]
    took_ms: float
    embedding_lag: int = 0
    degraded: str | None = None

    @classmethod
    def from_result(
        cls,
        result: RetrievalResult,
        *,
        embedding_lag: int = 0,
        degraded: str | None = None,
    ):
        """The response of a result whose hits' texts were already read (the model reads nothing itself)."""
        return cls(
            query=result.query,
            profile=result.profile.name,
            retrieval_profile=result.ranking.to_dict() if result.ranking is not None else {},
            as_of=result.as_of,
            hits=[QueryHit.from_hit(hit, result) for hit in result.hits],
            lane_counts=result.lane_counts,
            superseded_excluded=len(result.excluded),
            warnings=result.warnings,
            took_ms=round(result.took_ms, 3),
            embedding_lag=embedding_lag,
            degraded=degraded,
        )
