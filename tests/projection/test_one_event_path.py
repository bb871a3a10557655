"""The one-event path (append one event, project it; MCP, hooks, LangGraph puts) takes shortcuts: the writer's
log handle tells its readers what it just wrote (no re-read of the file), the catalog keeps its cursors and
counters exact across its own commits (no re-read of every session's cursor), and one statement reads every
cursor a transaction checks. These tests hold the shortcuts to what the slow paths give, and a process killed
while it appends and projects one event at a time leaves a memory the next process repairs from the log."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO_ROOT
from tests.retrieval.test_ingest_fast_paths import _drafts, _tables
from zaxy_agents.fabric import MemoryFabric

SESSIONS = ("alpha", "beta", "gamma")


def _log_lines(root: Path) -> dict[str, list[bytes]]:
    return {log.stem: log.read_bytes().splitlines(keepends=True) for log in sorted(root.glob("*.jsonl"))}


def test_one_event_at_a_time_writes_what_a_reader_of_another_writer_writes(tmp_path: Path) -> None:
    """Warm: one fabric appends and projects 90 events one at a time over three sessions (its own appends seed
    its log readers; cursors come from its caches). Cold: another fabric projects the same lines one at a time
    while they are written into its files from outside (it reads and scans every line). Same derived rows, same
    cursors and counter as a fresh read of the database, same hits."""
    warm, cold = tmp_path / "warm", tmp_path / "cold"
    drafts = _drafts(90)
    order: list[str] = []
    with MemoryFabric.from_path(warm, durability="batch", use_graph=False) as fabric:
        for i, draft in enumerate(drafts):
            session = SESSIONS[(i * 7 // 5) % 3]
            order.append(session)
            fabric.append(session, draft["type"], draft["payload"])
            assert fabric.project([session]) == 1
        catalog = fabric.projector.catalog
        cached = (dict(catalog.cursors), catalog.latest_timestamp)
        catalog._clear()  # what a fresh read of the database says
        assert (dict(catalog.cursors), catalog.latest_timestamp) == cached
        warm_hits = [(h.session, h.seq) for h in fabric.query("bada retry yesterday", k=10).hits]
    lines = _log_lines(warm)
    cold.mkdir()
    written = {session: 0 for session in lines}
    with MemoryFabric.from_path(cold, durability="batch", use_graph=False) as fabric:
        for session in order:
            with open(cold / f"{session}.jsonl", "ab") as handle:  # another process's append
                handle.write(lines[session][written[session]])
            written[session] += 1
            assert fabric.project([session]) == 1
        cold_hits = [(h.session, h.seq) for h in fabric.query("bada retry yesterday", k=10).hits]
    assert warm_hits == cold_hits and warm_hits
    assert _tables(warm) == _tables(cold)


def test_own_append_then_a_foreign_append_reads_both(tmp_path: Path) -> None:
    """The line index seeded by an append stays exact when another process appends after it: the next catch-up
    scans the foreign line and projects it."""
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as writer:
        writer.append("s", "transcript.turn", {"role": "user", "text": "first words"})
        writer.project(["s"])
        with MemoryFabric.from_path(root, durability="batch", use_graph=False) as other:
            other.append("s", "transcript.turn", {"role": "user", "text": "second words from elsewhere"})
        writer.append("s", "transcript.turn", {"role": "user", "text": "third words"})
        assert writer.project(["s"]) == 2
        assert writer.projector.catalog.cursors["s"][0] == 3
        top = writer.query("elsewhere", k=5).hits[0]
    assert (top.seq, top.text) == (2, "second words from elsewhere")


_ONE_BY_ONE_CHILD = r"""
import sys
from tests.retrieval.test_ingest_fast_paths import _drafts
from zaxy_agents.fabric import MemoryFabric
fabric = MemoryFabric.from_path(sys.argv[1], durability="batch")
drafts = _drafts(300)
for i in range(100_000):
    session, draft = ("alpha", "beta", "gamma")[i % 3], drafts[i % 300]
    fabric.append(session, draft["type"], draft["payload"])
    fabric.project([session])
    if i == 0:
        print("go", flush=True)
"""


def test_sigkill_while_projecting_one_event_at_a_time_is_repaired_on_open(tmp_path: Path) -> None:
    """A process appending and projecting one event at a time is killed at random moments (mid-transaction, mid
    append); the next process projects the gap and its catalog and hits equal a fresh projection of the log."""
    root = tmp_path / "loom"
    rng = random.Random(24)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    for _ in range(3):
        child = subprocess.Popen(
            [sys.executable, "-c", _ONE_BY_ONE_CHILD, str(root)], cwd=REPO_ROOT, stdout=subprocess.PIPE, env=env
        )
        assert child.stdout is not None and child.stdout.readline().strip() == b"go"
        time.sleep(rng.uniform(0.4, 1.5))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    for log in root.glob("*.jsonl"):
        (fresh / log.name).write_bytes(log.read_bytes())

    def state(folder: Path) -> tuple:
        with MemoryFabric.from_path(folder, use_graph=False) as fabric:
            fabric.project()
            status = fabric.memory_status()
            hits = [(h.session, h.seq) for h in fabric.query("bada retry yesterday", k=10).hits]
            cursors = dict(fabric.projector.catalog.cursors)
        return cursors, hits, {key: status[key] for key in ("entities", "current_entities", "edges")}

    killed = state(root)
    assert sum(seq for seq, _ in killed[0].values()) > 0
    assert killed == state(fresh)


def test_a_speaker_erased_and_seen_again_gets_a_row_again(tmp_path: Path) -> None:
    """The writer caches event type and speaker ids; erasing every turn of a speaker deletes its row, and a later
    turn of that speaker in the same process must create the row again, not reuse the cached (deleted) id."""
    import sqlite3

    root = tmp_path / "loom"
    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric:
        for i, speaker in enumerate(["Zed", "Ann", "Zed", "Ann"]):
            fabric.append("s", "transcript.turn", {"role": "user", "speaker": speaker, "text": f"turn {i} kettle"})
            fabric.project(["s"])
        fabric.erase_events("s", [1, 3])  # every turn of Zed: its speaker row goes
        fabric.project(["s"])
        db = sqlite3.connect(root / ".zaxy" / "derived.sqlite")
        assert [r[0] for r in db.execute("SELECT name FROM verbatim_speaker")] == ["Ann"]
        fabric.append("s", "transcript.turn", {"role": "user", "speaker": "Zed", "text": "Zed again"})
        fabric.project(["s"])
        speakers = dict(db.execute("SELECT name, id FROM verbatim_speaker"))
        owners = dict(db.execute("SELECT term, speaker FROM verbatim_speaker_term"))
        db.close()
    assert set(speakers) == {"Ann", "Zed"}
    assert set(owners.values()) <= set(speakers.values()) and owners["zed"] == speakers["Zed"]
