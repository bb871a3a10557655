"""Analysing new words leaves no object the garbage collector tracks.

Why: PyStemmer memoises every word it stems as a ``[stem, counter]`` list, so each new word a checkout analysed left
one tracked list alive (~100 a whole-memory question at 1M), and the objects surviving each question are what bring a
full collection (docs/benchmarks.md, "Whole-memory checkouts after an append: the garbage collector's share"). The
analyser's own memo (``str -> str``, untracked) answers repeated words, so PyStemmer's is off; terms are unchanged."""

from __future__ import annotations

import gc

import snowballstemmer

from zaxy_agents.retrieval.text import Analyzer


def _tracked() -> int:
    gc.collect()
    return len(gc.get_objects())


def test_new_words_leave_no_tracked_objects() -> None:
    analyzer = Analyzer()
    words = [f"zyqu{number}walkings" for number in range(600)]
    analyzer("warm up the analyser once")
    before = _tracked()
    terms = analyzer(" ".join(words))
    after = _tracked()
    assert len(terms) == len(words)
    assert after - before < 60, after - before  # was one list per word (+600)


def test_terms_are_the_stemmers_without_its_memo() -> None:
    reference = snowballstemmer.stemmer("english")  # a stemmer with its default memo
    analyzer = Analyzer(stopwords=False, irregular=False)
    words = ["running", "runs", "generously", "connections", "memories", "relational", "walkings"]
    assert analyzer(" ".join(words)) == [reference.stemWord(word) for word in words]
