"""The entity keyword index's tail (entity_tail.py): small writes append one row, merged later. Queries read the
main tables plus the tail, so answers must not depend on how the events were batched — one at a time, 7 or 100
per projection, merged often or not at all — nor on erasures, other processes' writes or an older index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.retrieval.test_ingest_fast_paths import _drafts, _entity_batches, _EntityBatch
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval import entity_tail
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.entity_index import EntityKeywordIndex
from zaxy_agents.storage.derived.store import DerivedStateWarning

SESSIONS = ("alpha", "beta", "gamma")
QUERIES = ["bada retry", "service port", "zaba", "deploy yesterday kolo", "T-12 fisu", "src/a.py"]
SCOPES = [None, ["alpha"], ["beta", "gamma"], list(SESSIONS)]


def _keyword(fabric: MemoryFabric) -> EntityKeywordIndex:
    return next(index for index in fabric.projector.listeners if isinstance(index, EntityKeywordIndex))


def _answers(fabric: MemoryFabric) -> list[object]:
    index = _keyword(fabric)
    found: list[object] = [index.search(q, 40, scope) for q in QUERIES for scope in SCOPES]
    found += [[(v.id, s) for v, s in fabric.search_entities(q, limit=10)] for q in QUERIES]
    found.append(len(index))
    return found


def _log(root: Path) -> dict[str, list[bytes]]:
    """150 events over three sessions (the same bytes for every projection compared)."""
    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric:
        order = []
        for i, draft in enumerate(_drafts(150)):
            order.append(SESSIONS[i % 3])
            fabric.append(SESSIONS[i % 3], draft["type"], draft["payload"])
    lines = {log.stem: log.read_bytes().splitlines(keepends=True) for log in root.glob("*.jsonl")}
    return {"order": order, **lines}  # type: ignore[dict-item]


def _project_in_steps(log: dict, root: Path, step: int) -> tuple[list[object], list[object], int]:
    """The events of ``log`` written into ``root``'s files one by one, projected every ``step`` events; answers
    before and after erasing a few events of two sessions, and how many postings the tail holds at the end."""
    root.mkdir()
    written = dict.fromkeys(SESSIONS, 0)
    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric:
        for i, session in enumerate(log["order"]):
            with open(root / f"{session}.jsonl", "ab") as handle:
                handle.write(log[session][written[session]])
            written[session] += 1
            if (i + 1) % step == 0:
                fabric.project()
        fabric.project()
        before = _answers(fabric)
        fabric.erase_events("alpha", [1, 4, 7, 40])
        fabric.erase_events("gamma", [2, 3])
        fabric.project()
        after = _answers(fabric)
        stats = fabric.projector.derived.reader().execute("SELECT tail FROM entity_keyword_stats").fetchone()
    return before, after, int(stats[0])


def test_answers_do_not_depend_on_the_steps_or_the_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reference: no tail at all (every write to the main tables), the whole log in one projection. Then one
    event at a time, 7 and 100 per projection with the tail (merging when full: a small limit forces merges
    mid-run), before and after erasures (which merge the tail, then remove). Same versions, same scores."""
    log = _log(tmp_path / "log")
    monkeypatch.setattr(entity_tail, "DIRECT_MIN", 0)
    reference = _project_in_steps(log, tmp_path / "reference", 150)
    assert reference[2] == 0 and sum(map(bool, reference[0])) > 15
    monkeypatch.undo()
    for step in (1, 7, 100):
        assert _project_in_steps(log, tmp_path / f"step{step}", step)[:2] == reference[:2], step
    monkeypatch.setattr(entity_tail, "TAIL_LIMIT", 300)  # a merge every ~10 events
    merged = _project_in_steps(log, tmp_path / "small-tail", 1)
    assert merged[:2] == reference[:2]


