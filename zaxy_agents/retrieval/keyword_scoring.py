"""The keyword lane's BM25 top k over the postings of a query's terms, without scoring every matching version.

A whole-memory question pairs a rare word with common ones ("what is the version of service sikuji?": at 1M events
"service" is in 70,000 versions, "version" in 17,000, "sikuji" in 81). Scoring every version holding any of them
was ~60 % of the lane. A version holding only the most common term (the *dropped* term) scores at most that term's
bound: IDF x tf x (k1 + 1) / (tf + k1 x (1 - b)) at its largest count and a length of 0. So the versions holding
any other term are scored first, exactly; when at least k of them score above that bound, no version holding only
the dropped term can enter the top k (nor tie its last score), and the top k is theirs. Otherwise every matching
version is scored, as before. Each version's score is computed from the same rows in the same order either way, so
it is identical to the last bit (tests/retrieval/test_keyword_scoring.py compares both on skewed indexes).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import sorted_sets as sets
from .postings import TermPostings, bm25

K1, B = 1.2, 0.75
SKIP_MIN = 4096  # postings of the dropped term below which scoring everything costs less than trying
MARGIN = 1e-9  # relative: the bound is compared with scores computed in floating point


def top_k(
    names: list[str],
    held: dict[str, TermPostings],
    idf: np.ndarray,
    avg: float,
    lengths: Callable[[np.ndarray], np.ndarray],
    k: int,
    prune: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """``(docs, scores)`` of the ``k`` best docs by BM25 (score descending, then doc id), docs with a score above
    0 only. ``held``: each term's postings (ascending, one per doc); ``idf`` in ``names`` order; ``lengths(docs)``
    the docs' field lengths. ``prune=False`` scores every matching doc (the reference)."""
    sizes = {term: held[term].docs.size for term in names if term in held}
    dropped = max(sizes, key=sizes.__getitem__) if prune and len(sizes) > 1 else None
    if (
        dropped is not None
        and sizes[dropped] >= SKIP_MIN
        and 2 * (sum(sizes.values()) - sizes[dropped]) <= sizes[dropped]
    ):
        others = sets.unique(np.concatenate([held[term].docs for term in sizes if term != dropped]))
        if others.size >= k:
            scores = _scores(others, names, held, idf, avg, lengths, union=False)
            kth = float(np.partition(scores, others.size - k)[others.size - k])
            tfs = held[dropped].tfs
            top_tf = float(tfs.max()) if tfs.size else 0.0
            bound = float(idf[names.index(dropped)]) * top_tf * (K1 + 1.0) / (top_tf + K1 * (1.0 - B))
            if bound * (1.0 + MARGIN) < kth:
                return _best(others, scores, k)
    matched = sets.unique(np.concatenate([entry.docs for entry in held.values()]))
    return _best(matched, _scores(matched, names, held, idf, avg, lengths, union=True), k)


def _scores(
    docs: np.ndarray,
    names: list[str],
    held: dict[str, TermPostings],
    idf: np.ndarray,
    avg: float,
    lengths: Callable[[np.ndarray], np.ndarray],
    union: bool,
) -> np.ndarray:
    """BM25 of ``docs`` (sorted): a terms x docs count matrix in ``names`` order. ``union``: ``docs`` hold every
    posting of every term (each posting's column found by one search); otherwise each term's counts are looked up
    for the docs that hold it."""
    tf = np.zeros((len(names), docs.size))
    for row, term in enumerate(names):
        entry = held.get(term)
        if entry is None:
            continue
        if union:
            tf[row, np.searchsorted(docs, entry.docs)] = entry.tfs
            continue
        at = np.searchsorted(entry.docs, docs)
        inside = at < entry.docs.size
        found = np.flatnonzero(inside)[entry.docs[at[inside]] == docs[inside]]
        tf[row, found] = entry.tfs[at[found]]
    return bm25(tf, lengths(docs).astype(np.float64), avg, idf, K1, B)


def _best(docs: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    positive = np.flatnonzero(scores > 0)
    top = positive[np.lexsort((docs[positive], -scores[positive]))][:k]
    return docs[top], scores[top]
