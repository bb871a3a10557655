"""The LangGraph store's differential contract: ZaxyStore answers every operation like LangGraph's InMemoryStore.

The oracle is LangGraph's own InMemoryStore, with two documented differences normalised away: it creates empty
namespaces on reads and keeps them after deletes (and lists them), and it resets ``created_at`` on update.
Values avoid the cases where we chose different semantics on purpose (booleans vs numbers, numeric strings in
ranges); a range filter the oracle cannot evaluate (it raises) is skipped for the oracle but still run on ZaxyStore.
The property test (tests/langgraph/test_store_property.py) draws sequences with hypothesis; the conformance kit
draws them from a seeded generator, so it needs no test framework.
"""

from __future__ import annotations

import random
from typing import Any

from langgraph.store.base import BaseStore, GetOp, ListNamespacesOp, MatchCondition, Op, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

NAMESPACES = [("a",), ("a", "x"), ("a", "y"), ("b",), ("b", "x", "z")]
PREFIXES = [(), ("a",), ("a", "x"), ("b",), ("c",)]
KEYS = ["k1", "k2", "k3", "k4"]
FIELDS = ["f", "g", "h"]


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


def run_oracle(oracle: InMemoryStore, batch: list[Op]) -> list | None:
    try:
        results = oracle.batch(batch)
    except (TypeError, ValueError):  # a range over a missing / null / non-numeric field
        return None
    finally:
        tidy(oracle)
    return results


def check_sequence(store: BaseStore, sequence: list[list[Op]]) -> None:
    """Apply each batch to ``store`` and to a fresh oracle; raise AssertionError at the first difference."""
    oracle = new_oracle()
    for batch in sequence:
        expected = run_oracle(oracle, batch)
        if expected is None:  # the oracle could not evaluate a filter: apply the writes alone to both
            store.batch(batch)
            if run_oracle(oracle, [op for op in batch if isinstance(op, PutOp)]) is None:
                raise AssertionError(f"the oracle refused plain writes: {batch!r}")
            continue
        ours = comparable(store.batch(batch))
        if ours != comparable(expected):
            raise AssertionError(f"batch {batch!r}: ZaxyStore {ours!r} != InMemoryStore {comparable(expected)!r}")
    if comparable(store.search((), limit=100)) != comparable(oracle.search((), limit=100)):
        raise AssertionError("the final contents differ from InMemoryStore's")
    if store.list_namespaces(limit=100) != oracle.list_namespaces(limit=100):
        raise AssertionError("the final namespaces differ from InMemoryStore's")


def random_sequence(rng: random.Random, steps: int = 20) -> list[list[Op]]:
    """A sequence of single operations and small batches, drawn like the property test draws them."""

    def scalar() -> Any:
        return rng.choice([rng.randint(-5, 5), rng.choice(["a", "b", "ab", "ba"]), None])

    def value() -> dict[str, Any]:
        return {
            rng.choice(FIELDS): rng.choice([scalar(), [rng.randint(0, 2)], {"x": rng.randint(0, 2)}])
            for _ in range(rng.randint(0, 3))
        }

    def condition() -> Any:
        return rng.choice(
            [
                scalar(),
                {"$eq": scalar()},
                {"$ne": scalar()},
                {rng.choice(["$gt", "$gte", "$lt", "$lte"]): rng.randint(-5, 5)},
                {"x": rng.randint(0, 2)},
                [rng.randint(0, 2)],
            ]
        )

    def operation() -> Op:
        kind = rng.choice(["put", "put", "delete", "get", "search", "search", "list"])
        if kind == "put":
            return PutOp(rng.choice(NAMESPACES), rng.choice(KEYS), value())
        if kind == "delete":
            return PutOp(rng.choice(NAMESPACES), rng.choice(KEYS), None)
        if kind == "get":
            return GetOp(rng.choice(NAMESPACES), rng.choice(KEYS))
        if kind == "search":
            filter = {rng.choice(FIELDS): condition() for _ in range(rng.randint(0, 2))} or None
            return SearchOp(rng.choice(PREFIXES), filter, rng.randint(1, 6), rng.randint(0, 3))
        path = tuple(rng.choice(["a", "b", "x", "y", "z", "*"]) for _ in range(rng.randint(1, 2)))
        conditions = tuple(MatchCondition(rng.choice(["prefix", "suffix"]), path) for _ in range(rng.randint(0, 2)))
        return ListNamespacesOp(conditions, rng.choice([None, 1, 2, 3]), rng.randint(1, 6), rng.randint(0, 2))

    return [[operation() for _ in range(rng.choice([1, 1, 2, 3, 5]))] for _ in range(steps)]
