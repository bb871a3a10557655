"""Document frequencies of known terms kept as count rows and folded every ``FOLD_ROWS`` writes
(``retrieval/verbatim_df.py``): whatever the fold interval, every term's counts as readers get them
(``VerbatimIndex.term_ids``) equal a plain count of the live docs, from this connection and another one, also
after erasures (which fold first), and the rankings equal those of an index that folds at every write (the
writer before the count rows: one UPDATE per term and write)."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from zaxy_agents.retrieval import verbatim_df, verbatim_write
from zaxy_agents.retrieval.derived import StandaloneIndexes, open_standalone
from zaxy_agents.retrieval.verbatim import VerbatimIndex

from .test_verbatim_equivalence import _Batch, corpus, queries, ranking

SIZES = [9, 2, 11, 7, 1, 1, 30, 8, 6, 40, 3, 12] * 3  # bulk writes (>= 6 docs) and tail writes merged by them


def _build(folder: Path, fold_rows: int, monkeypatch: pytest.MonkeyPatch, opened: list[StandaloneIndexes]) -> list:
    """Index the corpus with erasures between writes; every term's ``(df, cdf)`` as two readers see them, the
    count rows left, and the rankings of a fixed set of queries."""
    monkeypatch.setattr(verbatim_df, "FOLD_ROWS", fold_rows)
    rng = random.Random(11)
    docs = corpus(rng, 260)
    gone = {(d.session, d.seq) for d in rng.sample(docs[:150], 30)}
    index = VerbatimIndex()
    opened.append(listeners := open_standalone(folder, index))
    at, erased = 0, False
    for size in SIZES:
        listeners.on_batch(_Batch(docs[at : at + size]), None)
        at += size
        if at >= 150 and not erased:  # erasures between writes: the count rows are folded first
            for session in ("s1", "s2", "s3"):
                listeners.erase(session, sorted(seq for s, seq in gone if s == session))
            erased = True
    text_df: Counter[str] = Counter()
    caption_df: Counter[str] = Counter()
    for item in docs[:at]:
        if (item.session, item.seq) not in gone:
            text_df.update(set(index.an(item.text)))
            caption_df.update(set(index.an(item.caption or "")))
    other = VerbatimIndex()  # another connection: decodes the count rows itself
    opened.append(open_standalone(folder, other))
    db = sqlite3.connect(folder / "derived.sqlite")
    rows = db.execute("SELECT count(*) FROM verbatim_term_open").fetchone()[0]
    terms = [r[0] for r in db.execute("SELECT term FROM verbatim_term")]
    db.close()
    assert len(terms) > 20
    for reader in (index, other):
        found = reader.term_ids(reader.reader(), terms)
        assert {t: found[t][1:] for t in terms} == {t: (text_df[t], caption_df[t]) for t in terms}
    rankings = []
    for query, sessions, as_of in queries(random.Random(5), 40):
        rankings.append(ranking(index, query, sessions, as_of))
        assert ranking(other, query, sessions, as_of) == rankings[-1], query
    assert sum(map(bool, rankings)) >= 30
    return [rows, rankings]


def test_counts_and_rankings_do_not_depend_on_the_fold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verbatim_write, "DIRECT_MIN", 6)
    monkeypatch.setattr(verbatim_write, "TAIL_LIMIT", 20)
    opened: list[StandaloneIndexes] = []
    try:
        every_write = _build(tmp_path / "every", 1, monkeypatch, opened)
        assert every_write[0] == 0  # folded at each write: no count row left
        for fold_rows in (3, 1000):
            rows, rankings = _build(tmp_path / f"fold{fold_rows}", fold_rows, monkeypatch, opened)
            assert 0 < rows < max(fold_rows, 2) and rankings == every_write[1]
    finally:
        for item in opened:
            item.store.close()
