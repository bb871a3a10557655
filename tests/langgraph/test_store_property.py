"""Property tests: ZaxyStore and InMemoryStore agree on random operation sequences drawn by hypothesis.

The comparison (and the documented differences it normalises away) is the conformance kit's
(zaxy_agents.storage.conformance.store_differential), which also runs seeded sequences on every backend.
"""

from __future__ import annotations

import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from zaxy_agents.langgraph import ZaxyStore
from zaxy_agents.retrieval.embeddings import HashingEmbedder
from zaxy_agents.storage.conformance.store_differential import FIELDS, KEYS, NAMESPACES, PREFIXES, check_sequence

scalars = st.one_of(st.integers(-5, 5), st.sampled_from(["a", "b", "ab", "ba"]), st.none())
values = st.dictionaries(
    st.sampled_from(FIELDS),
    st.one_of(scalars, st.lists(st.integers(0, 2), max_size=2), st.fixed_dictionaries({"x": st.integers(0, 2)})),
    max_size=3,
)
conditions = st.one_of(
    scalars,
    st.fixed_dictionaries({"$eq": scalars}),
    st.fixed_dictionaries({"$ne": scalars}),
    st.dictionaries(st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), st.integers(-5, 5), min_size=1, max_size=2),
    st.fixed_dictionaries({"x": st.integers(0, 2)}),
    st.lists(st.integers(0, 2), max_size=2),
)
filters = st.one_of(st.none(), st.dictionaries(st.sampled_from(FIELDS), conditions, max_size=2))
put_ops = st.builds(
    lambda ns, key, value: PutOp(ns, key, value), st.sampled_from(NAMESPACES), st.sampled_from(KEYS), values
)
delete_ops = st.builds(lambda ns, key: PutOp(ns, key, None), st.sampled_from(NAMESPACES), st.sampled_from(KEYS))
get_ops = st.builds(lambda ns, key: GetOp(ns, key), st.sampled_from(NAMESPACES), st.sampled_from(KEYS))
search_ops = st.builds(
    lambda prefix, filter, limit, offset: SearchOp(prefix, filter, limit, offset),
    st.sampled_from(PREFIXES),
    filters,
    st.integers(1, 6),
    st.integers(0, 3),
)
paths = st.lists(st.sampled_from(["a", "b", "x", "y", "z", "*"]), min_size=1, max_size=2).map(tuple)
list_ops = st.builds(
    lambda conditions, depth, limit, offset: ListNamespacesOp(tuple(conditions), depth, limit, offset),
    st.lists(st.builds(MatchCondition, st.sampled_from(["prefix", "suffix"]), paths), max_size=2),
    st.one_of(st.none(), st.integers(1, 3)),
    st.integers(1, 6),
    st.integers(0, 2),
)
single_ops = st.one_of(put_ops, put_ops, delete_ops, get_ops, search_ops, search_ops, list_ops)
steps = st.lists(st.one_of(single_ops.map(lambda op: [op]), st.lists(single_ops, min_size=2, max_size=5)), max_size=25)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_random_operation_sequences_match_in_memory_store(sequence: list[list]) -> None:
    with tempfile.TemporaryDirectory() as root, ZaxyStore.from_path(root, durability="batch") as store:
        check_sequence(store, sequence)


WORDS = ["python", "pasta", "bread", "garden", "code", "guide", "fresh", "tutorial"]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)


def embed(batch: list[str]) -> list[list[float]]:
    return HashingEmbedder(32).embed_documents(batch).tolist()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(st.sampled_from([*KEYS, "k5", "k6"]), texts, min_size=1),
    st.lists(texts, min_size=1, max_size=3),
    st.integers(1, 5),
    st.integers(0, 2),
)
def test_vector_search_matches_in_memory_store(docs: dict, queries: list, limit: int, offset: int) -> None:
    index = {"dims": 32, "embed": embed, "fields": ["text"]}
    with tempfile.TemporaryDirectory() as root, ZaxyStore.from_path(root, index=index, durability="batch") as store:
        oracle = InMemoryStore(index=index)
        for key, text in docs.items():
            for target in (store, oracle):
                target.put(("d",), key, {"text": text})
        for query in queries:
            # Scores agree to float32 precision. Keys agree except in the order of near-ties (float64 vs float32
            # noise decides those), so keys are compared per score, and paging by the scores it keeps.
            ours = store.search(("d",), query=query, limit=100)
            theirs = oracle.search(("d",), query=query, limit=100)
            assert by_score(ours) == by_score(theirs)
            page = store.search(("d",), query=query, limit=limit, offset=offset)
            expected = oracle.search(("d",), query=query, limit=limit, offset=offset)
            assert [round(r.score, 4) for r in page] == [round(r.score, 4) for r in expected]


def by_score(results: list) -> dict[float, set[str]]:
    grouped: dict[float, set[str]] = {}
    for result in results:
        grouped.setdefault(round(result.score, 4), set()).add(result.key)
    return grouped
