"""Property tests: ZaxyStore and InMemoryStore agree on random operation sequences.

The oracle is LangGraph's own InMemoryStore, with two documented differences normalised away: it creates empty
namespaces on reads and keeps them after deletes (and lists them), and it resets ``created_at`` on update.
Values avoid the cases where we chose different semantics on purpose (booleans vs numbers, numeric strings in
ranges); a range filter the oracle cannot evaluate (it raises) is skipped for the oracle but still run on
ZaxyStore.
"""

from __future__ import annotations

import tempfile
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from zaxy_agents.langgraph import ZaxyStore
from zaxy_agents.retrieval.embeddings import HashingEmbedder

NAMESPACES = [("a",), ("a", "x"), ("a", "y"), ("b",), ("b", "x", "z")]
PREFIXES = [(), ("a",), ("a", "x"), ("b",), ("c",)]
KEYS = ["k1", "k2", "k3", "k4"]
FIELDS = ["f", "g", "h"]

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


def comparable(result: Any) -> Any:
    if result is None:
        return None
    if isinstance(result, list):
        return [comparable(r) for r in result]
    if isinstance(result, tuple):
        return result
    return (result.namespace, result.key, result.value, getattr(result, "score", None))


class _Namespaces(dict):
    """InMemoryStore's namespace table, except that reading a missing namespace does not create it.

    (InMemoryStore's ``defaultdict`` makes a ``get`` create an empty namespace, which it then lists and which
    pins the namespace's position in search order; our store only has namespaces that hold items.)
    """

    def __missing__(self, namespace: tuple[str, ...]) -> dict:
        return _PendingNamespace(self, namespace)


class _PendingNamespace(dict):
    def __init__(self, table: _Namespaces, namespace: tuple[str, ...]) -> None:
        super().__init__()
        self._table, self._namespace = table, namespace

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, value)
        self._table.setdefault(self._namespace, self)


def new_oracle(**kwargs: Any) -> InMemoryStore:
    oracle = InMemoryStore(**kwargs)
    oracle._data = _Namespaces()
    return oracle


def tidy(oracle: InMemoryStore) -> None:
    """Drop namespaces InMemoryStore keeps after a get or delete left them empty (we never list those)."""
    for namespace in [ns for ns, items in oracle._data.items() if not items]:
        del oracle._data[namespace]


def run_oracle(oracle: InMemoryStore, batch: list) -> list | None:
    try:
        results = oracle.batch(batch)
    except (TypeError, ValueError):  # a range over a missing / null / non-numeric field
        return None
    finally:
        tidy(oracle)
    return results


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_random_operation_sequences_match_in_memory_store(sequence: list[list]) -> None:
    with tempfile.TemporaryDirectory() as root, ZaxyStore.from_path(root, durability="batch") as store:
        oracle = new_oracle()
        for batch in sequence:
            expected = run_oracle(oracle, batch)
            if expected is None:  # the oracle could not evaluate a filter: apply the writes alone to both
                writes = [op for op in batch if isinstance(op, PutOp)]
                store.batch(batch)
                oracle_writes = run_oracle(oracle, writes)
                assert oracle_writes is not None
                continue
            assert comparable(store.batch(batch)) == comparable(expected)
        assert comparable(store.search((), limit=100)) == comparable(oracle.search((), limit=100))
        assert store.list_namespaces(limit=100) == oracle.list_namespaces(limit=100)


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
