"""An erasure's derived state does not depend on the path it took (projection/erase_local.py).

For erasures of several shapes, three memories are compared table by table: the erasure as it runs (``targeted``:
local erasures delete the erased events' rows without re-planning), the same erasure forced through the session
re-plan (``replanned``, the path every erasure took before), and a fresh ``reproject`` of the scrubbed log
(``fresh``). Every table of ``derived.sqlite`` is compared: the catalog's with its surrogate ids (vid, kid, sid,
tid, eid, rid) resolved to what they name, and the order of each session's versions and edges kept; a table this
test does not know fails it. Checkouts return the same prompt in all three, and no byte of the erased content
remains in the memory folder.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.erasure_helpers import files_containing
from tests.projection.test_projection_lifecycle import _mixed_history
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection import erase_local, projector

SECRET = "078-05-1120"
CARD = "4111-1111-1111-1111"

_VERSIONS = (
    "SELECT s.name, lower(hex(v.id)), t.name, k.norm, v.name, v.body, v.valid_from, v.valid_to, v.invalidated, "
    "v.seq, hex(v.hash), e.name, v.importance, v.source_path, v.asserted FROM cat_versions v "
    "LEFT JOIN cat_sessions s ON s.sid = v.sid LEFT JOIN cat_types t ON t.tid = v.tid "
    "LEFT JOIN cat_types e ON e.tid = v.etid "
    "LEFT JOIN cat_keys k ON k.kid = v.kid ORDER BY v.vid"
)
_KEYS = (
    "SELECT s.name, t.name, k.norm, lower(hex(v.id)), k.closed FROM cat_keys k "
    "LEFT JOIN cat_sessions s ON s.sid = k.sid "
    "LEFT JOIN cat_types t ON t.tid = k.tid LEFT JOIN cat_versions v ON v.vid = k.cur"
)
_EDGES = (
    "SELECT s.name, quote(e.id), lower(hex(a.id)), lower(hex(b.id)), ka.norm, kb.norm, t.name, e.inferred, "
    "e.confidence, e.method, e.ev_session, e.ev_seq, hex(e.ev_hash), e.borrow, e.valid_from, e.valid_to, e.seq, "
    "hex(e.hash) FROM cat_edges e LEFT JOIN cat_sessions s ON s.sid = e.sid "
    "LEFT JOIN cat_versions a ON a.vid = e.source_vid "
    "LEFT JOIN cat_versions b ON b.vid = e.target_vid LEFT JOIN cat_keys ka ON ka.kid = e.source_kid "
    "LEFT JOIN cat_keys kb ON kb.kid = e.target_kid LEFT JOIN cat_types t ON t.tid = e.rtid ORDER BY e.eid"
)


def _by_session(rows: list[tuple[Any, ...]]) -> dict[str, list[tuple[Any, ...]]]:
    """Rows (session first) per session, in table order: the order within a session is part of the state."""
    grouped: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        grouped.setdefault(row[0], []).append(row[1:])
    return grouped


# The catalog's tables, with their surrogate ids resolved; every other table is compared row for row.
_CANONICAL: dict[str, Callable[[sqlite3.Connection], Any]] = {
    "cat_versions": lambda db: _by_session(db.execute(_VERSIONS).fetchall()),
    "cat_keys": lambda db: sorted(db.execute(_KEYS).fetchall()),
    "cat_edges": lambda db: _by_session(db.execute(_EDGES).fetchall()),
    "cat_sessions": lambda db: sorted(db.execute("SELECT name FROM cat_sessions").fetchall()),
    "cat_failures": lambda db: sorted(
        db.execute("SELECT id, session, seq, event_type, reason FROM cat_failures").fetchall()
    ),
    "cat_refs": lambda db: sorted(
        db.execute("SELECT s.name, r.h, r.seq FROM cat_refs r JOIN cat_sessions s ON s.sid = r.sid").fetchall()
    ),
    "cat_types": lambda db: sorted(db.execute("SELECT name FROM cat_types").fetchall()),
    "cat_refs_partial": lambda db: sorted(
        db.execute("SELECT s.name FROM cat_refs_partial r JOIN cat_sessions s ON s.sid = r.sid").fetchall()
    ),
}
# What legitimately differs between two memories holding the same state: SQLite's own bookkeeping; names in the
# type and label dictionaries (a rebuild does not know the types and labels only erased events used; neither
# erasure path removes them: they name event types, entity types and relation types, never content), and meta
# entries that record history rather than state.
_NOT_STATE = {"sqlite_sequence", "sqlite_stat1", "sqlite_stat4"}
_RAW_CATALOG = {"cat_counters", "cat_cursors", "cat_feedback", "cat_failure_counts", "cat_sources", "cat_labels"}
_DICTIONARIES = {"cat_types", "cat_labels"}
_HISTORY_META = ("erased:", "rebuild", "reproject", "graph")


def _state(folder: Path, *, dictionaries: bool = True) -> dict[str, Any]:
    db = sqlite3.connect(folder / ".zaxy" / "derived.sqlite")
    try:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        state: dict[str, Any] = {}
        for table in tables:
            if table in _NOT_STATE or (not dictionaries and table in _DICTIONARIES):
                continue
            if table in _CANONICAL:
                state[table] = _CANONICAL[table](db)
            elif table == "meta":
                rows = db.execute("SELECT * FROM meta").fetchall()
                state[table] = sorted(r for r in rows if not str(r[0]).startswith(_HISTORY_META))
            else:
                assert table in _RAW_CATALOG or not table.startswith("cat_"), (
                    f"catalog table {table} is not compared by this test"
                )
                state[table] = sorted(db.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
        return state
    finally:
        db.close()


def _assert_same(left: dict[str, Any], right: dict[str, Any], what: str) -> None:
    assert sorted(left) == sorted(right), what
    for table in left:
        assert left[table] == right[table], f"{what}: table {table} differs"


def _chat(fabric: MemoryFabric, session: str, turns: int) -> None:
    speakers = ("user", "assistant", "tool")
    drafts = [
        {
            "type": "transcript.turn",
            "payload": {"role": speakers[i % 3], "text": f"turn {i} about the plan, item {i % 4}"},
        }
        for i in range(turns)
    ]
    drafts[7]["payload"]["text"] = f"my social security number is {SECRET}"
    fabric.append_many(session, drafts)


def _facts(fabric: MemoryFabric, session: str) -> None:
    """Facts that later events supersede, relations between them, an invalidation, feedback and a turn."""
    rng = random.Random(11)
    for i in range(24):
        fabric.append(session, "fact.asserted", {"subject": f"svc{i % 3}", "predicate": "port", "object": str(i)})
        if i % 5 == 0:
            fabric.append(session, "task.created", {"task_id": f"T-{i}", "title": f"work {i} {SECRET}"})
            fabric.append(session, "command.completed", {"command": f"pytest -k t{i}", "task_id": f"T-{i}"})
        if i % 7 == 0:
            fabric.append(
                session, "memory.invalidated", {"entity": f"svc{rng.randrange(3)} port", "entity_type": "fact"}
            )
        if i % 6 == 0:
            fabric.append(
                session, "memory.feedback", {"entity_name": f"T-{i}", "entity_type": "task", "feedback": "used"}
            )


def _documents(fabric: MemoryFabric, session: str) -> None:
    """Document chunks (sources), a task with feedback on it, an invalidation that fails: the erased ones hold the
    secret, one chunk of the first document stays (its source must stay too)."""
    _mixed_history(fabric, "other", 30)
    for path, index, text in (("docs/a.md", 0, "intro"), ("docs/a.md", 1, SECRET), ("docs/b.md", 0, SECRET)):
        fabric.append(session, "document.chunk", {"path": path, "chunk_index": index, "text": f"chunk: {text}"})
    fabric.append(session, "task.created", {"task_id": "T-99", "title": f"file taxes with {SECRET}"})
    feedback = {"entity_name": "T-99", "entity_type": "task", "feedback": "used", "note": SECRET}
    fabric.append(session, "memory.reinforced", feedback)
    fabric.append(session, "memory.invalidated", {"entity": f"ghost {SECRET}", "entity_type": "fact"})
    fabric.append(session, "transcript.turn", {"role": "user", "text": "the document is done"})


def _erasures(fabric: MemoryFabric) -> list[tuple[str, list[int]]]:
    """(session, erased seqs) of every erasure record in the log."""
    return [
        (event.session, [seq for r in event.payload["ranges"] for seq in range(r["from_seq"], r["to_seq"] + 1)])
        for summary in fabric.log.sessions()
        for event in fabric.log.replay(summary.session)
        if event.type == "eventloom.erased"
    ]


def _seqs_of(fabric: MemoryFabric, session: str, text: str) -> list[int]:
    return [event.seq for event in fabric.log.replay(session) if text in str(event.payload)]


def _store(fabric: MemoryFabric) -> None:
    from zaxy_agents.langgraph import ZaxyStore

    _mixed_history(fabric, "other", 40)
    store = ZaxyStore(fabric)
    for version in range(3):
        store.put(("users", "u1"), "secret", {"text": f"version {version}: {SECRET}"})
        store.put(("users", "u1"), f"other{version}", {"text": f"kept item {version}"})
    store.put(("users", "u1"), "prefs", {"text": "likes tea"})


def _erase_store(fabric: MemoryFabric) -> None:
    from zaxy_agents.langgraph import ZaxyStore

    ZaxyStore(fabric).delete(("users", "u1"), "secret")


# (name, build the memory, erase, whether the targeted erasure is local)
_SHAPES: list[tuple[str, Callable[[MemoryFabric], None], Callable[[MemoryFabric], None], bool]] = [
    ("store key with several versions", _store, _erase_store, True),
    (
        "middle of a chat",
        lambda f: (_chat(f, "chat", 20), _mixed_history(f, "other", 30)),
        lambda f: f.erase_events("chat", _seqs_of(f, "chat", SECRET), actor="test"),
        True,
    ),
    (
        "a whole session",
        lambda f: (_chat(f, "chat", 20), _mixed_history(f, "other", 30)),
        lambda f: f.erase_session("chat", actor="test"),
        True,
    ),
    (
        "a range with each speaker's first turn",
        lambda f: _chat(f, "chat", 20),
        lambda f: f.erase_range("chat", 1, 8, actor="test"),
        False,
    ),
    (
        "superseded facts, relations, feedback",
        lambda f: (_facts(f, "work"), _mixed_history(f, "other", 30)),
        lambda f: f.erase_events("work", _seqs_of(f, "work", SECRET), actor="test"),
        False,
    ),
    (
        "document chunks, a task with feedback, a failed invalidation",
        lambda f: _documents(f, "work"),
        lambda f: f.erase_events("work", _seqs_of(f, "work", SECRET), actor="test"),
        True,
    ),
    (
        "a later command of a task",
        lambda f: (_facts(f, "work"), f.append("work", "command.completed", {"command": f"echo {CARD}"})),
        lambda f: f.erase_events("work", _seqs_of(f, "work", CARD), actor="test"),
        True,
    ),
]

_QUESTIONS = ("what did the user say about the plan?", "which port does svc1 use?", "what is in the store?", SECRET)


def _replan(targeted: Path, replanned: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Give ``replanned`` (a copy of ``targeted`` before its erasures) the same scrubbed log and ask its projector
    what ``erase_events`` asked of ``targeted``'s, through the session re-plan."""
    for log in targeted.glob("*.jsonl"):
        shutil.copy(log, replanned / log.name)
    with monkeypatch.context() as patched:
        patched.setattr(projector, "_known", lambda *args: None)  # every erasure re-plans its session
        with MemoryFabric.from_path(replanned) as fabric:
            for session, seqs in _erasures(fabric):
                fabric.projector.erase(session, seqs, None)
            fabric.project()


