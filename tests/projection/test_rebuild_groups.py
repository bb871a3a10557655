"""A rebuild commits its chunks in groups (``Rebuild._group``): the derived rows are exactly those of one
commit per chunk, and a failure inside a group rolls that whole group back — the store stays at the previous
group's commit (every listener with the catalog) and a later catch-up completes it to the same answers."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection import rebuild as rebuild_module
from zaxy_agents.retrieval.verbatim import VerbatimIndex

WORDS = ["bada", "fisu", "kolo", "zaba", "retry", "deploy", "yesterday", "port", "service", "T-12", "src/a.py"]
QUERIES = ["bada retry yesterday", "deploy port service", "kolo zaba", "fisu T-12"]


def _log(root: Path) -> None:
    rng = random.Random(7)
    with MemoryFabric.from_path(root, durability="batch") as fabric:
        for session, size in (("a", 400), ("b", 230), ("c", 170)):
            drafts = []
            for i in range(size):
                text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 25)))
                if i % 4 == 0:
                    payload = {"subject": f"service {i % 7}", "predicate": "port", "object": str(i), "fact": text}
                    drafts.append({"type": "fact.asserted", "payload": payload})
                else:
                    drafts.append(
                        {"type": "transcript.turn", "payload": {"role": "user", "speaker": "Ann", "text": text}}
                    )
            fabric.append_many(session, drafts)


def _tables(root: Path, only: str = "") -> dict[str, list[tuple]]:
    db = sqlite3.connect(root / ".zaxy" / "derived.sqlite")
    try:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        tables = {
            name: sorted(db.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
            for name in names
            if name.startswith(only) and name not in ("verbatim_stats", "entity_keyword_stats", "meta")
        }
        if not only:  # verbatim_stats and entity_keyword_stats hold a random creation token: compare the rest
            tables["verbatim_stats"] = [r[:-3] for r in db.execute("SELECT * FROM verbatim_stats")]
            tables["entity_keyword_stats"] = [r[:-1] for r in db.execute("SELECT * FROM entity_keyword_stats")]
        return tables
    finally:
        db.close()


def _answers(fabric: MemoryFabric) -> list[list[tuple]]:
    return [[(h.session, h.seq, round(h.score, 9)) for h in fabric.query(q, k=10).hits] for q in QUERIES]


def _rebuilt(root: Path, monkeypatch: pytest.MonkeyPatch, group: int) -> list[list[tuple]]:
    monkeypatch.setattr(rebuild_module, "REBUILD_GROUP_EVENTS", group)
    monkeypatch.setattr(rebuild_module, "REBUILD_GROUPS_AT_LEAST", 1)  # 800 events: groups of 250 all the same
    with MemoryFabric.from_path(root, durability="batch") as fabric:
        fabric.projector.batch_events = 100
        fabric.reproject()
        return _answers(fabric)


def test_grouped_rebuild_writes_what_one_commit_per_chunk_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _log(tmp_path / "per-chunk")
    shutil.copytree(tmp_path / "per-chunk", tmp_path / "grouped")
    per_chunk = _rebuilt(tmp_path / "per-chunk", monkeypatch, 1)
    grouped = _rebuilt(tmp_path / "grouped", monkeypatch, 250)
    assert grouped == per_chunk and all(per_chunk)
    assert _tables(tmp_path / "grouped") == _tables(tmp_path / "per-chunk")


def test_a_failure_inside_a_group_rolls_it_back_and_catch_up_completes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _log(tmp_path / "reference")
    shutil.copytree(tmp_path / "reference", tmp_path / "failed")
    reference = _rebuilt(tmp_path / "reference", monkeypatch, 1)

    calls = []
    apply = VerbatimIndex.apply

    def failing(self: VerbatimIndex, batch, db, catalog=None) -> None:  # type: ignore[no-untyped-def]
        calls.append(batch.event_count)
        if len(calls) == 5:  # chunks a1-a3 were one group (300 >= 250 events); a4 + b1 are the second one
            raise RuntimeError("disk full (simulated)")
        apply(self, batch, db, catalog)

    monkeypatch.setattr(rebuild_module, "REBUILD_GROUP_EVENTS", 250)
    monkeypatch.setattr(rebuild_module, "REBUILD_GROUPS_AT_LEAST", 1)
    with MemoryFabric.from_path(tmp_path / "failed", durability="batch") as fabric:
        fabric.projector.batch_events = 100
        monkeypatch.setattr(VerbatimIndex, "apply", failing)
        with pytest.raises(RuntimeError, match="simulated"):
            fabric.reproject()
        monkeypatch.setattr(VerbatimIndex, "apply", apply)
        db = sqlite3.connect(tmp_path / "failed" / ".zaxy" / "derived.sqlite")
        try:  # the first group only, every listener with the catalog
            assert db.execute("SELECT session, seq FROM cat_cursors").fetchall() == [("a", 300)]
            listeners = db.execute("SELECT listener, session, seq FROM lst_cursors ORDER BY listener").fetchall()
            assert {(session, seq) for _, session, seq in listeners} == {("a", 300)}
            indexed = db.execute(
                "SELECT (SELECT count(*) FROM verbatim_doc) + (SELECT count(*) FROM verbatim_tail_doc)"
            )
            assert db.execute("SELECT docs FROM verbatim_stats").fetchone()[0] == indexed.fetchone()[0] == 300
        finally:
            db.close()
        fabric.project()
        assert _answers(fabric) == reference
    assert _tables(tmp_path / "failed", "cat_") == _tables(tmp_path / "reference", "cat_")
