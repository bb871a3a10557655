"""Erasure reaches every retrieval index: postings, terms, words, vectors (zeroed in place) and the ANN graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval.ann import ann_available
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.embeddings import HashingEmbedder
from zaxy_agents.retrieval.vector_index import VectorIndex


@pytest.mark.skipif(not ann_available(), reason="usearch (the 'ann' extra) is not installed")
def test_an_erased_vector_leaves_no_bytes_and_the_graph_is_dropped(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    table = {f"text {i}": rng.normal(size=32).astype(np.float32) for i in range(300)}
    keys = [("s", i + 1) for i in range(len(table))]
    texts = dict(zip(keys, table, strict=True))

    class TableEmbedder(HashingEmbedder):
        def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            return np.vstack([table[text] for text in texts])

        def embed_query(self, text: str) -> np.ndarray:
            return table[text]

    index = VectorIndex(TableEmbedder(32), ann_threshold=10)
    indexes = open_standalone(tmp_path / "derived", index)
    index.text_source = lambda wanted: {key: texts[key] for key in wanted}
    index.key_source = lambda: keys
    index.embed_pending()
    assert index.build_ann() == 300
    secret = table["text 41"] / np.linalg.norm(table["text 41"])
    files = list((tmp_path / "derived").iterdir())
    assert any(secret.astype("<f4").tobytes() in path.read_bytes() for path in files if path.suffix == ".f32")
    assert index.search("text 41", 1)[0][0] == ("s", 42)
    indexes.erase("s", [42])
    data = b"".join(path.read_bytes() for path in (tmp_path / "derived").iterdir() if path.is_file())
    assert secret.astype("<f4").tobytes() not in data
    assert secret.astype("<f2").tobytes() not in data  # the graph held f16 copies: it is gone
    assert not any(path.name.startswith("ann-") for path in (tmp_path / "derived").iterdir())
    assert all(key != ("s", 42) for key, _ in index.search("text 41", 10))
    assert index.search("text 40", 1)[0][0] == ("s", 41)  # the others are still found (exactly, until rebuilt)
    assert index.build_ann() == 300 and all(key != ("s", 42) for key, _ in index.search("text 41", 10))
    index.close()
    indexes.close()


def test_erasing_through_the_projector_empties_every_lane(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom", use_graph=False, embedder="hashing") as memory:
        memory.append("ops", "fact.asserted", {"subject": "vault", "fact": "the vault code is quixotrellis"})
        kept = memory.append("ops", "transcript.turn", {"role": "user", "text": "the vault opens at nine"})
        memory.embed_pending()
        assert memory.query("quixotrellis", sessions=["ops"]).hits
        memory.projector.erase("ops", [1], None)
        db = memory.projector.derived.reader()
        for table in ("verbatim_term", "entity_keyword_term"):
            assert not db.execute(f"SELECT 1 FROM {table} WHERE term LIKE 'quixotrelli%'").fetchall()
        assert not db.execute("SELECT 1 FROM verbatim_word WHERE word LIKE 'quixotrelli%'").fetchall()
        assert not db.execute("SELECT 1 FROM vectors_key WHERE seq = 1").fetchall()
        verbatim = memory.retriever.verbatim.search("vault", 5, sessions=["ops"])
        assert [hit.seq for hit in verbatim] == [kept.seq]
        assert all(key != ("ops", 1) for key, _ in memory.retriever.vectors.search("vault code", 5))
