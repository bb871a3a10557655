"""Exact-source ranking for the verbatim surface (``memory_verbatim``, ``fabric.verbatim``).

The verbatim lane scores events with context (neighbours' words, the segment, dates) so a conversational answer
can be found next to the question that names it; fused with salience and recency, an event sharing no query word
can then outrank the one that holds the exact term ("port" -> a decision about gRPC above the document chunk
saying "port 8080"). Asked directly, verbatim is the exact-source lane: an event whose own text contains the query
as a phrase outranks one containing all its terms, which outranks one containing some, which outranks every event
that contains none (found only through its context). The order within a class is the lane's own.

This works on the ranked hits only (their text and order), so it holds whatever index produced them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .text import Analyzer

if TYPE_CHECKING:
    from .engine import RetrievalHit

MATCH_CLASSES = ("phrase", "all_terms", "some_terms", "context")
_ANALYZER = Analyzer()
_SPACE = re.compile(r"\s+")


def match_class(query: str, text: str, analyzer: Analyzer = _ANALYZER) -> str:
    """How the event's own text matches the query (one of :data:`MATCH_CLASSES`)."""
    phrase = _SPACE.sub(" ", query.strip().lower())
    if phrase and re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", _SPACE.sub(" ", text.lower())):
        return "phrase"
    wanted = set(analyzer(query))
    if not wanted:
        return "context"
    found = wanted & set(analyzer(text))
    if found == wanted:
        return "all_terms"
    return "some_terms" if found else "context"


def exact_first(query: str, hits: Sequence[RetrievalHit], analyzer: Analyzer = _ANALYZER) -> list[RetrievalHit]:
    """``hits`` re-ranked by match class (stable within a class); each hit's ``match`` says its class."""
    order = {name: index for index, name in enumerate(MATCH_CLASSES)}
    for hit in hits:
        hit.match = match_class(query, hit.text, analyzer)
    return sorted(hits, key=lambda hit: order[hit.match or "context"])
