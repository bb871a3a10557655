"""Bring-your-own embeddings (issue 23): a LangChain ``Embeddings`` or a callable as the vector lane or the re-rank,
stamped ``model@version``, never compared across stamps. Driven through MemoryFabric with a deterministic fake."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval.embeddings import resolve_embedder

# A tiny "semantic" space: each concept is an axis, so an instance and its category embed close together.
CONCEPTS = {"guitar": 0, "instrument": 0, "violin": 0, "tart": 1, "recipe": 1, "baking": 1, "hiking": 2, "trip": 2}


class ConceptEmbeddings(Embeddings):
    """Deterministic LangChain embeddings: the normalised sum of the concept axes of a text's words."""

    def __init__(self, dims: int = 4) -> None:
        self.dims = dims
        self.calls: list[list[str]] = []

    def _vector(self, text: str) -> list[float]:
        vector = np.full(self.dims, 0.05)
        for word in re.findall(r"[a-z]+", text.lower()):
            if word.rstrip("s") in CONCEPTS:
                vector[CONCEPTS[word.rstrip("s")]] += 1.0
        return (vector / np.linalg.norm(vector)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


TURNS = [
    "Rosa: we are planning the weekend together.",
    "Rosa: I'm learning the guitar now, two lessons a week.",
    "Ivan: I baked a lemon tart for the party.",
    "Ivan: the weekend weather looks fine.",
]


def _fill(memory: MemoryFabric) -> None:
    for text in TURNS:
        memory.append("chat", "transcript.turn", {"role": "user", "text": text})
    memory.project(["chat"])
    memory.embed_pending()


def test_a_langchain_embedder_runs_the_vector_lane_under_its_stamp(tmp_path: Path) -> None:
    fake = ConceptEmbeddings()
    embedder = resolve_embedder(fake, model_id="concepts@1")
    with MemoryFabric.from_path(tmp_path / "loom", embedder=embedder) as memory:
        _fill(memory)
        hits = memory.query("Which instrument, then?", sessions=["chat"], k=4).hits
        assert "guitar" in hits[0].text  # shares no word with the question: found by the vector lane
        assert "vector" in hits[0].score_explanation["lane_scores"]
        assert memory.embedder.model_id == "concepts@1"


def test_a_new_stamp_re_embeds_instead_of_comparing_across_models(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom", embedder=resolve_embedder(ConceptEmbeddings(), model_id="c@1")) as m:
        _fill(m)
    second = ConceptEmbeddings(dims=6)
    with MemoryFabric.from_path(tmp_path / "loom", embedder=resolve_embedder(second, model_id="c@2")) as memory:
        assert memory.embed_pending() == len(TURNS)  # every event is embedded again by the new model
        assert sum(len(batch) for batch in second.calls) == len(TURNS)
        hits = memory.query("Which instrument, then?", sessions=["chat"], k=4).hits
        assert "guitar" in hits[0].text and not [w for w in memory.query("x").warnings if "vector" in w]


def test_another_shape_under_the_same_stamp_is_refused(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom", embedder=resolve_embedder(ConceptEmbeddings(), model_id="c@1")) as m:
        _fill(m)
    other = resolve_embedder(ConceptEmbeddings(dims=8), model_id="c@1")  # another model, the old stamp
    with MemoryFabric.from_path(tmp_path / "loom", embedder=other) as m:
        m.append("chat", "transcript.turn", {"role": "user", "text": "Rosa: a violin too."})
        with pytest.raises(InvalidRequestError) as info:
            m.embed_pending()
        assert info.value.field == "model_id" and "8-d" in str(info.value)


def test_a_callable_as_re_rank_reorders_without_expanding_queries(tmp_path: Path) -> None:
    fake = ConceptEmbeddings()
    embedder = resolve_embedder(fake.embed_documents, model_id="concepts-fn@1", role="rerank")
    with MemoryFabric.from_path(tmp_path / "loom", embedder=embedder) as memory:
        _fill(memory)
        fake.calls.clear()
        hits = memory.query("Ivan and Rosa: what about the weekend recipe?", sessions=["chat"], k=4).hits
        assert hits
        assert any("vector" in hit.score_explanation["lane_ranks"] for hit in hits)  # the cosine rank is shown
        # Only the question was embedded: no vocabulary words (a paid API would be charged for them silently).
        assert fake.calls == [["Ivan and Rosa: what about the weekend recipe?"]]


def test_bad_stamps_and_roles_get_structured_errors() -> None:
    with pytest.raises(InvalidRequestError) as info:
        resolve_embedder(ConceptEmbeddings(), model_id="no-version")
    assert info.value.field == "model_id"
    with pytest.raises(InvalidRequestError) as info:
        resolve_embedder(lambda texts: [[1.0]] * len(texts), model_id="m@1", role="lane-ish")
    assert info.value.field == "role"


def test_the_docs_example_runs(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    text = (REPO_ROOT / "docs" / "retrieval.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "class Instruments" in b)
    script = tmp_path / "example.py"
    script.write_text(block)
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "guitar" in result.stdout and "eventloom://chat/events/2" in result.stdout and "vector" in result.stdout
