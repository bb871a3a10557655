"""The store's drop-in details: exact values (key order, values of many megabytes) after a reopen and in another
process, LangGraph's construction idioms, closed stores, and derived state that opens without replaying."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.sqlite import SqliteStore

from zaxy_agents.errors import ClosedError, InvalidRequestError
from zaxy_agents.itemstore.values import MAX_VALUE_BYTES
from zaxy_agents.langgraph import AsyncZaxyStore, ZaxyStore
from zaxy_agents.storage.conformance.harness import postgres_schema
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog

ORDERED = {"zeta": 1, "alpha": {"y": [{"b": 1, "a": 2}], "x": None}, "mid": [3, {"k2": 0, "k1": 1}], "Ä": "ü"}


def big_value(megabytes: int) -> dict[str, Any]:
    chunk = "The quick brown fox jumps over the lazy dog. " * 23  # ~1 KB of text
    return {"title": "report", "body": [f"{i}: {chunk}" for i in range(megabytes * 1024)], "z": 1, "a": 2}


def _read_in_child(eventloom: Path, namespace: tuple[str, ...], key: str) -> str:
    code = (
        "import sys, json\n"
        "from zaxy_agents.langgraph import ZaxyStore\n"
        f"with ZaxyStore.from_path({str(eventloom)!r}) as store:\n"
        f"    item = store.get({namespace!r}, {key!r})\n"
        "    sys.stdout.write(json.dumps(item.value, ensure_ascii=False))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=os.environ)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_key_order_survives_reopen_and_another_process(eventloom: Path) -> None:
    with ZaxyStore.from_path(eventloom) as store:
        store.put(("docs",), "ordered", ORDERED)
        assert json.dumps(store.get(("docs",), "ordered").value) == json.dumps(ORDERED)
    with ZaxyStore.from_path(eventloom) as store:
        assert json.dumps(store.get(("docs",), "ordered").value) == json.dumps(ORDERED)
        assert json.dumps(store.search(("docs",))[0].value) == json.dumps(ORDERED)
    assert _read_in_child(eventloom, ("docs",), "ordered") == json.dumps(ORDERED, ensure_ascii=False)
    _remove_derived(eventloom)
    with ZaxyStore.from_path(eventloom) as store:  # rebuilt from the log alone
        assert json.dumps(store.get(("docs",), "ordered").value) == json.dumps(ORDERED)


def test_values_of_many_megabytes_round_trip(eventloom: Path) -> None:
    value = big_value(3)
    value["api_key"] = "hunter2-secret"  # key names never change a value (the store's `values` redaction policy)
    value["dsn"] = "postgres://app:hunter2-secret@db/shop"  # a secret shape: redacted whole, before chunking
    with ZaxyStore.from_path(eventloom) as store:
        store.put(("big",), "report", value)
        stored = store.get(("big",), "report").value
    expected = {**value, "dsn": "postgres://app:[REDACTED:url_credentials]@db/shop"}
    assert stored == expected and list(stored) == list(expected)
    with ZaxyStore.from_path(eventloom) as store:
        assert store.get(("big",), "report").value == expected
        events = [e for e in store.fabric.replay(store.session)]
        assert {e.type for e in events} == {"store.item.chunk", "store.item.put"}
        assert max(len(json.dumps(e.payload)) for e in events) < 1024 * 1024
        put = events[-1].payload
        assert put["value_chunks"]["parts"] == len(events) - 1 and put["text"].startswith('{"title":"report"')
        assert "app:hunter2" not in "".join(json.dumps(e.payload) for e in events)
    _remove_derived(eventloom)
    assert json.loads(_read_in_child(eventloom, ("big",), "report")) == expected


def test_limit_is_documented_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert MAX_VALUE_BYTES == 128 * 1024 * 1024  # docs/langgraph.md states it
    monkeypatch.setattr("zaxy_agents.itemstore.values.MAX_VALUE_BYTES", 2 * 1024 * 1024)
    with ZaxyStore.from_path(tmp_path / "eventloom") as store:
        with pytest.raises(InvalidRequestError) as caught:
            store.put(("big",), "too-big", {"blob": "x" * (2 * 1024 * 1024)})
        assert caught.value.field == "value"
        assert not list(store.fabric.replay(store.session))


def test_a_closed_store_refuses_every_call(eventloom: Path) -> None:
    store = ZaxyStore.from_path(eventloom)
    store.put(("a",), "k", {"v": 1})
    store.close()
    store.close()
    for call in (
        lambda: store.get(("a",), "k"),
        lambda: store.put(("a",), "k", {"v": 2}),
        lambda: store.search(("a",)),
        lambda: store.list_namespaces(),
        lambda: store.delete(("a",), "k"),
    ):
        with pytest.raises(ClosedError):
            call()


@pytest.fixture(params=["folder", "postgresql"])
def conn_string(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    if request.param == "folder":
        yield str(tmp_path / "eventloom")
        return
    monkeypatch.chdir(tmp_path)
    with postgres_schema(monkeypatch) as dsn:
        yield dsn


def test_from_conn_string_and_setup_as_sqlite_and_postgres_stores(conn_string: str) -> None:
    with ZaxyStore.from_conn_string(conn_string) as store:
        store.setup()
        store.put(("users", "ana"), "prefs", {"theme": "dark", "lang": "pt"})
    with ZaxyStore.from_conn_string(conn_string) as store:
        assert store.get(("users", "ana"), "prefs").value == {"theme": "dark", "lang": "pt"}
        assert list(store.get(("users", "ana"), "prefs").value) == ["theme", "lang"]


async def test_async_store_from_conn_string(conn_string: str) -> None:
    async with AsyncZaxyStore.from_conn_string(conn_string) as store:
        await store.setup()
        await store.aput(("a",), "k", {"v": 1})
        assert (await store.aget(("a",), "k")).value == {"v": 1}


def test_memory_conn_string_is_removed_on_close() -> None:
    with ZaxyStore.from_conn_string(":memory:") as store:
        folder = store.fabric.settings.eventloom_dir
        store.put(("a",), "k", {"v": 1})
    assert not os.path.exists(folder)


def test_sqlite_store_behaviour_on_the_same_values(tmp_path: Path) -> None:
    """The baseline the two tests above hold us to: SqliteStore keeps key order and multi-megabyte values."""
    with SqliteStore.from_conn_string(str(tmp_path / "s.db")) as sqlite_store:
        sqlite_store.setup()
        sqlite_store.put(("docs",), "ordered", ORDERED)
        assert json.dumps(sqlite_store.get(("docs",), "ordered").value) == json.dumps(ORDERED)


def _remove_derived(eventloom: Path) -> None:
    for path in (eventloom / ".zaxy" / "itemstore").glob("*"):
        path.unlink()


def test_reopening_reads_no_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    eventloom = tmp_path / "eventloom"
    with ZaxyStore.from_path(eventloom) as store:
        for i in range(300):
            store.put(("ns", f"u{i % 3}"), f"k{i}", {"i": i})
        for i in range(0, 300, 2):
            store.delete(("ns", f"u{i % 3}"), f"k{i}")

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("opening replayed the log")

    monkeypatch.setattr(JsonlEventLog, "replay_envelopes", refuse)
    with ZaxyStore.from_path(eventloom) as store:
        assert store.get(("ns", "u1"), "k1").value == {"i": 1}
        assert store.get(("ns", "u0"), "k0") is None
        assert len(store.search(("ns",), limit=1000)) == 150
    monkeypatch.undo()
    with ZaxyStore.from_path(eventloom) as writer, ZaxyStore.from_path(eventloom) as reader:
        writer.put(("ns", "u1"), "k1", {"i": "changed"})  # the other store catches up from the log tail
        assert reader.get(("ns", "u1"), "k1").value == {"i": "changed"}


@pytest.mark.parametrize("damage", ["deleted", "garbage", "other_log"])
def test_derived_state_is_rebuilt_when_missing_damaged_or_from_another_log(tmp_path: Path, damage: str) -> None:
    eventloom = tmp_path / "eventloom"
    with ZaxyStore.from_path(eventloom) as store:
        store.put(("a",), "k", {"v": 1, "b": 2})
    [derived] = (eventloom / ".zaxy" / "itemstore").glob("*.sqlite3")
    if damage == "deleted":
        _remove_derived(eventloom)
    elif damage == "garbage":
        _remove_derived(eventloom)
        derived.write_bytes(b"not a database at all" * 100)
    else:  # the folder's log replaced by another one (same session, other history), the stale file kept
        stale = derived.read_bytes()
        (eventloom / "langgraph-store.jsonl").unlink()
        with ZaxyStore.from_path(eventloom) as other:
            other.put(("b",), "k", {"v": 2})
        _remove_derived(eventloom)
        derived.write_bytes(stale)
    with ZaxyStore.from_path(eventloom) as store:
        if damage == "other_log":
            assert store.get(("a",), "k") is None and store.get(("b",), "k").value == {"v": 2}
        else:
            assert store.get(("a",), "k").value == {"v": 1, "b": 2}
            assert list(store.get(("a",), "k").value) == ["v", "b"]
