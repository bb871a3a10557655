"""What opening a ZaxyStore no longer builds until it is used, and that building it later changes nothing.

A fresh process's open + first get was 2.1-2.7x SqliteStore's at 100k items (docs/benchmarks.md, "ZaxyStore open
+ first get"), all of it a fixed Python cost. The open now leaves out what a store may never use: the TTL sweeper
(built once, on the first timer sweep asked for), the embedding cache folder's path (only a store with an index
embeds) and the log's session handle (the change token is one ``stat`` by name).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.itemstore import service as item_service
from zaxy_agents.langgraph import ZaxyStore
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog


def test_the_sweeper_is_built_on_first_use_once_whatever_the_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[int] = []
    original = item_service.TTLSweeper.__init__

    def counted(self: item_service.TTLSweeper, *args: object) -> None:
        built.append(threading.get_ident())
        threading.Event().wait(0.05)  # widen the window in which a second thread could build one too
        original(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(item_service.TTLSweeper, "__init__", counted)
    with ZaxyStore.from_path(tmp_path / "eventloom") as store:
        assert built == [] and store._items._sweeper is None
        start = threading.Barrier(6)

        def start_sweeping(_n: int) -> object:
            start.wait()
            store.start_ttl_sweeper(60)
            return store._items.sweeper

        with ThreadPoolExecutor(max_workers=6) as pool:
            sweepers = list(pool.map(start_sweeping, range(6)))
        assert len(built) == 1 and all(sweeper is sweepers[0] for sweeper in sweepers)
        assert sweepers[0].running
    assert not sweepers[0].running  # close stops it


def test_a_store_configured_to_sweep_starts_its_sweeper_at_open(tmp_path: Path) -> None:
    with ZaxyStore.from_path(tmp_path / "eventloom", ttl={"sweep_interval_minutes": 60}) as store:
        sweeper = store._items.sweeper
        assert sweeper.running
    assert not sweeper.running
    with ZaxyStore.from_path(tmp_path / "eventloom") as store:  # closing a store that never swept builds nothing
        pass
    assert store._items._sweeper is None


def test_the_log_handle_is_not_opened_to_read_a_change_token(tmp_path: Path) -> None:
    with JsonlEventLog(tmp_path / "log") as writer:
        writer.append("s", "note.added", {"text": "hi"})
        with JsonlEventLog(tmp_path / "log") as log:
            token = log.change_token("s")
            assert token is not None and log._files == {}
            assert log.change_token("missing") is None and log._files == {}
            writer.append("s", "note.added", {"text": "again"})
            assert log.change_token("s") not in (None, token)
            log.head("s")  # a handle, once opened, answers the token the same way
            assert log._files and log.change_token("s") == writer.change_token("s")
            with pytest.raises(InvalidRequestError) as bad:
                log.change_token("../escape")
            assert bad.value.field == "session"


def test_a_store_without_an_index_leaves_no_embedding_cache(tmp_path: Path) -> None:
    with ZaxyStore.from_path(tmp_path / "eventloom") as store:
        store.put(("a",), "k", {"v": 1})
        assert store.get(("a",), "k").value == {"v": 1}
    assert not (tmp_path / "eventloom" / ".zaxy" / "embeddings").exists()
