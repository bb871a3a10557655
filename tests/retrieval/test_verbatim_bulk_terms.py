"""A bulk batch gives its new terms their ids itself (``max(id) + 1`` on, in sorted order) and inserts them with
their document frequencies; the tables it leaves (with the known terms' count rows folded, :mod:`verbatim_df`)
equal those of the previous writer (insert at 0, then update),
also after erasures removed the terms with the largest ids, and with tail batches and merges in between. A
batch's frequencies equal a plain count."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from zaxy_agents.projection.model import SearchDoc
from zaxy_agents.retrieval import verbatim_df, verbatim_write
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.verbatim import VerbatimIndex
from zaxy_agents.retrieval.verbatim_tail import Prepared

from .test_verbatim_equivalence import _Batch, corpus


def _write(folder: Path, docs: list[SearchDoc], eager: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, list]:
    """Index ``docs`` in bulk batches and tail batches, with erasures between; the verbatim tables after it.
    ``eager``: every new term inserted at once with ``df = 0`` and updated later (the writer before)."""
    with monkeypatch.context() as patch:
        if eager:
            plain = verbatim_write.Writer._term_ids
            patch.setattr(verbatim_write.Writer, "_term_ids", lambda self, terms, new_terms=None: plain(self, terms))
        patch.setattr(verbatim_write, "DIRECT_MIN", 20)
        patch.setattr(verbatim_write, "TAIL_LIMIT", 30)
        index = VerbatimIndex()
        listeners = open_standalone(folder, index)
        try:
            rng = random.Random(5)
            at = 0
            for size in (40, 3, 5, 60, 1, 25, 2, 2, 80, 30):  # bulk, tail (merged by the next bulk), bulk, ...
                listeners.on_batch(_Batch(docs[at : at + size]), None)
                at += size
                if size == 60:  # the newest docs' rare words (the largest term ids) go: max(id) falls
                    listeners.erase("s1", sorted(d.seq for d in docs[at - 20 : at] if d.session == "s1"))
                if size == 2:
                    listeners.erase("s2", sorted(rng.sample([d.seq for d in docs[:at] if d.session == "s2"], 5)))
        finally:
            listeners.store.close()
    db = sqlite3.connect(folder / "derived.sqlite")
    try:
        with db:  # the count rows not folded yet (verbatim_df) into the term table: the counts readers see
            verbatim_df.fold(db, "verbatim")
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'verb%'")]
        return {
            name: sorted(db.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
            for name in names
            if name != "verbatim_stats"  # holds a random creation token
        }
    finally:
        db.close()


def test_bulk_batches_write_the_previous_writers_terms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    docs = corpus(rng, 248)
    # a rare word in most docs: new terms in every batch, some of them erased
    docs = [replace(doc, text=doc.text + (f" rare{k:03d}" if k % 4 else "")) for k, doc in enumerate(docs)]
    new = _write(tmp_path / "new", docs, False, monkeypatch)
    old = _write(tmp_path / "old", docs, True, monkeypatch)
    assert new == old
    terms = new["verbatim_term"]
    assert len(terms) > 150 and all(df + cdf > 0 for _, _, df, cdf in terms)


@pytest.mark.parametrize("seed", range(6))
def test_frequencies_count_the_docs_of_each_term(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(0, 3000))
    field = rng.integers(0, 2, size)
    term = rng.integers(0, int(rng.choice([3, 500, 100_000])), size)
    for given in ((field, term), (field.tolist(), term.tolist())):  # bulk arrays, tail lists
        batch = Prepared(np.zeros(0), 0, [], post_field=given[0], post_term=given[1])
        counts = Counter(zip(field.tolist(), term.tolist(), strict=True))
        expected = [(counts[(0, t)], counts[(1, t)], t) for t in sorted(set(term.tolist()))]
        assert batch.frequencies() == expected
