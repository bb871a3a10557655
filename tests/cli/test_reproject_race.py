"""`zaxy reproject` racing other CLI processes: each either rebuilds or refuses with a structured "held by another
process" (exit 4), never a traceback; the graph left behind matches a fresh rebuild (issue 25, item 9)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import run_zaxy_json
from zaxy_agents.fabric import MemoryFabric


def _start(root: Path, *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "zaxy_agents.cli.entry", *args, "--eventloom-path", str(root), "--json"]
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_concurrent_reprojects_refuse_cleanly(tmp_path: Path) -> None:
    root = tmp_path / "eventloom"
    with MemoryFabric.from_path(root) as fabric:
        for index in range(120):
            fabric.append("s", "fact.asserted", {"key": f"k{index % 40}", "fact": f"value {index} of the service"})
    outcomes = []
    for _round in range(2):
        racers = [_start(root, "reproject") for _ in range(3)]
        racers.append(_start(root, "memory", "checkout", "value of the service", "-s", "s"))
        for process in racers:
            stdout, stderr = process.communicate(timeout=300)
            assert "Traceback" not in stdout + stderr, stdout + stderr
            outcomes.append((process.args[3], process.returncode, stdout))
    for command, code, stdout in outcomes:
        if command == "reproject":
            assert code in (0, 4), stdout
            body = json.loads(stdout)
            if code == 4:
                assert body["error"]["code"] == "locked" and "held by another process" in body["error"]["message"]
            else:
                assert body["events"] == 120
    code, rebuilt = run_zaxy_json("reproject", "--digest", "--eventloom-path", str(root))
    assert code == 0 and len(rebuilt["digest"]) == 64
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "s.jsonl").write_bytes((root / "s.jsonl").read_bytes())
    assert run_zaxy_json("reproject", "--digest", "--eventloom-path", str(fresh))[1]["digest"] == rebuilt["digest"]


def test_reproject_never_lets_go_of_the_graph(tmp_path: Path, monkeypatch) -> None:
    """The deterministic core of the race: a rebuild that closed the graph file and re-opened it let another
    process take it in between (then failed half-way with a traceback). Nothing is released mid-rebuild now."""
    from zaxy_agents.storage.files import kuzu_database

    released: list[str] = []
    real_release = kuzu_database._release_database
    release = lambda path: released.append(str(path)) or real_release(path)  # noqa: E731
    monkeypatch.setattr(kuzu_database, "_release_database", release)
    with MemoryFabric.from_path(tmp_path / "eventloom") as fabric:
        fabric.append("s", "fact.asserted", {"key": "db", "fact": "the database is PostgreSQL"})
        before = fabric.reproject()
        assert fabric.reproject() == before and released == []
