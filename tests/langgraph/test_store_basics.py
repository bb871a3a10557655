"""ZaxyStore's BaseStore contract: CRUD, batches, namespaces, persistence, and the events it writes."""

from __future__ import annotations

import asyncio
from datetime import UTC

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyStore


def test_put_get_delete_round_trip(store: ZaxyStore) -> None:
    store.put(("users", "u1"), "prefs", {"theme": "dark", "tags": ["a", "b"], "n": 3, "x": None})
    item = store.get(("users", "u1"), "prefs")
    assert item is not None
    assert item.value == {"theme": "dark", "tags": ["a", "b"], "n": 3, "x": None}
    assert item.namespace == ("users", "u1") and item.key == "prefs"
    assert item.created_at.tzinfo is not None and item.created_at.utcoffset() == UTC.utcoffset(None)
    store.delete(("users", "u1"), "prefs")
    assert store.get(("users", "u1"), "prefs") is None
    assert store.list_namespaces() == []


def test_update_keeps_created_at_and_moves_updated_at(store: ZaxyStore) -> None:
    store.put(("n",), "k", {"v": 1})
    first = store.get(("n",), "k")
    store.put(("n",), "k", {"v": 2})
    second = store.get(("n",), "k")
    assert first is not None and second is not None
    assert second.value == {"v": 2}
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at


def test_values_are_copied_not_aliased(store: ZaxyStore) -> None:
    value = {"nested": {"a": [1]}}
    store.put(("n",), "k", value)
    value["nested"]["a"].append(2)
    assert store.get(("n",), "k").value == {"nested": {"a": [1]}}


def test_batch_reads_see_state_before_writes_and_last_put_wins(store: ZaxyStore) -> None:
    store.put(("n",), "k", {"v": 0})
    results = store.batch(
        [
            PutOp(("n",), "k", {"v": 1}),
            GetOp(("n",), "k"),
            PutOp(("n",), "k", {"v": 2}),
            SearchOp(("n",)),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("n",)),)),
        ]
    )
    assert results[0] is None and results[2] is None
    assert results[1].value == {"v": 0}
    assert [item.value for item in results[3]] == [{"v": 0}]
    assert results[4] == [("n",)]
    assert store.get(("n",), "k").value == {"v": 2}
    puts = [e for e in store.fabric.replay(store.session) if e.type == "store.item.put"]
    assert [e.payload["value"] for e in puts] == [{"v": 0}, {"v": 2}]  # only the winning put is written