def test_one_at_a_time_writes_the_tail_and_a_batch_merges_it(tmp_path: Path) -> None:
    """An event projected alone adds one tail row and no term or run; a large write merges the tail first, so
    the main tables hold every posting and the tail is empty."""
    with MemoryFabric.from_path(tmp_path / "loom", durability="batch", use_graph=False) as fabric:
        db = fabric.projector.derived.reader()

        def counts() -> tuple[int, int, int]:
            found = [
                db.execute(f"SELECT count(*) FROM entity_keyword_{table}").fetchone()[0]
                for table in ("tail", "term", "post", "post_open")
            ]
            return found[0], found[1], found[2] + found[3]  # posting rows: sealed and open (one per write)

        drafts = [d for d in _drafts(600) if d["type"] == "fact.asserted"]
        for draft in drafts[:5]:
            fabric.append("alpha", draft["type"], draft["payload"])
            fabric.project()
        assert counts()[0] == 5 and counts()[1:] == (0, 0)
        hits = _keyword(fabric).search("bada retry service", 10)
        assert hits
        fabric.append_many("alpha", drafts[5:200])
        fabric.project()
        tail_rows, terms, runs = counts()
        assert tail_rows == 0 and terms and runs
        assert db.execute("SELECT tail FROM entity_keyword_stats").fetchone()[0] == 0


def test_a_reader_of_another_writer_sees_the_tail_grow_merge_and_lose_erased_docs(tmp_path: Path) -> None:
    """Two connections (two processes): one writes small batches (with a merge and an erasure between), the other
    only reads through its own tail view, extended by the rows written since it looked (read again after a
    merge); its answers equal a fresh reader's every time."""
    writer = open_standalone(tmp_path, EntityKeywordIndex())
    reader_index = EntityKeywordIndex()
    reader = open_standalone(tmp_path, reader_index)
    try:
        for number, rows in enumerate(_entity_batches(30, 3)):
            writer.on_batch(_EntityBatch(rows))
            if number == 12:
                writer.erase("s1", [r["source_event_seq"] for r in rows if r["session_id"] == "s1"])
            if number == 20:  # a batch large enough to go to the main tables: the tail is merged first
                writer.on_batch(_EntityBatch([dict(r, id=f"big{i}", source_event_seq=1000 + i)
                                              for i, r in enumerate(_entity_batches(1, 200)[0])]))  # fmt: skip
            if number % 4 != 3:  # the reader looks now and then: merges happen, then new rows, before it looks
                continue
            fresh_index = EntityKeywordIndex()
            fresh = open_standalone(tmp_path, fresh_index)
            try:
                for query in ("bada retry", "service", "rare3 zaba", "w7 T-12"):
                    for scope in (None, ["s0"], ["s1", "s2"]):
                        assert reader_index.search(query, 30, scope) == fresh_index.search(query, 30, scope)
            finally:
                fresh.close()
        assert reader_index.tail.count > 0  # the view held tail rows
    finally:
        writer.close()
        reader.close()


def test_an_index_of_the_previous_version_is_rebuilt_from_the_log_on_open(tmp_path: Path) -> None:
    """Schema 2 (no tail) -> 3: the index's tables are dropped and rebuilt from the log on first open, with the
    answers the index had."""
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric:
        for i, draft in enumerate(_drafts(60)):
            fabric.append(SESSIONS[i % 3], draft["type"], draft["payload"])
            fabric.project()
        expected = _answers(fabric)
    db = sqlite3.connect(root / ".zaxy" / "derived.sqlite")
    with db:  # what schema 2 left: no tail table, no tail columns
        db.execute("DROP TABLE entity_keyword_tail")
        db.execute("DELETE FROM entity_keyword_post")
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema:index:entity_keyword'")
    db.close()
    with (
        pytest.warns(DerivedStateWarning, match="entity_keyword tables had version 2"),
        MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric,
    ):
        fabric.project()
        assert _answers(fabric) == expected
        names = {r[0] for r in fabric.projector.derived.reader().execute("SELECT name FROM sqlite_master")}
        assert "entity_keyword_tail" in names
