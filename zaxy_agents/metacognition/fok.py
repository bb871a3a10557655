"""Feeling of knowing (experimental): predict, before any retrieval, whether memory likely holds an answer.

People can often tell "I know this" before recalling it; an agent can use the same signal to decide whether a
checkout is worth its tokens or whether to ask the user straight away. The predictor only reads state that is
already in memory — the entity catalog's exact names and the verbatim index's vocabulary and document
frequencies — so it makes no embedding call, no graph query and no log read, and runs in microseconds.

Signals:

* ``entity_matches``: entities (in scope, current) whose whole name appears in the question.
* ``term_coverage``: the IDF-weighted share of the question's content terms that occur in the scope's events.
  Unknown terms weigh as much as the rarest known term, so a question about something never mentioned scores
  low even when its function-like words are common.
* ``rare_terms_known``: known terms that are rare in the scope (specific evidence rather than common words).
* ``cue_hits``: how many of the caller's context cues (mission, workspace, tool, phase: seed 003) name an entity
  or have a word that occurs in the scope's events.
* ``salience_mass``: the summed salience of the entities the question names.

The seed's signal names are reported too: ``query_term_count``, ``entity_name_hits`` (exact catalog matches,
where the seed used a bloom filter), ``cue_hits``, ``salience_mass``.

Rules (deliberately simple, reported with the prediction so callers can see why):

* ``likely``: an entity name matches, or coverage >= 0.7 with at least two known terms, one of them rare;
* ``possible``: coverage >= 0.35, at least one known term, or a cue hit;
* ``unlikely``: otherwise (including empty memory).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.salience import salience
from zaxy_agents.retrieval.graph_lanes import exact_matches

LIKELY_COVERAGE = 0.7
POSSIBLE_COVERAGE = 0.35
RARE_SHARE = 0.05  # a term in at most 5% of the scope's events (and at most 25 of them) is "rare"
RARE_MAX_DOCS = 25
MAX_NAMES_REPORTED = 5


class TermStatistics(Protocol):
    def term_statistics(self, query: str, *, sessions: list[str] | None = None) -> tuple[int, dict[str, int]]: ...


@dataclass
class FokPrediction:
    verdict: str
    score: float
    signals: dict[str, Any] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    took_us: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "score": self.score,
            "signals": self.signals,
            "reasons": self.reasons,
            "took_us": self.took_us,
        }


def predict(
    query: str,
    catalog: EntityCatalog,
    index: TermStatistics,
    sessions: list[str] | None,
    cues: dict[str, str] | None = None,
) -> FokPrediction:
    """Classify ``query`` as likely / possible / unlikely to be answerable from memory in ``sessions``."""
    started = time.perf_counter()
    scope = set(sessions) if sessions is not None else None
    matched = [current for key in exact_matches(query, catalog, scope) if (current := catalog.current(key))]
    names = [version.name for version in matched]
    mass = sum(salience(version, catalog)["salience"] for version in matched)
    documents, frequencies = index.term_statistics(query, sessions=sessions)
    coverage, known, rare = _coverage(documents, frequencies)
    cue_hits = sorted(
        name for name, value in (cues or {}).items() if value and _cue_known(value, catalog, index, scope, sessions)
    )
    reasons: list[str] = []
    if names:
        verdict = "likely"
        reasons.append(f"{len(names)} entity name(s) from the question are in memory")
    elif coverage >= LIKELY_COVERAGE and len(known) >= 2 and rare:
        verdict = "likely"
        reasons.append(f"{coverage:.0%} of the question's terms occur in memory, including rare ones")
    elif coverage >= POSSIBLE_COVERAGE or known:
        verdict = "possible"
        reasons.append(f"{len(known)} of {len(frequencies)} terms occur in memory (coverage {coverage:.0%})")
    elif cue_hits:
        verdict = "possible"
        reasons.append(f"no question term is in memory, but the {', '.join(cue_hits)} cue(s) are")
    else:
        verdict = "unlikely"
        reasons.append("memory is empty in this scope" if documents == 0 else "no question term occurs in memory")
    score = round(min(1.0, coverage + (0.3 if names else 0.0)), 4)
    return FokPrediction(
        verdict=verdict,
        score=score,
        signals={
            "query_term_count": len(frequencies),
            "entity_name_hits": len(names),
            "cue_hits": len(cue_hits),
            "salience_mass": round(mass, 4),
            "entity_matches": sorted(names)[:MAX_NAMES_REPORTED],
            "cues_matched": cue_hits,
            "term_coverage": round(coverage, 4),
            "known_terms": len(known),
            "rare_terms_known": len(rare),
            "documents_in_scope": documents,
        },
        reasons=reasons,
        took_us=round((time.perf_counter() - started) * 1e6, 1),
    )


def _cue_known(
    value: str, catalog: EntityCatalog, index: TermStatistics, scope: set[str] | None, sessions: list[str] | None
) -> bool:
    """A cue hits when it names an entity or one of its words occurs in the scope's events."""
    if exact_matches(value, catalog, scope):
        return True
    _, frequencies = index.term_statistics(value, sessions=sessions)
    return any(frequencies.values())


def _coverage(documents: int, frequencies: dict[str, int]) -> tuple[float, list[str], list[str]]:
    if not frequencies or documents == 0:
        return 0.0, [], []
    unknown_idf = math.log(1.0 + (documents + 0.5) / 0.5)
    total = 0.0
    covered = 0.0
    known: list[str] = []
    rare: list[str] = []
    for term, df in frequencies.items():
        idf = math.log(1.0 + (documents - df + 0.5) / (df + 0.5)) if df else unknown_idf
        total += idf
        if df:
            covered += idf
            known.append(term)
            if df <= max(1, min(RARE_MAX_DOCS, int(documents * RARE_SHARE))) or documents <= 3:
                rare.append(term)
    return (covered / total if total else 0.0), known, rare
