"""The write-time encoding gate (seed 004, prediction-error gated encoding): is a new memory novel, reinforcing
or redundant against what memory already returns for it?

Tagging only, never dropping: the tag rides in the appended event's payload (``encoding_gate``), every event is
still appended and hash-chained, and ranking ignores the tag, so replaying without the gate gives the same memory.
Off by default; a caller asks for it per append.

Classification against the nearest existing memories (the top hits a plain query for the new text returns):
Jaccard similarity of their analysed terms (stemmed, stop words removed) with the new text's.

* ``redundant``: similarity >= 0.85 with an event of the same type (a duplicate);
* ``reinforcing``: similarity >= 0.5 (it confirms or restates something memory holds);
* ``novel``: otherwise (it contradicts or extends what memory holds, or memory holds nothing like it).

Proactive interference: a new fact that restates a *current* fact of another identity with different content
(similarity >= 0.5 but not identical, e.g. "gateway port is 9090" beside "gateway port is 8080" under another
key) is tagged ``novel`` with ``interferes_with`` naming the old one; the fabric then proposes a belief update
citing both (``belief.update.proposed``, review-gated, never a change of current facts).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from zaxy_agents.retrieval.text import Analyzer

REDUNDANT = 0.85
REINFORCING = 0.5
TAGS = ("novel", "reinforcing", "redundant")
_ANALYZER = Analyzer()


@dataclass(frozen=True)
class Candidate:
    """An existing memory the new one is compared with."""

    citation: str
    event_type: str
    text: str
    status: str = "event"  # current | superseded | invalidated | event
    name: str | None = None  # the entity it asserted (its identity), when there is one


def classify(event_type: str, text: str, candidates: Iterable[Candidate], name: str | None = None) -> dict[str, Any]:
    """``{tag, similarity, against?, interferes_with?}``: the gate's verdict on ``text`` (asserting the entity
    ``name``, if any) against the nearest ``candidates``."""
    terms = set(_ANALYZER(text))
    best: tuple[float, Candidate | None] = (0.0, None)
    for candidate in candidates:
        other = set(_ANALYZER(candidate.text))
        union = terms | other
        similarity = len(terms & other) / len(union) if union else 0.0
        if similarity > best[0]:
            best = (similarity, candidate)
    similarity, nearest = best
    interferes = (
        nearest is not None
        and event_type == nearest.event_type == "fact.asserted"
        and nearest.status == "current"
        and REINFORCING <= similarity < 1.0
        and name is not None
        and nearest.name is not None
        and name.lower() != nearest.name.lower()
    )
    if interferes:
        tag = "novel"
    elif nearest is not None and similarity >= REDUNDANT and nearest.event_type == event_type:
        tag = "redundant"
    elif nearest is not None and similarity >= REINFORCING:
        tag = "reinforcing"
    else:
        tag = "novel"
    return {
        "tag": tag,
        "similarity": round(similarity, 4),
        **({"against": nearest.citation} if nearest is not None and tag != "novel" else {}),
        **({"interferes_with": nearest.citation} if interferes and nearest is not None else {}),
    }
