"""Query expansion with the WordLlama re-rank embedder, through the real engine (skipped without the extra)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection.model import SearchDoc
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.embeddings import WordLlamaEmbedder
from zaxy_agents.retrieval.expansion import QueryExpander
from zaxy_agents.retrieval.profiles import PROFILES
from zaxy_agents.retrieval.verbatim import VerbatimIndex

from .instrument_chat import QUESTION, TURNS

pytest.importorskip("wordllama")


def _fill(fabric: MemoryFabric) -> None:
    for speaker, text in TURNS:
        fabric.append("chat", "transcript.turn", {"role": "user", "speaker": speaker, "text": text})
    fabric.append("other", "transcript.turn", {"role": "user", "speaker": "Jon", "text": "I listen to music daily."})
    fabric.embed_pending()


def _texts(fabric: MemoryFabric, profile: object = "balanced") -> list[str]:
    return [hit.text for hit in fabric.retriever.search(QUESTION, sessions=["chat"], k=5, profile=profile).hits]


def test_expansion_finds_evidence_that_shares_no_word_with_the_question(
    tmp_path: Path, embedder: WordLlamaEmbedder
) -> None:
    without = replace(PROFILES["balanced"], expansion_weight=0.0)
    with MemoryFabric.from_path(tmp_path / "loom", embedder=embedder) as fabric:
        _fill(fabric)
        assert not any("guitar" in text for text in _texts(fabric, without))  # lexically unreachable
        found = fabric.query(QUESTION, sessions=["chat"], k=5)
        assert not found.warnings
        assert "guitar" in found.hits[0].text
        assert found.hits[0].score_explanation["lane_ranks"]["verbatim"] == 1
    # Reopened from disk, the index still knows the surface words behind its terms.
    with MemoryFabric.from_path(tmp_path / "loom", embedder=embedder) as fabric:
        assert fabric.project() == 0
        assert "guitar" in _texts(fabric)[0]


def test_expansion_takes_close_words_of_the_searched_sessions_only(tmp_path: Path, embedder: WordLlamaEmbedder) -> None:
    index = VerbatimIndex()
    listeners = open_standalone(tmp_path / "index", index)
    stamp = "2026-01-01T00:00:00Z"
    for seq, (speaker, text) in enumerate(TURNS, start=1):
        index.add(SearchDoc("chat", seq, f"h{seq}", "transcript.turn", text, speaker, None, None, stamp))
    index.add(SearchDoc("other", 1, "p1", "transcript.turn", "I listen to music daily.", "Jon", None, None, stamp))
    expander = QueryExpander(embedder, index)

    in_chat = expander.expand(QUESTION, 0.4, ["chat"])
    assert "guitar" in in_chat and "music" not in in_chat  # music is only in another session
    assert all(0.0 < weight <= 0.4 for weight in in_chat.values())
    assert "music" in expander.expand(QUESTION, 0.4, None)
    assert expander.expand(QUESTION, 0.0, ["chat"]) == {}
    # Names are not expanded: a speaker's name is not a topic.
    assert expander.expand("Caroline?", 0.4, None) == {}
    listeners.store.close()
