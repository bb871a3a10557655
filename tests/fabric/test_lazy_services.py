"""The fabric builds its services and the built-in feature tables on first use, once, whatever the threads.

A fresh process opening a memory for one job (a LangGraph store) paid for every service and for collecting the
feature tables (docs/benchmarks.md, "ZaxyStore open + first get"). Built lazily they must still be built exactly
once per fabric (threads using a fresh fabric at once get the one object, and services share their dependencies),
and the facade's argument checks still answer with structured errors before anything is built.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric, erase_ops, features, integrity_ops
from zaxy_agents.fabric.service import lazy_service

THREADS = 8


def _at_once(calls: int, call: Any) -> list[Any]:
    """``call()`` from ``calls`` threads released together."""
    start = threading.Barrier(calls)

    def run(_n: int) -> Any:
        start.wait()
        return call()

    with ThreadPoolExecutor(max_workers=calls) as pool:
        return list(pool.map(run, range(calls)))


def _slowed(monkeypatch: pytest.MonkeyPatch, cls: type) -> list[int]:
    """Count (and widen the window of) every construction of ``cls``."""
    built: list[int] = []
    original = cls.__init__

    def slow_init(self: Any, *args: Any, **kwargs: Any) -> None:
        built.append(threading.get_ident())
        time.sleep(0.05)
        original(self, *args, **kwargs)

    monkeypatch.setattr(cls, "__init__", slow_init)
    return built


def test_a_fresh_fabric_builds_nothing_it_is_not_asked_for(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "eventloom") as memory:
        services = {name for name, value in vars(MemoryFabric).items() if isinstance(value, lazy_service)}
        assert len(services) >= 20
        assert not services & set(vars(memory))
        assert memory.core._features is None
        store = memory.item_store()  # what a LangGraph store uses: the store service alone
        assert services & set(vars(memory)) == {"stores"}
        assert memory.core._features is None
        store.execute([])
        memory.append("s", "note.added", {"text": "hello"})  # the log service checks payload contracts: tables built
        assert memory.core._features is not None


def test_a_store_opened_before_the_erasure_service_existed_still_drops_erased_items(tmp_path: Path) -> None:
    from langgraph.store.base import GetOp, PutOp

    with MemoryFabric.from_path(tmp_path / "eventloom") as memory:
        store = memory.item_store()
        store.execute([PutOp(("a",), "k", {"secret": "s3cr3t value"})])
        assert b"s3cr3t" in b"".join(p.read_bytes() for p in store.db.path.parent.iterdir())
        assert "erasure" not in vars(memory)
        memory.erase_store_items(store.session, [(("a",), "k")])  # builds the erasure service now
        files = [store.db.path, store.db.path.with_name(store.db.path.name + "-wal")]
        kept = b"".join(path.read_bytes() for path in files if path.exists())
        assert b"s3cr3t" not in kept  # the store's hook ran: its file rebuilt and scrubbed before any read
        assert store.execute([GetOp(("a",), "k")]) == [None]


def test_services_share_their_dependencies(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "eventloom") as memory:
        assert memory.checkouts.events is memory.events
        assert memory.checkouts.projection is memory.projection is memory.retrieval.projection
        assert memory.integrity.erasure is memory.erasure
        assert memory.stores.core is memory.checkpoints.core is memory.erasure.core is memory.core
        assert memory.salience.beliefs.confidence is memory.confidence


def test_concurrent_first_use_builds_a_service_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    erasures = _slowed(monkeypatch, erase_ops.EraseService)
    integrity = _slowed(monkeypatch, integrity_ops.IntegrityService)
    with MemoryFabric.from_path(tmp_path / "eventloom") as memory:
        got = _at_once(THREADS, lambda: memory.integrity)  # and the erasure service it takes
        assert len(integrity) == 1 and len(erasures) == 1
        assert all(service is got[0] for service in got)
        assert memory.erasure is got[0].erasure
    with MemoryFabric.from_path(tmp_path / "eventloom") as memory:  # each fabric builds its own
        assert memory.integrity is not got[0]
        assert len(integrity) == 2


def test_concurrent_first_use_builds_the_feature_tables_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = features.builtin_features

    def slow_builtin() -> features.Features:
        calls.append(threading.get_ident())
        time.sleep(0.05)
        return original()

    monkeypatch.setattr(features, "builtin_features", slow_builtin)
    with MemoryFabric.from_path(tmp_path / "eventloom") as memory:
        got = _at_once(THREADS, lambda: memory.features)
        assert len(calls) == 1
        assert all(tables is got[0] for tables in got)
        assert got[0] is original()
        swapped = got[0].without_checkout_extensions()
        memory.features = swapped  # benchmarks swap the tables: every service reads the swapped ones
        assert memory.checkouts.features is swapped and memory.core.features is swapped


def test_argument_errors_still_name_the_field_before_anything_is_built(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "eventloom") as memory:
        with pytest.raises(InvalidRequestError) as bad_session:
            memory.item_store(42)  # type: ignore[arg-type]
        assert bad_session.value.field == "session"
        with pytest.raises(InvalidRequestError) as bad_query:
            memory.checkout(None)  # type: ignore[arg-type]
        assert bad_query.value.field == "query"
        with pytest.raises(InvalidRequestError) as bad_id:
            memory.item_store("no/slashes")
        assert bad_id.value.field == "session"
