"""Embeddings on PostgreSQL: embedded once per deployment, loaded by every other worker by id, searched in
each worker's memory; and the approximate (HNSW) path above its threshold agrees with exact search."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval.ann import ann_available
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.embeddings import HashingEmbedder
from zaxy_agents.retrieval.vector_index import VectorIndex
from zaxy_agents.storage.conformance.harness import PostgresHarness


class CountingEmbedder(HashingEmbedder):
    """Real (hashing) vectors, counting how many texts this worker embedded itself."""

    def __init__(self) -> None:
        super().__init__(128)
        self.embedded = 0

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        self.embedded += len(texts)
        return np.vstack([self._vector(text) for text in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)


TOPICS = ["payment retries back off exponentially", "the billing database moved to db-new", "deploys run on fridays"]


def test_a_text_is_embedded_once_and_every_worker_searches_it(
    postgres_backend: PostgresHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZAXY_POSTGRES_SCHEMA", postgres_backend.schema)
    first, second = CountingEmbedder(), CountingEmbedder()
    with (
        MemoryFabric.from_path(tmp_path / "host-a", backend=postgres_backend.dsn, embedder=first) as a,
        MemoryFabric.from_path(tmp_path / "host-b", backend=postgres_backend.dsn, embedder=second) as b,
    ):
        for i in range(30):
            a.append("s", "transcript.turn", {"role": "user", "text": f"{TOPICS[i % 3]} (note {i})"})
        assert a.embed_pending() == 30 and first.embedded == 30
        rows = postgres_backend.execute("SELECT count(*), min(dims) FROM {schema}.projection_vectors")
        assert rows == [(30, 128)]
        assert b.embed_pending() == 0 and second.embedded == 0  # loaded, not embedded again
        vectors = b.retriever.vectors
        assert vectors.count == 30 and vectors.lag() == 0
        hits_a = a.retriever.vectors.search("where is the billing database?", 5)
        hits_b = vectors.search("where is the billing database?", 5)
        assert hits_a == hits_b and all(key[1] % 3 == 2 for key, _ in hits_a)
        new = b.append("s", "transcript.turn", {"role": "user", "text": "the billing database is read-only today"})
        b.project()
        assert b.embed_pending() == 1 and second.embedded == 1
        a.project()
        assert a.retriever.vectors.search("billing database read-only", 1)[0][0] == ("s", new.seq)
        assert first.embedded == 30  # a's own lag was filled from the table
        b.re_embed()
        assert second.embedded == 32 and postgres_backend.execute(
            "SELECT count(*) FROM {schema}.projection_vectors"
        ) == [(31,)]


@pytest.mark.skipif(not ann_available(), reason="usearch (the 'ann' extra) is not installed")
def test_the_approximate_path_finds_the_exact_neighbours_with_exact_scores(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    table = {f"text {i}": rng.normal(size=48).astype(np.float32) for i in range(400)}  # no score ties
    keys = [("s" if i % 4 else "t", i) for i in range(len(table))]
    texts = dict(zip(keys, table, strict=True))

    class TableEmbedder(HashingEmbedder):
        def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            return np.vstack([table[text] for text in texts])

        def embed_query(self, text: str) -> np.ndarray:
            return table[text]

    embedder = TableEmbedder(48)
    exact, approximate = VectorIndex(embedder, ann_threshold=10**9), VectorIndex(embedder, ann_threshold=50)
    opened = []
    for name, index in (("exact", exact), ("approximate", approximate)):
        opened.append(open_standalone(tmp_path / name, index))
        index.text_source = lambda wanted: {key: texts[key] for key in wanted}
        index.key_source = lambda: keys
        assert index.embed_pending() == 400 and index.count == 400
    assert approximate.search("text 0", 10) == exact.search("text 0", 10)  # no graph yet: exact, never waiting
    assert approximate.build_ann() == 400
    truth_scores = {key: score for key, score in exact.search("text 0", 400)}
    found = wanted = 0
    for query in list(table)[:40]:
        truth = exact.search(query, 10)
        got = approximate.search(query, 10)
        found += len({key for key, _ in truth} & {key for key, _ in got})
        wanted += len(truth)
        assert [score for _, score in got] == sorted((score for _, score in got), reverse=True)
        scoped = approximate.search(query, 5, allowed={"t"})
        assert scoped and all(key[0] == "t" for key, _ in scoped)
    assert found / wanted >= 0.9  # HNSW recall@10 on hard (random 48-d) data
    got = dict(approximate.search("text 0", 10))
    assert all(abs(got[key] - truth_scores[key]) < 1e-5 for key in got)  # candidates are re-ranked exactly
    for index, listeners in zip((exact, approximate), opened, strict=True):
        index.close()  # stops a background build, if one started
        listeners.store.close()
