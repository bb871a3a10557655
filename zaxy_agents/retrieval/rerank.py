"""Embedding re-rank: a second stage that re-orders the fused candidates by their similarity to the query.

For embedders whose ``retrieval_role`` is ``"rerank"`` (static token embeddings such as WordLlama): too weak to
find memories on their own (a lane of their own costs LoCoMo R@5 several points), they still know that a violin
is an instrument. The top ``profile.candidates`` fused hits are re-scored by reciprocal-rank fusion of their
fused rank and their cosine rank: ``1 / (60 + fused_rank) + rerank_weight / (60 + cosine_rank)``; hits further
down keep their order below them. Hits with no vector yet (embedding lag) rank last on the cosine side.
Measured on the LoCoMo tuning half and checked on the held-out half (docs/retrieval.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .profiles import RRF_K, RetrievalProfile
from .vector_index import VectorIndex

if TYPE_CHECKING:  # the engine imports this module
    from .engine import RetrievalHit


def rerank_by_embedding(
    query: str, hits: list[RetrievalHit], vectors: VectorIndex, profile: RetrievalProfile
) -> list[RetrievalHit]:
    """Return ``hits`` (already sorted by fused score) re-ordered; scores become the re-rank scores."""
    if not hits or not profile.rerank_weight:
        return hits
    head = hits[: profile.candidates]
    similarity = vectors.similarities(query, [(hit.session, hit.seq) for hit in head])
    if not similarity:
        return hits
    by_cosine = sorted(range(len(head)), key=lambda i: -similarity.get((head[i].session, head[i].seq), float("-inf")))
    cosine_rank = {index: rank for rank, index in enumerate(by_cosine, start=1)}
    for fused_rank, hit in enumerate(hits, start=1):
        hit.boosts["fused_score"] = round(hit.score, 8)
        hit.score = 1.0 / (RRF_K + fused_rank)
        if fused_rank <= len(head):
            key = (hit.session, hit.seq)
            if key in similarity:
                hit.lanes["vector"] = similarity[key]
                hit.ranks["vector"] = cosine_rank[fused_rank - 1]
                hit.score += profile.rerank_weight / (RRF_K + cosine_rank[fused_rank - 1])
    return sorted(hits, key=lambda h: (-h.score, h.session, h.seq))
