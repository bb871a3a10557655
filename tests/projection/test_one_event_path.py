"""The one-event path (append one event, project it; MCP, hooks, LangGraph puts) takes shortcuts: the writer's
log handle tells its readers what it just wrote (no re-read of the file), the catalog keeps its cursors and
counters exact across its own commits (no re-read of every session's cursor), and one statement reads every
cursor a transaction checks. These tests hold the shortcuts to what the slow paths give, and a process killed
while it appends and projects one event at a time leaves a memory the next process repairs from the log."""

from __future__ import annotations

import contextlib
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


def _versions(root: Path) -> list[tuple]:
    """Every version as names (session, type, identity norm, event seq, event type), not as integer ids: the same
    for two memories whose ids were given in a different order."""
    import sqlite3

    db = sqlite3.connect(root / ".zaxy" / "derived.sqlite")
    try:
        return sorted(
            db.execute(
                "SELECT s.name, t.name, k.norm, ks.name, kt.name, v.seq, e.name, lower(hex(v.id)) "
                "FROM cat_versions v JOIN cat_sessions s ON s.sid = v.sid JOIN cat_types t ON t.tid = v.tid "
                "JOIN cat_keys k ON k.kid = v.kid JOIN cat_sessions ks ON ks.sid = k.sid "
                "JOIN cat_types kt ON kt.tid = k.tid JOIN cat_types e ON e.tid = v.etid"
            ).fetchall()
        )
    finally:
        db.close()


def test_remembered_catalog_ids_are_dropped_when_another_connection_erased(tmp_path: Path) -> None:
    """The catalog writer remembers session, type and identity ids and the next version number between its
    transactions. Another process erases events of a session (its rows go, the session comes back with a new id and
    its versions with new numbers) between this process's catch-up check and its next write transaction (the check
    is skipped once here): the ids are dropped inside the transaction, and every version names the same session,
    type and identity as in a fresh projection of the same logs."""
    root, fresh = tmp_path / "loom", tmp_path / "fresh"
    drafts = _drafts(40)
    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric:
        for i, draft in enumerate(drafts[:20]):
            fabric.append(SESSIONS[i % 2], draft["type"], draft["payload"])
            fabric.project([SESSIONS[i % 2]])
        with MemoryFabric.from_path(root, durability="batch", use_graph=False) as other:
            other.erase_events("alpha", [1, 2, 3])
            other.append("alpha", drafts[20]["type"], drafts[20]["payload"])
            other.project(["alpha"])
        catalog = fabric.projector.catalog
        catalog.refresh = lambda: False  # type: ignore[method-assign]  # the commit came after this check
        fabric.append("beta", drafts[21]["type"], drafts[21]["payload"])
        assert fabric.project(["beta"]) == 1  # its versions' numbers follow the other process's
        del catalog.refresh
        for i, draft in enumerate(drafts[22:], 22):
            fabric.append(SESSIONS[i % 2], draft["type"], draft["payload"])
            assert fabric.project([SESSIONS[i % 2]]) == 1
    fresh.mkdir()
    for log in root.glob("*.jsonl"):
        (fresh / log.name).write_bytes(log.read_bytes())
    with MemoryFabric.from_path(fresh, durability="batch", use_graph=False) as fabric:
        fabric.project()
    assert _versions(root) == _versions(fresh) and len(_versions(root)) > 20


def test_ids_of_a_rolled_back_transaction_are_not_remembered(tmp_path: Path) -> None:
    """A write transaction that fails after the catalog wrote its rows (an index raises) is rolled back: the ids
    it created (a new session, identities, version numbers) are not remembered, and the derived rows equal those
    of a process that projected the same lines one at a time without failing."""
    failing, clean = tmp_path / "failing", tmp_path / "clean"
    drafts = _drafts(30)
    order: list[str] = []
    with MemoryFabric.from_path(failing, durability="batch", use_graph=False) as fabric:
        for i, draft in enumerate(drafts):
            session = "delta" if i == 10 else SESSIONS[i % 3]
            order.append(session)
            fabric.append(session, draft["type"], draft["payload"])
            if i == 10:
                index = fabric.projector._durable[-1]

                def broken(*args: object, **kwargs: object) -> None:
                    raise RuntimeError("disk on fire")

                index.apply = broken  # type: ignore[method-assign]
                with contextlib.suppress(RuntimeError):
                    fabric.project([session])
                del index.apply
                assert fabric.projector.catalog.cursors.get(session) is None  # nothing of it committed
            assert fabric.project([session]) == 1
    lines = _log_lines(failing)
    clean.mkdir()
    written = {session: 0 for session in lines}
    with MemoryFabric.from_path(clean, durability="batch", use_graph=False) as fabric:
        for session in order:
            with open(clean / f"{session}.jsonl", "ab") as handle:
                handle.write(lines[session][written[session]])
            written[session] += 1
            assert fabric.project([session]) == 1
    assert _tables(failing) == _tables(clean)
