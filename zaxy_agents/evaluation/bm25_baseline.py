"""The plain BM25 baseline every retrieval benchmark is measured against in the same run.

Standard Okapi BM25 (k1=1.2, b=0.75), lowercase ``\\w+`` tokens, no stemming or stop words, text only;
IDF is the non-negative Lucene form ``ln(1 + (N - df + 0.5) / (df + 0.5))``.
"""

from __future__ import annotations

import math
import re
from collections import Counter

_TOKEN = re.compile(r"\w+")


class PlainBM25:
    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.ids: list[str] = []
        self.tfs: list[Counter] = []
        self.df: Counter = Counter()
        self.lengths: list[int] = []

    def add(self, doc_id: str, text: str) -> None:
        tokens = _TOKEN.findall(text.lower())
        counts = Counter(tokens)
        self.ids.append(doc_id)
        self.tfs.append(counts)
        self.lengths.append(len(tokens))
        self.df.update(counts.keys())

    def search(self, query: str, k: int = 10) -> list[str]:
        n = len(self.ids)
        average = sum(self.lengths) / max(n, 1)
        terms = set(_TOKEN.findall(query.lower()))
        idf = {t: math.log(1 + (n - self.df[t] + 0.5) / (self.df[t] + 0.5)) for t in terms if self.df[t]}
        scored = []
        for index, counts in enumerate(self.tfs):
            score = 0.0
            for term, weight in idf.items():
                f = counts.get(term)
                if f:
                    norm = self.k1 * (1 - self.b + self.b * self.lengths[index] / average)
                    score += weight * f * (self.k1 + 1) / (f + norm)
            if score > 0:
                scored.append((score, index))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [self.ids[index] for _, index in scored[:k]]
