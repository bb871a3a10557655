"""#25.4 through LangGraph's own surfaces: ``delete_thread`` on a real graph's checkpointer and the store's
``delete`` really delete. The planted SSN is in no file of the memory folder afterwards (log, projection,
indexes, item-store SQLite file, embedding cache), the log still verifies, the erasure is recorded, another
saver that held the thread in memory stops serving it, and what was not deleted is intact."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.erasure_helpers import files_containing, postgres_tables_containing
from tests.langgraph.test_dropin_checkpointer import echo_graph, say
from tests.langgraph.test_store_vectors import hashing_fn
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore

SSN = "078-05-1120"


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def test_delete_thread_erases_the_thread_from_the_log_and_every_derived_file(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with ZaxyCheckpointer.from_path(root) as saver, ZaxyCheckpointer.from_path(root) as other:
        graph = echo_graph(saver)
        say(graph, "dana", f"my SSN is {SSN}")
        say(graph, "dana", "and file my taxes")
        say(graph, "ops", "the payroll run is on the 25th")
        assert other.get_tuple(_config("dana")) is not None  # another saver holds the thread in memory
        saver.fabric.project()
        assert saver.fabric.query(SSN, sessions=[saver.session_of("dana")])  # the projection indexed it
        assert any(".zaxy" in str(path) for path in files_containing(root, SSN))

        saver.delete_thread("dana")

        assert files_containing(root, SSN) == []
        assert saver.get_tuple(_config("dana")) is None
        assert other.get_tuple(_config("dana")) is None  # it met the erasure record and dropped its view
        assert list(other.list(_config("dana"))) == []
        session = saver.session_of("dana")
        assert saver.fabric.verify(session).ok
        record = [e for e in saver.fabric.log.replay(session) if e.type == "eventloom.erased"]
        assert len(record) == 1 and record[0].payload["reason"] == "delete_thread" and record[0].actor == "langgraph"
        assert echo_graph(saver).get_state(_config("ops")).values["messages"][-1].content.endswith("on the 25th")
        assert say(graph, "dana", "hello again") == ["hello again", "echo hello again"]  # a fresh thread
        assert saver.fabric.verify(session).ok
        saver.delete_thread("never-used")  # nothing to delete: no error


def test_store_delete_erases_every_version_of_the_item(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    index = {"dims": 64, "embed": hashing_fn, "fields": ["text"]}
    with ZaxyStore.from_path(root, index=index) as store, ZaxyStore.from_path(root, index=index) as other:
        store.put(("users",), "dana", {"text": f"Dana's SSN is {SSN}"})
        store.put(("users",), "dana", {"text": f"Dana's SSN is {SSN}, confirmed"})
        store.put(("users",), "ann", {"text": "Ann runs payroll on the 25th"})
        assert store.search(("users",), query="SSN")[0].key == "dana"  # vectors were built
        assert other.get(("users",), "dana") is not None
        store.fabric.project()
        assert any("itemstore" in str(path) for path in files_containing(root, SSN))

        store.delete(("users",), "dana")

        assert files_containing(root, SSN) == []
        assert store.get(("users",), "dana") is None and other.get(("users",), "dana") is None
        assert [hit.key for hit in store.search(("users",), query="payroll")] == ["ann"]
        assert store.get(("users",), "ann").value == {"text": "Ann runs payroll on the 25th"}
        session = store.session
        assert store.fabric.verify(session).ok
        events = list(store.fabric.log.replay(session))
        assert [e.payload["reason"] for e in events if e.type == "eventloom.erased"] == ["store.delete"]
        assert sum(1 for e in events if e.erased) == 3  # two puts and the delete

        asyncio.run(store.aput(("users",), "eve", {"text": f"Eve's SSN is {SSN}"}))
        asyncio.run(store.adelete(("users",), "eve"))
        assert files_containing(root, SSN) == []
        store.delete(("users",), "nobody")  # nothing to erase: no error, no record
        assert sum(1 for e in store.fabric.log.replay(session) if e.type == "eventloom.erased") == 2


def test_ttl_expiry_erases_the_item_on_every_backend(eventloom: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An expired item is gone from every file (and, on PostgreSQL, every table) once the sweep has run, as a
    delete erases it; a key put again after the sweep's deletes is kept."""
    from zaxy_agents.itemstore import service as item_service

    class Clock:
        now = time.time()

        def time(self) -> float:
            return self.now

    clock = Clock()
    monkeypatch.setattr(item_service, "time", clock)
    with ZaxyStore.from_path(eventloom, ttl={"omit_expired": True}) as store:
        store.put(("users",), "dana", {"text": f"Dana's SSN is {SSN}"}, ttl=1)
        store.get(("users",), "dana")
        store.put(("users",), "ann", {"text": "Ann runs payroll on the 25th"})
        store.fabric.project()
        assert _planted(eventloom)
        clock.now += 120
        assert store.get(("users",), "dana") is None  # hidden at once, still in the files until the sweep
        assert _planted(eventloom)

        assert store.sweep_ttl() == 1

        assert not _planted(eventloom)
        assert store.get(("users",), "ann").value == {"text": "Ann runs payroll on the 25th"}
        assert store.fabric.verify(store.session).ok
        events = list(store.fabric.log.replay(store.session))
        assert [e.payload["reason"] for e in events if e.type == "eventloom.erased"] == ["ttl_expired"]
        assert [e.type for e in events if e.erased] == ["store.item.put", "store.item.deleted"]
        assert store.sweep_ttl() == 0


def _planted(root: Path) -> bool:
    """The SSN is in some file under ``root``, or in some table of the PostgreSQL schema the test uses."""
    if files_containing(root, SSN):
        return True
    dsn, schema = os.environ.get("ZAXY_BACKEND", ""), os.environ.get("ZAXY_POSTGRES_SCHEMA")
    if not dsn.startswith("postgres") or not schema:  # the `eventloom` fixture's PostgreSQL run selects both
        return False
    return bool(postgres_tables_containing(dsn, schema, SSN))
