"""Which entity versions may hold a word: the entity keyword index (the checkout's keyword lane) asked as a filter.

Why: the embedded graph keeps no entity text since graph migration 0006, so keyword search over entities
(``MemoryFabric.search_entities``) read the text of every version valid at the time asked from the catalog
(0.4-0.7 s at 10k events, 6.8 s at 100k). The keyword index already knows which versions' name or summary hold
which terms; the graph store reads only those versions' text (plus the types this index leaves to the verbatim
lane, which it still scans). The store then matches words exactly as before, so the answer is the same.

What makes the index a sound filter: a version whose name or summary holds a query word as a whole ``\\w+``
word (case-folded) holds that word's ``[a-z0-9]`` runs as analyser tokens, hence their index terms. A query
word with no such run outside the stop words (``the``, ``日本``) cannot be looked up:
:meth:`IndexedEntityWords.versions_with` answers ``None`` and the store scans every valid version, as before.
Known blind spot: a word that occurs in an entity's text only glued to another by an apostrophe (``O'Neil``,
``don't``: the analyser reads ``oneil``, ``dont``) or spelled with a character whose case folding yields ASCII
letters (``ß`` -> ``ss``) is found by the scan but not through the index (tests/projection/test_entity_search.py
shows it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .entity_index import UNREVIEWED, VERBATIM_TERRITORY, EntityKeywordIndex
from .text import STOPWORDS

_RUNS = re.compile(r"[a-z0-9]+")


class IndexedEntityWords:
    """The ``EntityWords`` source a graph store filters its keyword search with (``attach_entity_words``)."""

    unindexed_types = VERBATIM_TERRITORY | UNREVIEWED  # never in the index: the store scans these types

    def __init__(self, index: EntityKeywordIndex) -> None:
        self.index = index

    @staticmethod
    def runs(word: str) -> list[str]:
        """The analyser tokens (before stemming) any text holding ``word`` (a case-folded ``\\w+`` word) has."""
        return [run for run in _RUNS.findall(word) if run not in STOPWORDS]

    def versions_with(self, words: Sequence[str], sessions: Sequence[str] | None) -> set[str] | None:
        """Ids of the indexed versions (of ``sessions``, any validity) whose name or summary may hold one of
        ``words``: every one that does, and maybe others. ``None`` when a word cannot be looked up."""
        runs: list[str] = []
        for word in words:
            found = self.runs(word)
            if not found:
                return None
            runs += found
        # the index analyses the runs as it analysed the texts (same tokens, same terms); every version holding
        # one of the terms has a positive BM25 score, so asking for as many as the index holds returns them all
        hits = self.index.search(" ".join(dict.fromkeys(runs)), max(len(self.index), 1), sessions)
        return {version_id for version_id, _score in hits}
