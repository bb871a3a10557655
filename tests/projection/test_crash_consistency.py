"""Projection progress is committed with the rows it covers: kills and full disks never lose or invent rows.

Each test drives a child process (``_catch_up_child``) that projects a memory in many small transactions while
a background writer keeps the embedded graph current, interrupts it, then checks that the next process serves
exactly what a fresh rebuild from the log produces (same catalog counts, same graph digest), and that
``memory status`` never claims what the graph does not hold.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO_ROOT, run_zaxy_json
from zaxy_agents.fabric import MemoryFabric

CHILD = [sys.executable, "-m", "tests.projection._catch_up_child"]


def _seed(root: Path, events: int = 1500) -> None:
    drafts = []
    for i in range(events):
        kind = i % 5
        if kind == 0:
            drafts.append(
                {
                    "type": "fact.asserted",
                    "payload": {"subject": f"svc{i % 40}", "predicate": "port", "object": str(8000 + i)},
                }
            )
        elif kind == 1:
            drafts.append({"type": "task.created", "payload": {"task_id": f"T-{i % 60}", "title": f"item {i}"}})
        elif kind == 2:
            drafts.append(
                {
                    "type": "command.completed",
                    "payload": {"command": f"pytest -k c{i}", "exit_code": i % 2, "task_id": f"T-{i % 60}"},
                }
            )
        elif kind == 3:
            drafts.append({"type": "transcript.turn", "payload": {"role": "user", "text": f"note {i} on svc{i % 40}"}})
        else:
            drafts.append(
                {"type": "file.edit.applied", "payload": {"path": f"src/m{i % 30}.py", "task_id": f"T-{i % 60}"}}
            )
    with MemoryFabric.from_path(root, use_graph=False) as fabric:
        for start in range(0, events, 500):
            fabric.append_many(f"s{start // 500}", drafts[start : start + 500])


def _fresh_rebuild(root: Path, tmp_path: Path) -> tuple[str, dict]:
    """Digest and counts of a rebuild of a copy of the same log (the truth to compare with)."""
    copy = tmp_path / "fresh"
    copy.mkdir()
    for log in root.glob("*.jsonl"):
        (copy / log.name).write_bytes(log.read_bytes())
    with MemoryFabric.from_path(copy) as fabric:
        digest = fabric.reproject()
        status = fabric.memory_status()
    return digest, {key: status[key] for key in ("entities", "current_entities", "edges", "inferred_edges")}


def test_sigkill_during_catch_up_replays_the_gap(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    _seed(root)
    rng = random.Random(25)
    graph_file = root / ".zaxy" / "graph.kuzu"
    for _ in range(4):
        child = subprocess.Popen([*CHILD, str(root)], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "go"
        # The kill must land while the graph is being written, however slow the machine: wait for the child to
        # create the graph file (a loaded machine can take seconds to get there), then a random moment more.
        deadline = time.monotonic() + 120
        while not graph_file.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.3, 2.0))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    code, status = run_zaxy_json("memory", "status", "--eventloom-path", str(root))
    assert code == 0, status
    assert status["degraded"] is None
    assert all(s["projection_lag"] == 0 for s in status["sessions"].values())
    # status never claims what the graph does not hold: a graph dropped as untrusted after a kill (and not
    # rebuilt, since status builds no graph) reports no cursors; a kept graph reports every event.
    full = {name: s["events"] for name, s in status["sessions"].items()}
    assert status["graph_cursors"] == (full if status["graph_materialised"] else {})
    digest, counts = _fresh_rebuild(root, tmp_path)
    assert {key: status[key] for key in counts} == counts
    with MemoryFabric.from_path(root) as fabric:
        assert fabric.projection_digest() == digest


def test_a_full_disk_during_graph_writes_never_breaks_later_commands(tmp_path: Path) -> None:
    """Writes past a file-size limit fail like on a full disk (RLIMIT_FSIZE, a fault injected by the kernel for
    that process only); afterwards every command works, and the graph is rebuilt rather than opened."""
    root = tmp_path / "loom"
    _seed(root, 1000)
    with MemoryFabric.from_path(root) as fabric:
        fabric.project()
        assert fabric.projector.store is not None
        graph_size = os.path.getsize(fabric.projector.graph.path)
    with MemoryFabric.from_path(root, use_graph=False) as fabric:
        fabric.append_many(
            "s9", [{"type": "transcript.turn", "payload": {"role": "user", "text": f"more {i}"}} for i in range(600)]
        )
    derived_size = os.path.getsize(root / ".zaxy" / "derived.sqlite")
    limit = max(graph_size, derived_size * 3) + 50_000
    child = subprocess.run(
        [*CHILD, str(root), "--file-limit", str(limit)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    assert child.returncode == 0, child.stderr[-2000:]
    assert "degraded=" in child.stdout and "degraded=None" not in child.stdout  # the fault did hit
    for command in (["memory", "status"], ["memory", "checkout", "note 7", "--session-id", "s0"]):
        code, body = run_zaxy_json(*command, "--eventloom-path", str(root))
        assert code == 0, body
    digest, counts = _fresh_rebuild(root, tmp_path)
    with MemoryFabric.from_path(root) as fabric:
        status = fabric.memory_status()
        assert {key: status[key] for key in counts} == counts
        assert fabric.projection_digest() == digest
