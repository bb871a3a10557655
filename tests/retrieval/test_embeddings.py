"""Embedder resolution: LangChain Embeddings, callables, strings; shapes checked; ids stamped."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.retrieval.embeddings import (
    CallableEmbedder,
    EmbeddingProvider,
    HashingEmbedder,
    LangChainEmbedder,
    resolve_embedder,
)


def test_langchain_embeddings_are_accepted() -> None:
    provider = resolve_embedder(DeterministicFakeEmbedding(size=16))
    assert isinstance(provider, LangChainEmbedder) and isinstance(provider, EmbeddingProvider)
    matrix = provider.embed_documents(["a", "b"])
    assert matrix.shape == (2, 16) and matrix.dtype == np.float32
    assert provider.embed_query("a").shape == (16,)
    assert provider.model_id.endswith("@1") and provider.dims == 16


def test_callables_are_accepted_and_shape_checked() -> None:
    provider = resolve_embedder(lambda texts: [[1.0, 0.0]] * len(texts))
    assert isinstance(provider, CallableEmbedder)
    assert provider.embed_documents(["x", "y", "z"]).shape == (3, 2)
    broken = resolve_embedder(lambda texts: [[1.0, 0.0]])
    with pytest.raises(InvalidRequestError) as info:
        broken.embed_documents(["x", "y"])
    assert info.value.field == "embed"


def test_hashing_embedder_is_deterministic_and_lexical() -> None:
    provider = resolve_embedder("hashing:64")
    assert isinstance(provider, HashingEmbedder) and provider.dims == 64
    a, b, c = provider.embed_documents(["payment retry backoff", "payment retry backoff", "holiday photos"])
    assert np.allclose(a, b) and float(a @ c) < float(a @ b)
    assert provider.model_id == "zaxy-hashing-64@1"


def test_unknown_specs_get_a_structured_error() -> None:
    with pytest.raises(InvalidRequestError) as info:
        resolve_embedder(42)
    assert info.value.field == "embed" and "Embeddings" in info.value.remediation
    assert resolve_embedder(None) is None
