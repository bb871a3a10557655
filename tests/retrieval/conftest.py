"""Fixtures shared by the retrieval tests."""

from __future__ import annotations

import pytest

from zaxy_agents.retrieval.embeddings import WordLlamaEmbedder, resolve_embedder


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    """The WordLlama re-rank embedder, loaded once per module (skips when the ``wordllama`` extra is absent)."""
    pytest.importorskip("wordllama")
    provider = resolve_embedder("wordllama")
    assert isinstance(provider, WordLlamaEmbedder)
    return provider