def test_batch_is_one_atomic_append(store: ZaxyStore, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    original = store.fabric.log.append_many
    monkeypatch.setattr(store.fabric.log, "append_many", lambda s, d: calls.append(len(d := list(d))) or original(s, d))
    store.batch([PutOp(("n",), f"k{i}", {"i": i}) for i in range(50)])
    assert calls == [50]
    assert len(list(store.fabric.replay(store.session))) == 50


def test_delete_of_missing_item_writes_nothing(store: ZaxyStore) -> None:
    store.delete(("n",), "missing")
    assert store.fabric.head(store.session) is None


def test_namespace_validation_matches_base_store(store: ZaxyStore) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.put((), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.put(("langgraph",), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.put(("a.b",), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.batch([GetOp(("a", ""), "k")])  # ops passed straight to batch are validated too


def test_non_json_values_are_refused_before_writing(store: ZaxyStore) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        store.put(("n",), "k", {"when": object()})
    assert caught.value.field == "value.when"
    with pytest.raises(InvalidRequestError):
        store.put(("n",), "k", {"x": float("nan")})
    assert store.fabric.head(store.session) is None


def test_search_orders_like_in_memory_store_and_pages(store: ZaxyStore) -> None:
    store.put(("a",), "1", {"i": 1})
    store.put(("b",), "2", {"i": 2})
    store.put(("a",), "3", {"i": 3})
    store.put(("a",), "1", {"i": 10})  # an update keeps its place
    keys = [item.key for item in store.search((), limit=10)]
    assert keys == ["1", "3", "2"]
    assert [item.key for item in store.search((), limit=2, offset=1)] == ["3", "2"]
    assert [item.key for item in store.search(("a",))] == ["1", "3"]
    store.delete(("a",), "1")
    store.put(("a",), "1", {"i": 11})  # delete + re-put moves it to the end of its namespace
    assert [item.key for item in store.search(("a",))] == ["3", "1"]


def test_list_namespaces_prefix_suffix_depth_and_paging(store: ZaxyStore) -> None:
    for namespace in [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f")]:
        store.put(namespace, "k", {"v": 1})
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "d", "e"), ("a", "b", "d", "i")]


def test_state_survives_restart(eventloom) -> None:
    with ZaxyStore.from_path(eventloom) as first:
        first.put(("n",), "k", {"v": 1})
        first.put(("n",), "gone", {"v": 2})
        first.delete(("n",), "gone")
        created = first.get(("n",), "k").created_at
    with ZaxyStore.from_path(eventloom) as second:
        item = second.get(("n",), "k")
        assert item.value == {"v": 1} and item.created_at == created
        assert second.get(("n",), "gone") is None


def test_events_are_cited_and_deleted_items_are_erased(store: ZaxyStore) -> None:
    store.put(("docs", "u1"), "k", {"text": "hello"})
    put = next(iter(store.fabric.replay(store.session)))
    assert put.payload == {
        "namespace": ["docs", "u1"],
        "key": "k",
        "value": {"text": "hello"},
        "index": None,
        "ttl_minutes": None,
        "expires_at": None,
    }
    assert store.fabric.resolve(put.citation) == put
    store.delete(("docs", "u1"), "k")
    events = list(store.fabric.replay(store.session))
    assert [e.type for e in events] == ["store.item.put", "store.item.deleted", "eventloom.erased"]
    assert all(e.erased and e.payload == {} for e in events[:2])  # the put and the delete lost their content
    record = events[2].payload
    assert record["reason"] == "store.delete"
    # the put keeps a recomputable hash; the delete, whose erased form is longer than its line, is a tombstone
    ranges = [(r["from_seq"], r["to_seq"], r["form"]) for r in record["ranges"]]
    assert ranges == [(1, 1, "erased"), (2, 2, "tombstone")]
    assert store.fabric.verify(store.session).ok


def test_writes_from_another_process_handle_are_seen(eventloom) -> None:
    with ZaxyStore.from_path(eventloom) as reader, MemoryFabric.from_path(eventloom) as other_fabric:
        writer = ZaxyStore(other_fabric)  # separate log handle, as another process would have
        assert reader.get(("n",), "k") is None
        writer.put(("n",), "k", {"v": 1})
        assert reader.get(("n",), "k").value == {"v": 1}
        reader.put(("n",), "k2", {"v": 2})
        writer.delete(("n",), "k")
        assert [item.key for item in reader.search(("n",))] == ["k2"]
        assert [item.key for item in writer.search(("n",))] == ["k2"]


def test_secrets_are_redacted_before_they_reach_the_log(store: ZaxyStore) -> None:
    """Secret-shaped text never reaches the log; key names alone never change a value (a drop-in store
    round-trips ``{"api_key": "abc123", "token": 42}``: docs/eventloom.md#secrets)."""
    store.put(("cfg",), "k", {"api_key": "abc123", "token": 42, "note": "token sk-proj-abcdefghijklmnopqrstuvwx"})
    value = {"api_key": "abc123", "token": 42, "note": "token [REDACTED:openai_key]"}
    assert store.get(("cfg",), "k").value == value
    raw = b"".join(store.fabric.log.replay_lines(store.session)).decode()  # the stored bytes, on any backend
    assert "sk-proj-abc" not in raw and "store.item.put" in raw


def test_custom_session_and_shared_fabric(fabric: MemoryFabric) -> None:
    store = ZaxyStore(fabric, session="team-memory")
    store.put(("n",), "k", {"v": 1})
    assert fabric.head("team-memory").seq == 1
    assert ZaxyStore(fabric, session="team-memory").get(("n",), "k").value == {"v": 1}


def test_async_api(store: ZaxyStore) -> None:
    async def scenario() -> None:
        await store.aput(("n",), "k", {"v": 1})
        assert (await store.aget(("n",), "k")).value == {"v": 1}
        assert [i.key for i in await store.asearch(("n",), filter={"v": 1})] == ["k"]
        assert await store.alist_namespaces() == [("n",)]
        results = await store.abatch([GetOp(("n",), "k"), PutOp(("n",), "k", {"v": 2}), GetOp(("n",), "k")])
        assert results[0].value == results[2].value == {"v": 1}
        await store.adelete(("n",), "k")
        assert await store.aget(("n",), "k") is None

    asyncio.run(scenario())


def test_concurrent_threads_share_one_store(eventloom) -> None:
    import threading

    with ZaxyStore.from_path(eventloom, durability="batch") as store:
        errors: list[BaseException] = []

        def worker(n: int) -> None:
            try:
                for i in range(50):
                    store.put(("w", str(n)), f"k{i}", {"i": i, "n": n})
                    assert store.get(("w", str(n)), f"k{i}").value == {"i": i, "n": n}
                    store.search(("w",), filter={"n": n}, limit=5)
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert len(store.search(("w",), limit=1000)) == 200
        assert store.fabric.verify(store.session).event_count == 200
    with ZaxyStore.from_path(eventloom) as reopened:
        assert len(reopened.search(("w",), limit=1000)) == 200
