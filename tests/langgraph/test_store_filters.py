"""Search filters: InMemoryStore's operators, the sane choices where backends disagree, and the field indexes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from langgraph.store.memory import InMemoryStore

from zaxy_agents.itemstore.filters import InvalidFilterError
from zaxy_agents.langgraph import ZaxyStore

ITEMS = {
    "a": {"kind": "note", "score": 3, "when": "2026-01-05", "meta": {"lang": "en", "n": 1}, "tags": ["x", "y"]},
    "b": {"kind": "note", "score": 7.5, "when": "2026-03-01", "meta": {"lang": "fr", "n": 2}, "tags": ["x"]},
    "c": {"kind": "task", "score": 10, "when": "2025-12-31", "flag": True},
    "d": {"kind": "task", "flag": 1, "score": None},
    "e": {"kind": None, "score": "5"},
}


@pytest.fixture
def filled(store: ZaxyStore) -> ZaxyStore:
    for key, value in ITEMS.items():
        store.put(("f",), key, value)
    return store


def keys(store: ZaxyStore, filter: dict) -> list[str]:
    return [item.key for item in store.search(("f",), filter=filter, limit=100)]


@pytest.mark.parametrize(
    ("filter", "expected"),
    [
        ({"kind": "note"}, ["a", "b"]),
        ({"kind": {"$eq": "task"}}, ["c", "d"]),
        ({"kind": {"$ne": "note"}}, ["c", "d", "e"]),
        ({"meta": {"lang": "fr"}}, ["b"]),
        ({"meta": {"n": {"$gte": 1}}}, ["a", "b"]),
        ({"tags": ["x", "y"]}, ["a"]),
        ({"kind": "note", "score": {"$gt": 3}}, ["b"]),
        ({"score": {"$gte": 3, "$lt": 10}}, ["a", "b"]),
        ({"score": {"$lte": 10}}, ["a", "b", "c"]),
    ],
)
def test_filters_agree_with_in_memory_store(filled: ZaxyStore, filter: dict, expected: list[str]) -> None:
    assert keys(filled, filter) == expected
    oracle = InMemoryStore()
    ranged = {"score"} & set(filter)  # InMemoryStore raises on a range over a missing/null/non-numeric field
    for key, value in ITEMS.items():
        if not ranged or isinstance(value.get("score"), (int, float)):
            oracle.put(("f",), key, value)
    assert [i.key for i in oracle.search(("f",), filter=filter, limit=100)] == expected


def test_missing_or_null_field_never_satisfies_a_range(filled: ZaxyStore) -> None:
    # InMemoryStore raises TypeError on items without the field; we treat them as no match.
    assert keys(filled, {"score": {"$gt": 0}}) == ["a", "b", "c"]
    assert keys(filled, {"absent": {"$lt": 100}}) == []


def test_numbers_compare_numerically_and_strings_lexicographically(filled: ZaxyStore) -> None:
    assert keys(filled, {"score": {"$gt": 4}}) == ["b", "c"]  # "5" (a string) is not a number
    assert keys(filled, {"when": {"$gte": "2026-01-01"}}) == ["a", "b"]
    assert keys(filled, {"score": {"$gt": "4"}}) == ["e"]  # string operand: string values only


def test_booleans_are_not_numbers(filled: ZaxyStore) -> None:
    assert keys(filled, {"flag": True}) == ["c"]  # InMemoryStore would also match 1 (True == 1 in Python)
    assert keys(filled, {"flag": 1}) == ["d"]
    assert keys(filled, {"flag": {"$gte": 0}}) == ["d"]


def test_missing_field_reads_as_null_for_equality(filled: ZaxyStore) -> None:
    assert keys(filled, {"flag": None}) == ["a", "b", "e"]
    assert keys(filled, {"score": None}) == ["d"]
    assert keys(filled, {"flag": {"$ne": True}}) == ["a", "b", "d", "e"]


def test_int_and_float_are_equal(filled: ZaxyStore) -> None:
    assert keys(filled, {"score": 10.0}) == ["c"]
    assert keys(filled, {"score": 7.5}) == ["b"]


def test_unknown_operator_is_refused(filled: ZaxyStore) -> None:
    with pytest.raises(InvalidFilterError):
        filled.search(("f",), filter={"score": {"$in": [1, 2]}})
    with pytest.raises(ValueError):  # also a ValueError, like InMemoryStore's
        filled.search(("f",), filter={"score": {"$gt": 1, "x": 2}})


def test_indexes_stay_consistent_through_updates_and_deletes(store: ZaxyStore) -> None:
    for i in range(200):
        store.put(("ix", f"p{i % 3}"), f"k{i}", {"cat": f"c{i % 10}", "n": i})
    assert keys_of(store, ("ix",), {"cat": "c3"}) == [f"k{i}" for i in range(200) if i % 10 == 3 and i % 3 == 0] + [
        f"k{i}" for i in range(200) if i % 10 == 3 and i % 3 == 1
    ] + [f"k{i}" for i in range(200) if i % 10 == 3 and i % 3 == 2]
    for i in range(0, 200, 2):
        store.put(("ix", f"p{i % 3}"), f"k{i}", {"cat": "moved", "n": -i})
    for i in range(1, 200, 4):
        store.delete(("ix", f"p{i % 3}"), f"k{i}")
    expected = sorted(
        (i for i in range(200) if i % 2 == 1 and i % 4 != 1 and i % 10 == 3),
        key=lambda i: (i % 3, i),
    )
    assert keys_of(store, ("ix",), {"cat": "c3"}) == [f"k{i}" for i in expected]
    assert keys_of(store, ("ix", "p1"), {"n": {"$gt": 150, "$lte": 199}}) == [
        f"k{i}" for i in range(151, 200) if i % 3 == 1 and i % 2 == 1 and i % 4 != 1
    ]
    assert len(keys_of(store, ("ix",), {"cat": "moved"})) == 100


def keys_of(store: ZaxyStore, prefix: tuple[str, ...], filter: dict) -> list[str]:
    return [item.key for item in store.search(prefix, filter=filter, limit=1000)]


def test_field_indexes_are_made_on_first_filter_and_capped_at_16(tmp_path: Path) -> None:
    """docs/langgraph.md: equality and range filters run over expression indexes "created the first time a field
    is filtered on (up to 16 fields)"; fields past the cap are still filtered exactly, just without an index."""

    def field_indexes() -> set[str]:
        (path,) = (tmp_path / "eventloom" / ".zaxy" / "itemstore").glob("*.sqlite3")
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'field_%'")
            return {name for (name,) in rows}

    with ZaxyStore.from_path(tmp_path / "eventloom") as store:
        for n in range(3):
            store.put(("f",), f"k{n}", {f"f{i}": n for i in range(20)})
        assert store.search(("f",), limit=10) and field_indexes() == set()  # no filter yet: no index
        for i in range(20):
            assert [item.key for item in store.search(("f",), filter={f"f{i}": 1})] == ["k1"]
            assert [item.key for item in store.search(("f",), filter={f"f{i}": {"$gte": 1}})] == ["k1", "k2"]
            assert len(field_indexes()) == min(i + 1, 16)
