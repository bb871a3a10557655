"""The entity keyword index's document frequencies of known terms as count rows (``verbatim_df`` with
``captions=False``, table ``entity_keyword_term_open``), folded every ``FOLD_ROWS`` writes and before an erasure.

Whatever the fold interval, every term's df as readers get it (``EntityKeywordIndex._term_ids``, what scoring uses)
equals a plain count of the live versions holding it, from this connection and another one, through erasures, tail
writes and merges; and the rankings equal those of an index that folds at every write (the old writer's counts: one
UPDATE per term and write). An index of the previous layout (5) is upgraded in place, not rebuilt."""

from __future__ import annotations

import random
import sqlite3
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.retrieval.test_entity_tail import SESSIONS, _answers
from tests.retrieval.test_ingest_fast_paths import _drafts, _EntityBatch
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval import entity_tail, verbatim_df
from zaxy_agents.retrieval.derived import StandaloneIndexes, open_standalone
from zaxy_agents.retrieval.entity_index import NAME_WEIGHT, EntityKeywordIndex
from zaxy_agents.retrieval.posting_codec import encode_varints, varint_sizes
from zaxy_agents.storage.derived.store import DerivedStateWarning

WORDS = ["bada", "fisu", "kolo", "zaba", "retry", "deploy", "port", "service", "T-12"] + [f"w{i}" for i in range(60)]
QUERIES = ["bada retry", "service w3", "zaba kolo w17", "deploy T-12", "w40 w41 w42 port", "fisu"]


def _rows(rng: random.Random, start: int, count: int) -> list[dict]:
    return [
        {
            "id": f"v{seq}",
            "entity_type": "fact",
            "session_id": f"s{seq % 3}",
            "source_event_seq": seq,
            "name": f"service {seq % 5}",
            "summary": " ".join(rng.choices(WORDS, k=rng.randint(2, 14))) + f" rare{seq % 50}",
        }
        for seq in range(start, start + count)
    ]


def _build(folder: Path, fold_rows: int, monkeypatch: pytest.MonkeyPatch, opened: list[StandaloneIndexes]) -> list:
    """Bulk writes (main tables, one count row each) and small ones (the tail, merged by the next bulk write),
    with erasures between; every term's df as two readers see it, the count rows left, and the rankings."""
    monkeypatch.setattr(verbatim_df, "FOLD_ROWS", fold_rows)
    monkeypatch.setattr(entity_tail, "DIRECT_MIN", 60)  # a write of >= 60 postings goes to the main tables
    rng = random.Random(3)
    index = EntityKeywordIndex()
    opened.append(writer := open_standalone(folder, index))
    written: list[dict] = []
    gone: set[str] = set()
    seq = 1
    for number, size in enumerate([12, 1, 2, 15, 9, 1, 20, 11, 3, 14, 10, 1, 18, 12, 13, 2, 16, 9] * 2 + [1, 2]):
        rows = _rows(rng, seq, size)
        seq += size
        writer.on_batch(_EntityBatch(rows))
        written += rows
        if number in (7, 22):  # erase a few versions of one session: the count rows are folded first
            session = f"s{number % 3}"
            doomed = [r for r in written if r["session_id"] == session and r["id"] not in gone][-5:]
            writer.erase(session, [r["source_event_seq"] for r in doomed])
            gone.update(r["id"] for r in doomed)
    expected: Counter[str] = Counter()
    for row in written:
        if row["id"] not in gone:
            expected.update(set(index.an(row["name"]) * int(NAME_WEIGHT) + index.an(row["summary"])))
    other = EntityKeywordIndex()  # another connection: decodes the count rows itself
    opened.append(open_standalone(folder, other))
    db = sqlite3.connect(folder / "derived.sqlite")
    rows_left = db.execute("SELECT count(*) FROM entity_keyword_term_open").fetchone()[0]
    in_tail = db.execute("SELECT tail FROM entity_keyword_stats").fetchone()[0]
    terms = [r[0] for r in db.execute("SELECT term FROM entity_keyword_term")]
    db.close()
    assert len(terms) > 40 and in_tail  # the last writes are in the tail: its terms are counted by the tail
    for reader in (index, other):
        db = reader.reader()
        db.execute("BEGIN")
        try:
            found = reader._term_ids(db, terms)
            recent = reader.tail.postings(db, *_tail_state(db), terms, None)
        finally:
            db.execute("COMMIT")
        counted = {t: found[t][1] + (recent[t][2] if t in recent else 0) for t in terms}
        assert counted == {t: expected[t] for t in terms}
    rankings = [index.search(query, 30, scope) for query in QUERIES for scope in (None, ["s0"], ["s1", "s2"])]
    assert rankings == [other.search(query, 30, scope) for query in QUERIES for scope in (None, ["s0"], ["s1", "s2"])]
    assert sum(map(bool, rankings)) >= 15
    return [rows_left, rankings]


