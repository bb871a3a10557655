"""What score bounds (MaxScore / block-max) could skip in whole-memory verbatim queries, measured on a real index.

Past ``SEED_LIMIT`` matched events the verbatim search keeps the ``L`` best by their own score (text + caption +
thread segment, :meth:`Scorer.own_scores`). A bound-based top-L (MaxScore, WAND, block-max) skips events whose
upper bound is below the L-th score ``theta``. This script computes, per whole-memory LoCoMo question, with the
tightest threshold such a scheme could ever reach (the exact ``theta``):

* each query term's bound: BM25 saturates at ``weight x (k1 + 1)`` for the text and ``session_weight x`` that for
  the segment (caption postings are rare, so they are read whole and need no bound); the *non-essential* terms
  are the commonest ones whose bounds sum below ``theta`` (an event holding only those cannot be a seed on its
  own words);
* ``scoring_skippable``: the share of matched events holding only non-essential words (no need to score them);
* ``cpu_share``: where a query's CPU time goes (reading + decoding postings, scoring the seeds' neighbourhood),
  so the shares above can be weighed;
* ``reads_skippable``: the share of posting runs that need not be read. An event's segment score sums its whole
  thread's term counts, so a non-essential term's postings must still be read in every thread that holds an
  essential-term event; postings are stored per (term, session), so at best the runs of sessions holding no
  essential-term event are skipped.

Usage: python benchmarks/verbatim_bounds_bench.py --folder DIR [--events 1000000] [--queries 40] [--json]
(``DIR`` holds an index built by verbatim_ab_bench.py --folder DIR.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.locomo_corpus import Corpus
from zaxy_agents.retrieval import verbatim_search as search_module
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.verbatim import VerbatimIndex
from zaxy_agents.retrieval.verbatim_scoring import Scorer


def _bounds(scorer: Scorer, own: np.ndarray, limit: int) -> dict[str, float] | None:
    matched, cfg = scorer.matched, scorer.cfg
    if own.size <= limit:
        return None  # not pruned: every matched event is a seed, no bound can skip one
    theta = float(np.partition(own, own.size - limit)[own.size - limit])
    bound = scorer.terms.weight * (cfg.k1 + 1.0) * (1.0 + cfg.session_weight)
    present = matched.tf > 0
    order = np.argsort(-present.sum(1), kind="stable")  # commonest first
    non_essential = order[: int((np.cumsum(bound[order]) < theta).sum())]
    essential = np.setdiff1d(np.arange(bound.size), non_essential)
    in_essential = present[essential].any(0) | (matched.ctf > 0).any(0)
    sessions = scorer.query.gather(matched.docs, "session").astype(np.int64)
    essential_sessions = np.unique(sessions[in_essential])
    runs_total = runs_skippable = 0
    for term in range(bound.size):
        term_sessions = np.unique(sessions[present[term]])
        runs_total += term_sessions.size
        if term in non_essential:
            runs_skippable += int((~np.isin(term_sessions, essential_sessions)).sum())
    return {
        "theta": theta,
        "matched": int(own.size),
        "non_essential_terms": int(non_essential.size),
        "terms": int(bound.size),
        "scoring_skippable": float((~in_essential).mean()),
        "reads_skippable": runs_skippable / max(runs_total, 1),
        "runs": runs_total,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    index = VerbatimIndex()
    indexes = open_standalone(args.folder, index)
    questions = Corpus.load().questions(args.events, args.queries)
    captured: list[tuple[Scorer, np.ndarray]] = []
    original = Scorer.own_scores

    def capture(self: Scorer) -> np.ndarray:
        own = original(self)
        captured.append((self, own))
        return own

    Scorer.own_scores = capture  # type: ignore[method-assign]
    phases = {"postings": 0.0, "rank": 0.0}
    originals = {"postings": search_module._Query._postings, "rank": search_module._Query._rank}

    def timed(name: str):  # CPU time of one step of the query
        def run(*args, **kwargs):
            started = time.process_time()
            try:
                return originals[name](*args, **kwargs)
            finally:
                phases[name] += time.process_time() - started

        return run

    search_module._Query._postings = timed("postings")  # type: ignore[method-assign]
    search_module._Query._rank = timed("rank")  # type: ignore[method-assign]
    report: dict = {"events": args.events, "queries": args.queries}
    try:
        for question, _session in questions[:5]:
            index.search(question, 10)  # warm the feature blocks and thread rows
        for k in (10, 50):
            limit = min(search_module.SEED_LIMIT, max(search_module.SEEDS_PER_RESULT * k, 500))
            rows = []
            spent = 0.0
            phases.update(postings=0.0, rank=0.0)
            for question, _session in questions:
                captured.clear()
                started = time.process_time()
                index.search(question, k)
                spent += time.process_time() - started
                if captured:
                    found = _bounds(*captured[0], limit)
                    if found is not None:
                        rows.append(found)
            report[f"whole_k{k}"] = {
                "pruned_queries": len(rows),
                "with_a_non_essential_term": sum(r["non_essential_terms"] > 0 for r in rows),
                "scoring_skippable_share": round(float(np.mean([r["scoring_skippable"] for r in rows] or [0])), 3),
                "reads_skippable_share": round(
                    sum(r["reads_skippable"] * r["runs"] for r in rows) / max(sum(r["runs"] for r in rows), 1), 3
                ),
                "median_matched": int(np.median([r["matched"] for r in rows] or [0])),
                "cpu_share": {name: round(value / max(spent, 1e-9), 3) for name, value in phases.items()},
            }
    finally:
        Scorer.own_scores = original  # type: ignore[method-assign]
        search_module._Query._postings = originals["postings"]  # type: ignore[method-assign]
        search_module._Query._rank = originals["rank"]  # type: ignore[method-assign]
        indexes.close()
    print(json.dumps(report, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
