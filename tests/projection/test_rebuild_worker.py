"""`zaxy reproject` builds the verbatim index in a worker process (``projection/rebuild_worker.py``): the rows it
copies into ``derived.sqlite`` are the serial rebuild's, table for table; a rebuild stopped before the copy leaves
that index behind the catalog (never half-copied), and the next catch-up or open replays it to the same answers;
no worker folder outlives its rebuild."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection import rebuild as rebuild_module
from zaxy_agents.projection import rebuild_worker
from zaxy_agents.projection.rebuild_status import RebuildCancelled

from .test_rebuild_groups import _answers, _log, _tables


def _rebuild(root: Path, monkeypatch: pytest.MonkeyPatch, *, worker: bool) -> list[list[tuple]]:
    monkeypatch.setattr(rebuild_module, "PARALLEL_MIN_EVENTS", 0 if worker else 10**9)
    with MemoryFabric.from_path(root, durability="batch") as fabric:
        fabric.projector.batch_events = 100
        fabric.reproject()
        assert not list((root / ".zaxy").glob("rebuild-*"))  # the worker's folder is gone
        return _answers(fabric)


def test_the_worker_writes_what_the_serial_rebuild_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _log(tmp_path / "serial")
    shutil.copytree(tmp_path / "serial", tmp_path / "worker")
    serial = _rebuild(tmp_path / "serial", monkeypatch, worker=False)
    spawned: list[list[str]] = []
    popen = subprocess.Popen

    def counted(args: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        spawned.append(args)
        return popen(args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(rebuild_worker.subprocess, "Popen", counted)
    parallel = _rebuild(tmp_path / "worker", monkeypatch, worker=True)
    assert [args[2] for args in spawned] == ["zaxy_agents.retrieval.verbatim_worker"]  # the worker did run
    assert parallel == serial and all(serial)
    assert _tables(tmp_path / "worker") == _tables(tmp_path / "serial")
    with MemoryFabric.from_path(tmp_path / "worker", durability="batch") as fabric:  # and a fresh process reads it
        assert _answers(fabric) == serial


def _reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[list[tuple]]:
    _log(tmp_path / "reference")
    return _rebuild(tmp_path / "reference", monkeypatch, worker=False)


@pytest.mark.parametrize("how", ["failure", "worker killed"])
def test_a_rebuild_stopped_before_the_copy_leaves_the_index_behind_and_catch_up_completes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    reference = _reference(tmp_path, monkeypatch)
    root = tmp_path / "stopped"
    _log(root)
    monkeypatch.setattr(rebuild_module, "PARALLEL_MIN_EVENTS", 0)
    sent = rebuild_worker.WorkerClient.send
    calls = []

    def send(self: rebuild_worker.WorkerClient, docs: list, cursors: dict) -> None:
        calls.append(1)
        if len(calls) == 4:
            if how == "failure":
                raise RuntimeError("disk full")
            self.process.kill()
            self.process.wait()
        sent(self, docs, cursors)

    monkeypatch.setattr(rebuild_worker.WorkerClient, "send", send)
    with MemoryFabric.from_path(root, durability="batch") as fabric:
        fabric.projector.batch_events = 100
        with pytest.raises(RuntimeError):
            fabric.reproject()
        assert not list((root / ".zaxy").glob("rebuild-*"))
        assert _answers(fabric) == reference  # the next catch-up replays the lagging index first
    with MemoryFabric.from_path(root, durability="batch") as fabric:
        assert _answers(fabric) == reference


def test_a_cancel_while_the_worker_indexes_stops_it_and_the_same_fabric_answers_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = _reference(tmp_path, monkeypatch)
    root = tmp_path / "cancelled"
    _log(root)
    monkeypatch.setattr(rebuild_module, "PARALLEL_MIN_EVENTS", 0)
    sent = rebuild_worker.WorkerClient.send

    def slow(self: rebuild_worker.WorkerClient, docs: list, cursors: dict) -> None:
        time.sleep(0.05)  # 8 chunks: time to ask for the stop in the middle
        sent(self, docs, cursors)

    monkeypatch.setattr(rebuild_worker.WorkerClient, "send", slow)
    with MemoryFabric.from_path(root, durability="batch") as fabric:
        fabric.projector.batch_events = 100
        outcome: dict[str, object] = {}

        def work() -> None:
            try:
                fabric.reproject()
            except BaseException as exc:
                outcome["error"] = exc

        thread = threading.Thread(target=work)
        thread.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and fabric.projector.rebuild_status.indexed_events < 200:
            time.sleep(0.002)
        fabric.projector.cancel_rebuild()
        thread.join(120)
        assert isinstance(outcome.get("error"), RebuildCancelled), outcome
        assert not list((root / ".zaxy").glob("rebuild-*"))
        assert _answers(fabric) == reference


def test_without_an_interpreter_to_start_the_rebuild_indexes_it_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = _reference(tmp_path, monkeypatch)
    root = tmp_path / "embedded"
    _log(root)
    monkeypatch.setattr(rebuild_worker.sys, "executable", str(tmp_path / "no-python"))
    assert _rebuild(root, monkeypatch, worker=True) == reference


def test_a_worker_folder_whose_rebuild_is_gone_is_removed_at_open(tmp_path: Path) -> None:
    _log(tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    leftover = tmp_path / ".zaxy" / f"rebuild-{int(dead.stdout)}"
    leftover.mkdir(parents=True)
    (leftover / "derived.sqlite").write_bytes(b"half a database")
    alive = tmp_path / ".zaxy" / f"rebuild-{os.getppid()}"  # a running rebuild's folder stays
    alive.mkdir()
    with MemoryFabric.from_path(tmp_path, durability="batch") as fabric:
        fabric.projector.catch_up()
    assert not leftover.exists() and alive.exists()


def test_a_worker_whose_input_stops_without_its_end_deletes_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "rebuild-1"
    folder.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "zaxy_agents.retrieval.verbatim_worker", str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    out, _ = process.communicate(b"")
    assert process.returncode == 1 and out == b"" and not folder.exists()
