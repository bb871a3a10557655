"""The WordLlama embedder re-ranks fused candidates through the real engine (skipped without the extra)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval.embeddings import WordLlamaEmbedder, retrieval_role
from zaxy_agents.retrieval.profiles import PROFILES

pytest.importorskip("wordllama")

QUESTION = "What instruments does Caroline play?"
TURNS = [
    ("Caroline", "I play chess with my dad."),
    ("Melanie", "Nice, who wins?"),
    ("Caroline", "I play football on Sundays."),
    ("Melanie", "Sounds fun."),
    ("Caroline", "Last night after work I had a long practice, I play the violin and the cello in an orchestra."),
    ("Melanie", "Wow, that is great."),
]


@pytest.fixture
def memory(tmp_path: Path, embedder: WordLlamaEmbedder):
    with MemoryFabric.from_path(tmp_path / "loom", embedder=embedder) as fabric:
        for speaker, text in TURNS:
            fabric.append("chat", "transcript.turn", {"role": "user", "speaker": speaker, "text": text})
        fabric.embed_pending()
        yield fabric


def test_wordllama_loads_offline_and_knows_related_words(embedder: WordLlamaEmbedder) -> None:
    assert embedder.dims == 256 and retrieval_role(embedder) == "rerank"
    vectors = embedder.embed_documents(["violin", "parking ticket"])
    query = embedder.embed_query("musical instrument")
    assert vectors.shape == (2, 256) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert float(vectors[0] @ query) > float(vectors[1] @ query)
    assert embedder.embed_documents([]).shape == (0, 256)


def test_the_engine_reranks_with_it_instead_of_running_a_vector_lane(memory: MemoryFabric) -> None:
    response = memory.query(QUESTION, sessions=["chat"], k=6)
    assert response.embedding_lag == 0 and not response.warnings
    assert "vector" not in response.lane_counts  # a rerank-role embedder does not propose candidates
    violin = next(hit for hit in response.hits if "violin" in hit.text)
    assert violin.score_explanation["lane_ranks"]["vector"] == 1  # the closest candidate to the question
    assert all("vector" in hit.score_explanation["lane_scores"] for hit in response.hits)
    assert all("fused_score" in hit.score_explanation["boosts"] for hit in response.hits)
    scores = [hit.score for hit in response.hits]
    assert scores == sorted(scores, reverse=True)


def test_the_rerank_weight_decides_how_far_similarity_moves_a_hit(memory: MemoryFabric) -> None:
    balanced = PROFILES["balanced"]

    def top(weight: float) -> str:
        profile = replace(balanced, rerank_weight=weight)
        return memory.retriever.search(QUESTION, sessions=["chat"], k=3, profile=profile).hits[0].text

    assert "violin" not in top(0.0)  # lexically, the short "I play ..." turns win
    assert "violin" in top(5.0)


def test_lane_role_embedders_still_run_the_vector_lane(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom", embedder="hashing:64") as fabric:
        fabric.append("chat", "transcript.turn", {"role": "user", "speaker": "Caroline", "text": "I play chess."})
        fabric.embed_pending()
        response = fabric.query("chess", sessions=["chat"])
        assert retrieval_role(fabric.embedder) == "lane"
        assert "vector" in response.lane_counts
        assert all("fused_score" not in hit.score_explanation["boosts"] for hit in response.hits)


def test_the_query_path_embeds_like_the_batch_path(embedder: WordLlamaEmbedder) -> None:
    """A few texts (a question, its expansion seeds) skip the tokenizer's thread pool; the vectors are the same."""
    from zaxy_agents.retrieval.embeddings import FEW_TEXTS

    texts = ["What instruments does Caroline play?", "guitar", "naïve café ☕", "word " * 400]
    few = embedder.embed_documents(texts)
    batch = np.asarray(embedder._model.embed(texts * (FEW_TEXTS // len(texts) + 1), norm=True))[: len(texts)]
    assert len(texts) <= FEW_TEXTS and np.allclose(few, batch, atol=1e-6)
    assert not embedder.embed_documents([""]).any()  # no tokens: a zero vector, never NaN
    many = embedder.embed_documents(["", *texts] * FEW_TEXTS)  # the batch path too
    assert np.isfinite(many).all() and not many[0].any() and np.allclose(many[1 : len(texts) + 1], few, atol=1e-6)
