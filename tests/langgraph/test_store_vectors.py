"""Natural-language search: the index config, per-put index control, ranking vs InMemoryStore, the cache."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langgraph.store.memory import InMemoryStore

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.langgraph import ZaxyStore
from zaxy_agents.retrieval.embeddings import HashingEmbedder

DOCS = {
    "py": {"text": "python tutorial for beginners", "topic": "code"},
    "ts": {"text": "typescript guide to generics", "topic": "code"},
    "pasta": {"text": "cooking fresh pasta at home", "topic": "food"},
    "pyweb": {"text": "python web frameworks compared", "topic": "code"},
    "bread": {"text": "baking bread with sourdough", "topic": "food"},
}


def hashing_fn(texts: list[str]) -> list[list[float]]:
    return HashingEmbedder(64).embed_documents(texts).tolist()


def fill(store, docs=DOCS, namespace=("docs",)) -> None:
    for key, value in docs.items():
        store.put(namespace, key, value)


def ranked(results) -> list[tuple[str, float | None]]:
    return [(r.key, None if r.score is None else round(r.score, 4)) for r in results]


def test_ranking_and_scores_match_in_memory_store(eventloom) -> None:
    index = {"dims": 64, "embed": hashing_fn, "fields": ["text"]}
    oracle = InMemoryStore(index=index)
    with ZaxyStore.from_path(eventloom, index=index) as store:
        fill(store)
        fill(oracle)
        for query in ("python programming", "bread and pasta", "generics"):
            for kwargs in ({}, {"filter": {"topic": "code"}}, {"limit": 2, "offset": 1}):
                assert ranked(store.search(("docs",), query=query, **kwargs)) == ranked(
                    oracle.search(("docs",), query=query, **kwargs)
                )


def test_items_without_vectors_fill_the_page_like_in_memory_store(eventloom) -> None:
    index = {"dims": 64, "embed": hashing_fn, "fields": ["text"]}
    oracle = InMemoryStore(index=index)
    with ZaxyStore.from_path(eventloom, index=index) as store:
        for target in (store, oracle):
            target.put(("d",), "indexed", {"text": "python code"})
            target.put(("d",), "opted-out", {"text": "python code"}, index=False)
            target.put(("d",), "no-text", {"other": 1})
        assert ranked(store.search(("d",), query="python")) == ranked(oracle.search(("d",), query="python"))
        assert [r.key for r in store.search(("d",), query="python")] == ["indexed", "opted-out", "no-text"]


def test_per_put_field_list_and_array_paths(eventloom) -> None:
    index = {"dims": 64, "embed": hashing_fn, "fields": ["title"]}
    with ZaxyStore.from_path(eventloom, index=index) as store:
        store.put(("d",), "a", {"title": "gardening", "notes": ["tomatoes", "python snakes"]}, index=["notes[*]"])
        store.put(("d",), "b", {"title": "python snakes", "notes": []})
        event = next(iter(store.fabric.replay(store.session)))
        assert event.payload["texts"] == [
            {"path": "notes[*].0", "text": "tomatoes"},
            {"path": "notes[*].1", "text": "python snakes"},
        ]
        hits = store.search(("d",), query="python snakes")
        assert {r.key for r in hits} == {"a", "b"} and hits[0].score == pytest.approx(hits[1].score)


def test_langchain_embeddings_object_and_provider_string(eventloom) -> None:
    with ZaxyStore.from_path(eventloom, index={"dims": 32, "embed": DeterministicFakeEmbedding(size=32)}) as store:
        fill(store)
        hit = store.search(("docs",), query=DOCS["pasta"]["text"] + "", limit=1)
        assert hit[0].score is not None
    with ZaxyStore.from_path(eventloom, index={"embed": "hashing:64", "fields": ["text"]}) as store:
        assert store.search(("docs",), query="python tutorial", limit=1)[0].key == "py"


def test_async_embedding_function(eventloom) -> None:
    async def aembed(texts: list[str]) -> list[list[float]]:
        await asyncio.sleep(0)
        return hashing_fn(texts)

    async def scenario() -> None:
        with ZaxyStore.from_path(eventloom, index={"dims": 64, "embed": aembed, "fields": ["text"]}) as store:
            for key, value in DOCS.items():
                await store.aput(("docs",), key, value)
            hits = await store.asearch(("docs",), query="python tutorial", limit=1)
            assert hits[0].key == "py"
            store.put(("docs",), "sync", {"text": "sync put from a loop thread"})  # runs the coroutine aside
            assert (await store.asearch(("docs",), query="sync put loop", limit=1))[0].key == "sync"

    asyncio.run(scenario())


def test_embeddings_are_cached_across_restarts(eventloom) -> None:
    seen: list[str] = []

    def counting(texts: list[str]) -> list[list[float]]:
        seen.extend(texts)
        return hashing_fn(texts)

    index = {"dims": 64, "embed": counting, "fields": ["text"]}
    with ZaxyStore.from_path(eventloom, index=index) as store:
        fill(store)
    assert sorted(seen) == sorted(d["text"] for d in DOCS.values())
    seen.clear()
    with ZaxyStore.from_path(eventloom, index=index) as store:
        assert store.search(("docs",), query="python tutorial", limit=1)[0].key == "py"
    assert seen == ["python tutorial"]  # only the query: documents came from the derived cache


def test_replayed_items_are_embedded_on_first_query(eventloom) -> None:
    with ZaxyStore.from_path(eventloom) as plain:  # written without any index
        fill(plain)
    with ZaxyStore.from_path(eventloom, index={"dims": 64, "embed": hashing_fn, "fields": ["text"]}) as store:
        assert store.search(("docs",), query="sourdough bread", limit=1)[0].key == "bread"


def test_query_is_ignored_without_an_index_like_in_memory_store(store: ZaxyStore) -> None:
    fill(store)
    assert [r.key for r in store.search(("docs",), query="bread")] == list(DOCS)
    assert all(r.score is None for r in store.search(("docs",), query="bread"))


def test_wrong_dims_are_reported(eventloom) -> None:
    with ZaxyStore.from_path(eventloom, index={"dims": 8, "embed": hashing_fn, "fields": ["text"]}) as store:
        with pytest.raises(InvalidRequestError) as caught:
            store.put(("d",), "k", {"text": "hello"})
        assert caught.value.field == "index.dims"
        assert store.get(("d",), "k") is None


def test_vector_rows_are_reused_after_deletes(eventloom) -> None:
    index = {"dims": 64, "embed": hashing_fn, "fields": ["text"]}
    with ZaxyStore.from_path(eventloom, index=index) as store:
        for round_ in range(3):
            for i in range(40):
                store.put(("d",), f"k{i}", {"text": f"document {i} round {round_}"})
            for i in range(0, 40, 2):
                store.delete(("d",), f"k{i}")
        hits = store.search(("d",), query="document 7 round 2", limit=3)
        assert hits[0].key == "k7"
        assert all(int(h.key[1:]) % 2 == 1 for h in hits)
        assert np.isfinite([h.score for h in hits]).all()
