"""The keyword lane's top k skips the versions holding only the most common query term when at least k others score
above that term's bound (keyword_scoring.py): its answers must equal scoring every match, on indexes where the bound
holds and where it does not, for whole-memory and scoped questions, and with the tail's postings in play."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from tests.retrieval.test_ingest_fast_paths import _EntityBatch
from zaxy_agents.retrieval import keyword_scoring
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.entity_index import EntityKeywordIndex
from zaxy_agents.retrieval.postings import TermPostings


def _rows(rng: random.Random, start: int, count: int) -> list[dict]:
    """Versions whose names pair a very common word with rarer ones ("version of service X")."""
    rows = []
    for i in range(start, start + count):
        words = ["service"] * rng.choice((1, 1, 2, 5)) + rng.choices(["version", "port", "owner"], k=rng.randint(0, 1))
        words += [f"name{rng.randrange(400)}"] * rng.randint(0, 1) + ["filler"] * rng.randint(0, 30)
        rows.append({"id": f"v{i}", "entity_type": "fact", "session_id": f"s{i % 4}", "source_event_seq": i,
                     "name": " ".join(words[:3]), "summary": " ".join(words[3:])})  # fmt: skip
    return rows


def test_the_pruned_top_k_equals_scoring_every_match(tmp_path: Path) -> None:
    rng = random.Random(7)
    index = EntityKeywordIndex()
    derived = open_standalone(tmp_path, index)
    try:
        derived.on_batch(_EntityBatch(_rows(rng, 0, 12_000)))  # main tables
        # "alpha" often and many times in short names, "beta" rarely and in long summaries: the others' k-th score
        # stays under alpha's bound, so every match is scored
        extra = [
            {"id": f"x{i}", "entity_type": "fact", "session_id": f"s{i % 4}", "source_event_seq": 20_000 + i,
             "name": "alpha " * (1 + i % 5) if i % 6 else "note", "summary": "" if i % 6 else "beta " + "lorem " * 40}
            for i in range(6_000)
        ]  # fmt: skip
        derived.on_batch(_EntityBatch(extra))
        derived.on_batch(_EntityBatch(_rows(rng, 12_000, 30)))  # the tail
        queries = ["version of service name7", "service", "service port", "owner service name3 name9", "name5 service"]
        queries += ["alpha beta", "beta alpha lorem"]
        paths: list[bool] = []  # per scoring: of the others only (True) or of every match
        calls: list[list[bool]] = []  # per top_k: its scorings ([True]: the common term's only-holders skipped)
        scores, top_k = keyword_scoring._scores, keyword_scoring.top_k

        def recorded(*args: object, **kwargs: object) -> object:
            start = len(paths)
            found = top_k(*args, **kwargs)  # type: ignore[arg-type]
            calls.append(paths[start:])
            return found

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(keyword_scoring, "_scores", lambda *a, **k: paths.append(not k["union"]) or scores(*a, **k))
            patch.setattr(keyword_scoring, "top_k", recorded)
            for query in queries:
                for scope in (None, ["s1"], ["s0", "s2"]):
                    for k in (1, 10, 150, 2_000):
                        index.prune = True
                        fast = index.search(query, k, scope)
                        index.prune = False
                        assert fast == index.search(query, k, scope), (query, scope, k)
        assert [True] in calls  # skipped the common term's only-holders
        assert [True, False] in calls  # tried, and scored every match: the bound was not met
    finally:
        derived.close()


def test_the_bound_decides_which_path_runs() -> None:
    """Direct: a common term whose bound stays under the k-th score of the others is skipped (its only-holders are
    never scored); one whose bound reaches it is not. Both give the full scoring's answer."""
    rng = np.random.default_rng(3)
    common = np.arange(0, 40_000, 2, dtype=np.int64)  # 20,000 docs
    rare = np.sort(rng.choice(40_000, 300, replace=False)).astype(np.int64)
    held = {
        "common": TermPostings(common, np.ones(common.size)),
        "rare": TermPostings(rare, rng.integers(1, 4, rare.size).astype(np.float64)),
    }
    lengths_of = rng.integers(1, 60, 40_000).astype(np.float32)
    scored: list[int] = []

    def lengths(docs: np.ndarray) -> np.ndarray:
        scored.append(docs.size)
        return lengths_of[docs]

    for idf, skips in ((np.array([0.3, 6.0]), True), (np.array([6.0, 0.5]), False)):
        scored.clear()
        fast = keyword_scoring.top_k(["common", "rare"], held, idf, 30.0, lengths, 50)
        assert (scored[-1] == rare.size) is skips and (len(scored) == 1) is skips
        full = keyword_scoring.top_k(["common", "rare"], held, idf, 30.0, lengths, 50, prune=False)
        assert np.array_equal(fast[0], full[0]) and np.array_equal(fast[1], full[1])