def _prompts(folder: Path) -> list[str]:
    with MemoryFabric.from_path(folder) as fabric:
        return [fabric.checkout(question).prompt for question in _QUESTIONS]


@pytest.mark.parametrize("shape", _SHAPES, ids=[shape[0] for shape in _SHAPES])
def test_targeted_erasure_equals_the_replan_and_a_fresh_rebuild(
    tmp_path: Path, shape: tuple[str, Any, Any, bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, build, erase, local = shape
    targeted, replanned, fresh, caught_up = (tmp_path / name for name in ("t", "r", "f", "c"))
    with MemoryFabric.from_path(targeted) as fabric:
        build(fabric)
        fabric.project()
        fabric.checkout("plan")
    shutil.copytree(targeted, replanned)
    shutil.copytree(targeted, caught_up)

    taken: list[bool] = []
    original = erase_local.erase_locally

    def spy(*args: Any) -> bool:
        taken.append(original(*args))
        return taken[-1]

    monkeypatch.setattr("zaxy_agents.projection.sqlite_catalog.erase_locally", spy)
    with MemoryFabric.from_path(targeted) as fabric:
        erase(fabric)
        fabric.project()
    assert taken and all(taken) == local, taken

    fresh.mkdir()
    for log in targeted.glob("*.jsonl"):  # the same scrubbed log (and erasure records) for the two others
        for folder in (fresh, caught_up):
            shutil.copy(log, folder / log.name)
    _replan(targeted, replanned, monkeypatch)
    with MemoryFabric.from_path(fresh) as fabric:
        fabric.reproject(digest=False)
    with MemoryFabric.from_path(caught_up) as fabric:  # another store that never saw the erasure meets its record
        fabric.project()

    state = _state(targeted)
    _assert_same(state, _state(replanned), "targeted vs re-planned")
    _assert_same(state, _state(caught_up), "targeted vs an erasure met by catch-up")
    catalog = {table: rows for table, rows in _state(targeted, dictionaries=False).items() if table.startswith("cat_")}
    rebuilt = {table: rows for table, rows in _state(fresh, dictionaries=False).items() if table.startswith("cat_")}
    _assert_same(catalog, rebuilt, "targeted vs a fresh rebuild (catalog)")
    assert _prompts(targeted) == _prompts(replanned) == _prompts(fresh)
    assert files_containing(targeted, CARD) == []
    if "later command" not in shape[0]:
        assert files_containing(targeted, SECRET) == []


def test_a_local_erasure_that_forgets_a_table_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above fails when the targeted path leaves one kind of row behind (here: the edges)."""
    targeted, replanned = tmp_path / "t", tmp_path / "r"
    with MemoryFabric.from_path(targeted) as fabric:
        _chat(fabric, "chat", 20)
        fabric.project()
    shutil.copytree(targeted, replanned)
    with monkeypatch.context() as patched:
        patched.setattr(erase_local, "_delete_edges", lambda *args: None)
        with MemoryFabric.from_path(targeted) as fabric:
            fabric.erase_events("chat", _seqs_of(fabric, "chat", SECRET), actor="test")
    _replan(targeted, replanned, monkeypatch)
    _assert_same(_state(replanned), _state(replanned), "the same memory")
    with pytest.raises(AssertionError, match="table cat_edges differs"):
        _assert_same(_state(targeted), _state(replanned), "targeted vs re-planned")


def test_a_layout_7_catalog_is_migrated_and_its_sessions_re_plan_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Layout 7 -> 8 in place: ``cat_refs`` starts empty, so the sessions projected before it are partial and their
    first erasure re-plans the session (which records every reference); the next one is local. New sessions are
    complete from their first event."""
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        _chat(fabric, "chat", 20)
        fabric.project()
    db = sqlite3.connect(root / ".zaxy" / "derived.sqlite")
    with db:  # what a layout-7 file is: the same tables without the two of layout 8
        db.execute("DROP TABLE cat_refs")
        db.execute("DROP TABLE cat_refs_partial")
        db.execute("UPDATE meta SET value = '7' WHERE key = 'schema:catalog'")
    db.close()
    taken: list[bool] = []
    original = erase_local.erase_locally
    monkeypatch.setattr(
        "zaxy_agents.projection.sqlite_catalog.erase_locally", lambda *args: taken.append(original(*args)) or taken[-1]
    )
    with MemoryFabric.from_path(root) as fabric:
        assert fabric.projector.derived.meta("schema:catalog") == "8"
        assert fabric.projector.catalog.counts("chat")["entities"] > 0  # migrated, not emptied for a rebuild
        _chat(fabric, "fresh", 20)
        fabric.project()
        fabric.erase_events("chat", _seqs_of(fabric, "chat", SECRET), actor="test")
        fabric.erase_events("chat", [11], actor="test")
        fabric.erase_events("fresh", _seqs_of(fabric, "fresh", SECRET), actor="test")
    assert taken == [False, True, True]


def test_the_planner_records_the_references_an_erasure_reads_back(tmp_path: Path) -> None:
    """``cat_refs`` rows are what the planner collects while planning; an erasure recomputes them with
    ``event_refs``: both must name the same keys for every event (else erased events would leave rows)."""
    from zaxy_agents.projection.erase_local import event_refs
    from zaxy_agents.projection.planner import ProjectionPlanner

    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        _facts(fabric, "work")
        _documents(fabric, "work")
        _chat(fabric, "chat", 12)
        planner = ProjectionPlanner()
        checked = 0
        for session in ("work", "chat", "other"):
            for envelope in fabric.log.replay_envelopes(session):
                extraction = fabric.projector.extractors.extract(envelope)
                planner.add(envelope, extraction)
                planned = {digest for _, digest, seq in planner.take_batch().refs if seq == envelope["seq"]}
                assert planned == event_refs(envelope, extraction), (session, envelope["seq"], envelope["type"])
                checked += bool(planned)
        assert checked > 60