def _tail_state(db: sqlite3.Connection) -> tuple[tuple[int, int], int, int]:
    created, merges, wseq, in_tail = db.execute(
        "SELECT created, merges, wseq, tail FROM entity_keyword_stats WHERE id = 1"
    ).fetchone()
    return (int(created), int(merges)), int(wseq), int(in_tail)


def test_counts_and_rankings_do_not_depend_on_the_fold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[StandaloneIndexes] = []
    try:
        every_write = _build(tmp_path / "every", 1, monkeypatch, opened)
        assert every_write[0] == 0  # folded at each write: no count row left
        for fold_rows in (3, 1000):
            rows, rankings = _build(tmp_path / f"fold{fold_rows}", fold_rows, monkeypatch, opened)
            assert rows < fold_rows and rankings == every_write[1]
            assert rows or fold_rows < 1000  # unfolded rows are read, not only folded ones
    finally:
        for item in opened:
            item.store.close()


def _memory(root: Path) -> list[object]:
    """A memory whose entity keyword index holds count rows (bulk writes, never folded: 3 < ``FOLD_ROWS``)."""
    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric:
        drafts = _drafts(900)
        for start in (0, 300, 600):
            fabric.append_many(SESSIONS[start // 300], drafts[start : start + 300])
            fabric.project()
        reader = fabric.projector.derived.reader()
        assert reader.execute("SELECT count(*) FROM entity_keyword_term_open").fetchone()[0] >= 2
        return _answers(fabric)


def test_an_index_of_layout_5_is_upgraded_in_place(tmp_path: Path) -> None:
    """Layout 5 had no count rows (its term table held every df). Opening one creates the table, empty, without a
    rebuild (no warning, the same creation token); a table a layout-5 build may have left behind (it drops only
    the tables it knows when it rebuilds a layout-6 index) is emptied: its rows were counted into a term table
    rebuilt since."""
    root = tmp_path / "loom"
    expected = _memory(root)
    db = sqlite3.connect(root / ".zaxy" / "derived.sqlite")
    with db:  # what layout 5 holds: the counts folded into the term table, no row of counts
        verbatim_df.fold(db, "entity_keyword", captions=False)
        stale = db.execute("SELECT max(id) FROM entity_keyword_term").fetchone()[0]
        gap = encode_varints(np.array([stale]), varint_sizes(np.array([stale])))  # one term: the newest, +50
        db.execute("INSERT INTO entity_keyword_term_open(tag, ids, df, cdf) VALUES (1, ?, x'32', x'')", (gap,))
        db.execute("UPDATE meta SET value = '5' WHERE key = 'schema:index:entity_keyword'")
        created = db.execute("SELECT created FROM entity_keyword_stats").fetchone()[0]
    db.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a rebuild warns (DerivedStateWarning)
        with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric:
            fabric.project()
            assert _answers(fabric) == expected
            reader = fabric.projector.derived.reader()
            assert reader.execute("SELECT created FROM entity_keyword_stats").fetchone()[0] == created
            assert reader.execute("SELECT count(*) FROM entity_keyword_term_open").fetchone()[0] == 0
            version = reader.execute("SELECT value FROM meta WHERE key = 'schema:index:entity_keyword'").fetchone()
            assert version == ("6",)


def test_an_index_of_another_older_layout_is_rebuilt(tmp_path: Path) -> None:
    """Only layout 5 is upgraded in place: an index of layout 4 is still rebuilt from the log."""
    root = tmp_path / "loom"
    expected = _memory(root)
    db = sqlite3.connect(root / ".zaxy" / "derived.sqlite")
    with db:
        db.execute("DROP TABLE entity_keyword_term_open")
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema:index:entity_keyword'")
    db.close()
    with (
        pytest.warns(DerivedStateWarning, match="entity_keyword tables had version 4"),
        MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric,
    ):
        fabric.project()
        assert _answers(fabric) == expected
