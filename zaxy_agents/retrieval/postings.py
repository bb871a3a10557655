"""Incremental BM25 building blocks shared by the lexical lanes (verbatim events, projected entities).

Both lanes index one event at a time and score every document at once with numpy, so they need postings that
grow in place (``array('i')`` buffers viewed by numpy without a copy) and per-document features kept in arrays
that grow by doubling. Nothing here is ever rebuilt when a document is added.
"""

from __future__ import annotations

from array import array
from collections import Counter
from typing import Any

import numpy as np


class GrowingArray:
    """A numpy array that grows by doubling, so per-event features are updated in place."""

    def __init__(self, dtype: Any, fill: float = 0, width: int = 0) -> None:
        self.fill, self.width = fill, width
        shape = (16, width) if width else (16,)
        self.a = np.full(shape, fill, dtype=dtype)
        self.n = 0

    def ensure(self, n: int) -> None:
        if n > self.a.shape[0]:
            new = np.full((max(n, 2 * self.a.shape[0]), *self.a.shape[1:]), self.fill, dtype=self.a.dtype)
            new[: self.a.shape[0]] = self.a
            self.a = new
        self.n = max(self.n, n)

    def append(self, v: Any) -> None:
        self.ensure(self.n + 1)
        self.a[self.n - 1] = v

    def view(self) -> np.ndarray:
        return self.a[: self.n]


class Postings:
    """Incremental inverted index of one text field: term -> (doc ids, term frequencies)."""

    def __init__(self) -> None:
        # array('i') postings: appended in place, viewed by numpy without a copy at query time
        self.post: dict[str, tuple[array, array]] = {}
        self.lens = GrowingArray(np.float64)
        self.total = 0.0
        self.nonempty = 0

    def add(self, doc: int, terms: list[str]) -> None:
        self.lens.append(len(terms))
        self.total += len(terms)
        self.nonempty += bool(terms)
        for t, f in Counter(terms).items():
            p = self.post.get(t)
            if p is None:
                self.post[t] = p = (array("i"), array("i"))
            p[0].append(doc)
            p[1].append(f)

    def df(self, t: str) -> int:
        p = self.post.get(t)
        return len(p[0]) if p else 0

    def tf_matrix(self, terms: list[str], n: int) -> np.ndarray:
        out = np.zeros((len(terms), n))
        for r, t in enumerate(terms):
            p = self.post.get(t)
            if p:
                out[r, np.frombuffer(p[0], dtype=np.int32)] = np.frombuffer(p[1], dtype=np.int32)
        return out


def bm25(tf: np.ndarray, lens: np.ndarray, avg: float, weights: np.ndarray, k1: float, b: float) -> np.ndarray:
    """Sum over query terms of weight * tf*(k1+1) / (tf + k1*(1-b+b*len/avg)); weights include IDF."""
    if tf.size == 0:
        return np.zeros(tf.shape[1] if tf.ndim == 2 else 0)
    norm = k1 * (1.0 - b + b * lens / max(avg, 1e-9))
    return (weights[:, None] * tf * (k1 + 1.0) / (tf + norm[None, :])).sum(0)
