"""The BM25 baselines every retrieval benchmark is measured against in the same run.

Standard Okapi BM25 (k1=1.2, b=0.75) over the text only; IDF is the non-negative Lucene form
``ln(1 + (N - df + 0.5) / (df + 0.5))``. Two analyzers, so a ratio is reported against a naive and a fair
baseline:

* :class:`PlainBM25`: lowercase ``\\w+`` tokens, no stemming or stop words.
* :class:`StemmedBM25`: the word analysis our own lexical lanes use (lowercase, possessives stripped), minus our
  stop words, Snowball-stemmed. Nothing else: no irregular forms, identifiers, speakers, captions or context.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

from zaxy_agents.retrieval.text import STOPWORDS, Analyzer

_TOKEN = re.compile(r"\w+")


def plain_tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def stemmed_tokens_analyzer() -> Callable[[str], list[str]]:
    """Stemming + stop words, built from the pieces of :class:`zaxy_agents.retrieval.text.Analyzer`."""
    analyzer = Analyzer(stem=True, stopwords=True, irregular=False)

    def analyze(text: str) -> list[str]:
        return [analyzer.term(word) for word in analyzer.words(text) if word not in STOPWORDS]

    return analyze


class BM25:
    """Okapi BM25 over whole documents with a pluggable analyzer (text -> terms)."""

    def __init__(self, analyze: Callable[[str], list[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.analyze = analyze
        self.k1, self.b = k1, b
        self.ids: list[str] = []
        self.tfs: list[Counter] = []
        self.df: Counter = Counter()
        self.lengths: list[int] = []

    def add(self, doc_id: str, text: str) -> None:
        tokens = self.analyze(text)
        counts = Counter(tokens)
        self.ids.append(doc_id)
        self.tfs.append(counts)
        self.lengths.append(len(tokens))
        self.df.update(counts.keys())

    def search(self, query: str, k: int = 10) -> list[str]:
        n = len(self.ids)
        average = sum(self.lengths) / max(n, 1)
        terms = set(self.analyze(query))
        idf = {t: math.log(1 + (n - self.df[t] + 0.5) / (self.df[t] + 0.5)) for t in terms if self.df[t]}
        scored = []
        for index, counts in enumerate(self.tfs):
            score = 0.0
            for term, weight in idf.items():
                f = counts.get(term)
                if f:
                    norm = self.k1 * (1 - self.b + self.b * self.lengths[index] / max(average, 1e-9))
                    score += weight * f * (self.k1 + 1) / (f + norm)
            if score > 0:
                scored.append((score, index))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [self.ids[index] for _, index in scored[:k]]


class PlainBM25(BM25):
    """BM25 on lowercase ``\\w+`` tokens: the naive baseline."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        super().__init__(plain_tokens, k1, b)


class StemmedBM25(BM25):
    """BM25 with Snowball stemming and English stop words: the fair lexical baseline."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        super().__init__(stemmed_tokens_analyzer(), k1, b)
