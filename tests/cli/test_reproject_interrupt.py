"""#18: Ctrl-C in `zaxy reproject` stops it and says what state memory is in; memory stays usable.

The real CLI in a subprocess with a real SIGINT, and the projector's cancel on a real Kuzu graph. How fast it
stops is measured by benchmarks/reproject_interrupt_bench.py (never asserted here: no wall-clock in tests).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.conftest import run_zaxy_json
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.fabric.light import light_append_many
from zaxy_agents.projection.rebuild_status import RebuildCancelled


def _facts(loom: Path, session: str, count: int) -> None:
    for start in range(0, count, 2000):
        drafts = [
            {"type": "fact.asserted", "payload": {"fact": f"fact {i}", "key": f"k{i % 2000}"}}
            for i in range(start, min(count, start + 2000))
        ]
        light_append_many(session, drafts, eventloom_path=loom)


def _sigint_default() -> None:
    """In the child: take SIGINT as a terminal's Ctrl-C does. A suite started in the background (`nohup ... &`)
    inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _graph_write_started(loom: Path, session: str, events: int) -> bool:
    """Whether the rebuild indexed every event and its graph writer began a transaction (the graph is marked
    dirty around each one; up to 20,000 events make one transaction)."""
    derived = next(loom.rglob("derived.sqlite"), None)
    if derived is None:
        return False
    try:
        with sqlite3.connect(f"file:{derived}?mode=ro", uri=True, timeout=1) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'graph:state'").fetchone()
            cursor = db.execute("SELECT seq FROM cat_cursors WHERE session = ?", (session,)).fetchone()
    except sqlite3.Error:
        return False
    indexed = bool(cursor and cursor[0] == events)
    return indexed and bool(row and row[0] and not json.loads(row[0]).get("clean"))


def test_ctrl_c_during_the_graph_write_stops_and_memory_stays_usable(tmp_path: Path) -> None:
    loom = tmp_path / "loom"
    _facts(loom, "big", 6000)
    before = (loom / "big.jsonl").read_bytes()
    process = subprocess.Popen(
        [sys.executable, "-m", "zaxy_agents.cli.entry", "reproject", "--eventloom-path", str(loom)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
        preexec_fn=_sigint_default,
    )
    assert process.stderr is not None
    assert "rebuilding the projection of 6000 events" in process.stderr.readline()
    deadline = time.monotonic() + 240
    while not _graph_write_started(loom, "big", 6000) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert process.poll() is None, "the rebuild ended before its graph write could be interrupted"
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=300)
    err = " ".join(err.split())
    assert process.returncode == 130, err
    assert "stopping (Ctrl-C)" in err
    assert "stopped while graph: 6000 of 6000 events were indexed again" in err
    assert "The log is unchanged" in err and "rebuilt from the log the next time it is needed" in err
    assert (loom / "big.jsonl").read_bytes() == before

    code, status = run_zaxy_json("memory", "status", "--eventloom-path", str(loom))
    assert code == 0 and status["sessions"]["big"]["projection_lag"] == 0 and status["current_entities"] == 2000
    assert status["graph_materialised"] and status["graph_cursors"] == {"big": 6000}
    code, packet = run_zaxy_json("memory", "checkout", "fact 5999", "-s", "big", "--eventloom-path", str(loom))
    assert code == 0 and any("fact 5999" in json.dumps(item) for item in packet["current_facts"]), packet


def _rebuilding(loom: Path) -> bool:
    """Whether a rebuild has started (its first transaction records its pid and empties the tables)."""
    derived = next(loom.rglob("derived.sqlite"), None)
    if derived is None:
        return False
    try:
        with sqlite3.connect(f"file:{derived}?mode=ro", uri=True, timeout=1) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'rebuilding'").fetchone()
    except sqlite3.Error:
        return False
    return bool(row and row[0])


def test_ctrl_c_while_indexing_reports_the_state_as_json(tmp_path: Path) -> None:
    loom = tmp_path / "loom"
    _facts(loom, "small", 4000)
    process = subprocess.Popen(
        [sys.executable, "-m", "zaxy_agents.cli.entry", "reproject", "--eventloom-path", str(loom), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_sigint_default,
    )
    deadline = time.monotonic() + 240
    while not _rebuilding(loom) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)  # the rebuild emptied the catalog; its chunks are committed in groups of 10,000 events
    time.sleep(0.5)  # well inside the indexing of 4,000 events
    assert process.poll() is None, "the rebuild ended before it could be interrupted"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 130, err
    error = json.loads(out)["error"]
    assert error["code"] == "interrupted" and "The log is unchanged" in error["message"]
    assert error["state"]["total_events"] == 4000 and error["state"]["stage"] == "cancelled"
    assert 0 <= error["state"]["indexed_events"] <= 4000
    code, status = run_zaxy_json("memory", "status", "--eventloom-path", str(loom))
    assert code == 0 and status["sessions"]["small"]["projection_lag"] == 0


def test_cancel_rebuild_during_the_graph_write_leaves_memory_consistent(tmp_path: Path) -> None:
    """The projector's cancel on a real Kuzu graph, at a known stage; afterwards the graph is rebuilt from the
    log to exactly what a full rebuild gives (same digest) and the fabric keeps working in the same process."""
    loom = tmp_path / "loom"
    _facts(loom, "s", 3000)
    with MemoryFabric.from_path(loom) as fabric:
        projector = fabric.projector
        outcome: dict[str, object] = {}

        def work() -> None:
            try:
                outcome["digest"] = fabric.reproject()
            except BaseException as exc:
                outcome["error"] = exc

        worker = threading.Thread(target=work)
        worker.start()
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and worker.is_alive():
            if projector.rebuild_status.stage == "graph" and projector.graph.writing is not None:
                break
            time.sleep(0.005)
        projector.cancel_rebuild()
        worker.join(240)
        error = outcome.get("error")
        assert isinstance(error, RebuildCancelled), outcome
        assert error.status.stage == "cancelled" and error.status.total_events == 3000
        assert "The log is unchanged" in str(error)
        packet = fabric.checkout("fact 2999", session="s")
        assert any("fact 2999" in json.dumps(item.model_dump()) for item in packet.current_facts)
        digest_after_cancel = fabric.projection_digest()
        assert fabric.reproject() == digest_after_cancel  # a full rebuild gives the same graph
