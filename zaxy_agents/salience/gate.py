"""The write-time encoding gate (seed 004, prediction-error gated encoding): is a new memory novel, reinforcing
or redundant against what memory already returns for it?

Never dropping: the tag rides in the appended event's payload (``encoding_gate``) and every event is still
appended and hash-chained. An exact copy's ``redundant`` tag (the fabric also checks that the payload is the
same, cues aside) also names the memory it repeats
(``reinforces``: ``{entity_name, entity_type}``); the projection folds such an append into weak reinforcement
of that memory instead of a second ranked entry (:mod:`zaxy_agents.projection.fold`), reversible by replay.
``novel`` and ``reinforcing`` tags change nothing in ranking. Off by default; a caller asks for it per append.

Classification against the nearest existing memories (the top hits a plain query for the new text returns):
Jaccard similarity of their analysed terms (stemmed, stop words removed) with the new text's.

* ``redundant``: similarity >= 0.85 with an event of the same type (a duplicate); with similarity 1.0 (the
  same analysed terms: an exact restatement) of a *current* memory of the same identity (or a current plain
  event) the tag names that memory in ``reinforces`` and the projection folds it; otherwise (one value of a
  long sentence changed, a revert to a superseded value, another fact key with the same words) it stays a tag;
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
FOLD = 1.0  # only an exact restatement (the same analysed terms) is folded: a changed number is never lost
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
    entity_type: str | None = None


def classify(
    event_type: str,
    text: str,
    candidates: Iterable[Candidate],
    name: str | None = None,
    entity_type: str | None = None,
) -> dict[str, Any]:
    """``{tag, similarity, against?, reinforces?, interferes_with?}``: the gate's verdict on ``text`` (asserting
    the entity ``name`` of ``entity_type``, if any) against the nearest ``candidates``."""
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
    reinforces = (
        {"entity_name": nearest.name, "entity_type": nearest.entity_type}
        if tag == "redundant" and similarity >= FOLD and nearest is not None and _folds_into(nearest, name, entity_type)
        else None
    )
    return {
        "tag": tag,
        "similarity": round(similarity, 4),
        **({"against": nearest.citation} if nearest is not None and tag != "novel" else {}),
        **({"reinforces": reinforces} if reinforces is not None else {}),
        **({"interferes_with": nearest.citation} if interferes and nearest is not None else {}),
    }


def _folds_into(nearest: Candidate, name: str | None, entity_type: str | None) -> bool:
    """An exact restatement folds only into a *current* memory of the same identity (the same fact key, the same
    decision) or, for plain events (notes, turns: the generic ``event`` entity), into a current copy. Never into a
    superseded one (re-asserting an old value is a revert, news) nor into another identity that happens to hold
    the same words (``db.port`` and ``cache.port`` both "5432")."""
    if nearest.status != "current" or not nearest.name or not nearest.entity_type:
        return False
    if entity_type == "event" == nearest.entity_type:
        return True
    return name is not None and name.lower() == nearest.name.lower() and entity_type == nearest.entity_type
