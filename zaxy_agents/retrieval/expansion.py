"""Query expansion: candidate generation for questions whose evidence shares no word with them.

"What instruments does Caroline play?" has to find "I'm learning the guitar"; a re-rank cannot help when the
lexical lanes never proposed that turn. When a re-rank embedder (WordLlama) is configured, each content word of
the query is expanded with its nearest neighbours among the words that actually occur in the indexed events
(cosine of the embedder's word vectors): at most ``neighbours`` (2) index terms per query word, each at least
``min_similarity`` (0.35) close and occurring in the sessions searched, added to the verbatim lane's query with
weight ``expansion_weight * cosine`` (a profile setting, 0.4; query words weigh 1), so BM25's IDF still applies
and a question's own words still dominate. Proper nouns and words naming a speaker are not expanded. The
vocabulary is the surface words of the indexed events (surface word -> index term, kept by the verbatim index in
first-seen order); their vectors are computed lazily at query time, only for words not seen before. Settings
chosen on the LoCoMo tuning half and checked on the held-out half (docs/retrieval.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .embeddings import EmbeddingProvider
from .text import _PROPN_RE, STOPWORDS
from .verbatim import VerbatimIndex

SCANNED = 64  # nearest vocabulary words examined per query word (out-of-scope ones are skipped)


@dataclass(frozen=True)
class ExpansionConfig:
    neighbours: int = 2  # index terms added per query word
    min_similarity: float = 0.35  # cosine below which a neighbour is not added


def _expandable(word: str) -> bool:
    return len(word) > 2 and word not in STOPWORDS and not word.isdigit()


class QueryExpander:
    """Nearest-neighbour expansion of query words over the vocabulary of one verbatim index."""

    def __init__(
        self, embedder: EmbeddingProvider, index: VerbatimIndex, config: ExpansionConfig | None = None
    ) -> None:
        self.embedder = embedder
        self.index = index
        self.config = config or ExpansionConfig()
        self._epoch: tuple[float, float] | None = None  # the index's (erasures, resets) the vectors were built on
        self._seen = 0  # last vocabulary id already looked at
        self._terms: list[str] = []  # index term of each embedded word
        self._blocks: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None

    def _refresh(self) -> None:
        """Embed the words the index learnt since the last query (all of them after an erasure or a reset)."""
        epoch = self.index.vocabulary_epoch()
        if epoch != self._epoch:
            self._epoch, self._seen, self._terms, self._blocks, self._matrix = epoch, 0, [], [], None
        rows = self.index.vocabulary_since(self._seen)
        if not rows:
            return
        self._seen = rows[-1][0]
        fresh = [(word, term) for _, word, term in rows if _expandable(word)]
        if fresh:
            self._blocks.append(np.asarray(self.embedder.embed_documents([w for w, _ in fresh]), dtype=np.float32))
            self._terms += [t for _, t in fresh]
            self._matrix = None

    def expand(self, query: str, weight: float, sessions: list[str] | None = None) -> dict[str, float]:
        """Index terms to add to ``query`` -> their query weight (``weight * cosine``; query words weigh 1),
        restricted to terms occurring in ``sessions``; empty when nothing is close enough."""
        config = self.config
        analyser = self.index.an
        words = analyser.words(query)
        proper = {match.group(1).lower() for match in _PROPN_RE.finditer(query)}
        candidates = [word for word in dict.fromkeys(words) if _expandable(word) and word not in proper]
        named = self.index.speaker_terms(self.index.reader(), [analyser.term(word) for word in candidates])
        seeds = [word for word in candidates if analyser.term(word) not in named]
        if not seeds or config.neighbours <= 0 or weight <= 0:
            return {}
        self._refresh()
        if not self._terms:
            return {}
        if self._matrix is None:
            self._matrix = np.vstack(self._blocks)
            self._blocks = [self._matrix]
        own = {analyser.term(word) for word in words}
        similarity = np.asarray(self.embedder.embed_documents(seeds), dtype=np.float32) @ self._matrix.T
        scanned = min(SCANNED, similarity.shape[1])
        added: dict[str, float] = {}
        for row in similarity:
            nearest = np.argpartition(-row, scanned - 1)[:scanned]
            taken: set[str] = set()
            for i in nearest[np.argsort(-row[nearest], kind="stable")]:
                cosine = float(row[i])
                if cosine < config.min_similarity or len(taken) >= config.neighbours:
                    break
                term = self._terms[i]
                if term in own or term in taken or not self.index.occurs(term, sessions):
                    continue
                taken.add(term)
                added[term] = max(added.get(term, 0.0), weight * cosine)
        return added
