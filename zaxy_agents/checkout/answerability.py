"""Answerability: is memory enough to answer, should the agent refresh, or must it ask the user?

Rules (docs/checkout.md):
- ``answer_from_memory`` only when relevant current evidence carries resolvable citations, the query is
  covered, and there are no warnings.
- ``refresh_recommended`` when something matched but it is weak, uncited, superseded-only, partially covered,
  or the packet carries warnings (degraded lanes, projection lag).
- ``ask_user`` when memory holds nothing relevant.
- The verdict is on what the packed prompt holds: relevant items a tight ``max_tokens`` left out are not
  evidence in the prompt; when nothing relevant fits, the verdict is ``refresh_recommended`` (raise the budget).

Composed questions get a slot plan (source, numeric, temporal, exact, semantic); unsatisfied slots become
``missing_slots`` with ``suggested_queries``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from zaxy_agents.retrieval.text import _TEMPORAL_RE, _WHEN_RE, Analyzer

from .models import EvidenceItem, Quality, RequiredAction, Slot

COVERAGE_FOR_ANSWER = 0.6
# seed 003's degraded-checkout example: the refresh asks for the current state around a partly covered question
REFRESH_QUERY = "current decisions, blockers, and next actions for: {query}"
RELEVANT = frozenset({"current", "event"})
_ANALYZER = Analyzer()
_QUOTED = re.compile(r"[\"“`']([^\"”`']{2,80})[\"”`']")
_IDENTIFIER = re.compile(
    r"\b(?:[A-Z]{2,}-\d+|[a-z_]+\.[a-z_]+\(?\)?|[A-Za-z0-9_\-]+\.(?:py|ts|js|md|json|toml|yaml|"
    r"yml|rs|go|java|sql|sh))\b"
)
_NUMERIC = re.compile(r"\b(how many|how much|how long|what number|count|total|percent|version)\b|\d", re.I)
_SOURCE = re.compile(r"\b(which file|what file|where (is|was|are|do|does|did)|which module|path|source|line)\b", re.I)
_DIGIT = re.compile(r"\d")


def query_coverage(query: str, evidence: list[EvidenceItem], top: int = 5) -> float:
    """Share of the query's content terms found in the top evidence texts."""
    terms = _terms(query)
    if not terms:
        return 1.0 if evidence else 0.0
    found: set[str] = set()
    for item in evidence[:top]:
        found.update(terms & _terms(item.text))
    return len(found) / len(terms)


@lru_cache(maxsize=1024)
def _terms(text: str) -> frozenset[str]:
    """The analysed terms of ``text``, remembered: a checkout measures the query's coverage against the same top
    evidence texts once per verdict round and packing variant (~4 times, ~25 us per text each), and an agent's
    questions meet the same evidence turn after turn."""
    return frozenset(_ANALYZER(text))


def slot_plan(query: str, evidence: list[EvidenceItem]) -> list[Slot]:
    """The slots a question asks for, each checked against the evidence (semantic is always present)."""
    texts = [(item.citation, item.text, item.event_type) for item in evidence[:8]]
    slots: list[Slot] = []
    for quoted in [m.group(1) for m in _QUOTED.finditer(query)] + _IDENTIFIER.findall(query):
        cites = [c for c, text, _ in texts if quoted.lower() in text.lower()]
        slots.append(Slot(slot="exact", cue=quoted, satisfied=bool(cites), citations=cites[:3]))
    if _SOURCE.search(query):
        cites = [c for c, text, kind in texts if kind in {"file.edit.applied", "document.chunk"} or "/" in text]
        slots.append(
            Slot(slot="source", cue=_SOURCE.search(query).group(0), satisfied=bool(cites), citations=cites[:3])
        )
    numeric = _NUMERIC.search(query)
    if numeric:
        cites = [c for c, text, _ in texts if _DIGIT.search(text)]
        slots.append(Slot(slot="numeric", cue=numeric.group(0), satisfied=bool(cites), citations=cites[:3]))
    temporal = _WHEN_RE.search(query.lower()) or _TEMPORAL_RE.search(query.lower())
    if temporal:
        # every event is timestamped, so a time question is satisfiable by any cited event; prefer explicit cues
        cites = [c for c, text, _ in texts if _TEMPORAL_RE.search(text.lower())] or [c for c, _, _ in texts[:1]]
        slots.append(Slot(slot="temporal", cue=temporal.group(0).strip(), satisfied=bool(cites), citations=cites[:3]))
    coverage = query_coverage(query, evidence)
    slots.append(
        Slot(
            slot="semantic",
            cue=query[:80],
            satisfied=coverage >= COVERAGE_FOR_ANSWER,
            citations=[c for c, _, _ in texts[:3]],
        )
    )
    return slots


def assess(
    query: str,
    evidence: list[EvidenceItem],
    current_fact_count: int,
    superseded_excluded: int,
    warnings: list[str],
    unresolvable: int,
    left_out: int = 0,
) -> Quality:
    """Compute the quality block (answerability, bounded confidence, reasons, required action, slots).

    ``evidence`` and ``current_fact_count`` are what the prompt shows; ``left_out``: relevant evidence items the
    token budget left out of it."""
    relevant = [item for item in evidence if item.status in RELEVANT]
    coverage = query_coverage(query, relevant)
    slots = slot_plan(query, relevant) if query else []
    composed = len([s for s in slots if s.slot != "semantic"]) >= 1 and len(slots) >= 2
    missing = [s.slot for s in slots if not s.satisfied] if composed else []
    suggestions = _suggestions(query, slots) if missing else []
    reasons: list[str] = []
    if not query:
        reasons.append("bootstrap packet: no question to answer yet")
    if relevant:
        reasons.append(f"{len(relevant)} cited evidence items, query coverage {coverage:.0%}")
    if current_fact_count:
        reasons.append(f"{current_fact_count} current facts")
    if superseded_excluded:
        reasons.append(f"{superseded_excluded} superseded or invalidated items excluded")
    if warnings:
        reasons.append(f"{len(warnings)} warnings")
    if unresolvable:
        reasons.append(f"{unresolvable} citations do not resolve")
    if left_out:
        reasons.append(f"{left_out} matching evidence items left out by max_tokens")

    confidence = 0.15 + 0.55 * coverage + 0.15 * min(1.0, len(relevant) / 3) + 0.15 * (current_fact_count > 0)
    confidence -= 0.15 * min(len(warnings), 2) + 0.2 * bool(unresolvable) + 0.1 * len(missing)
    confidence = round(max(0.0, min(1.0, confidence)), 3)

    if not relevant:
        if left_out:
            answerability = "refresh_recommended"
            action = RequiredAction(
                tool="memory_checkout",
                query=query,
                reason=f"max_tokens left out all {left_out} matching items; raise it",
            )
            confidence = min(confidence, 0.2)
        elif superseded_excluded:
            answerability = "refresh_recommended"
            action = RequiredAction(
                tool="memory_query",
                query=query,
                reason="only superseded or invalidated memory matched; confirm the current state",
            )
            reasons.append("superseded-only")
        else:
            answerability, action = (
                "ask_user",
                RequiredAction(tool="ask_user", query=query, reason="memory holds nothing relevant to this question"),
            )
            reasons.append("no relevant memory")
    elif warnings or unresolvable or coverage < COVERAGE_FOR_ANSWER or missing:
        answerability = "refresh_recommended"
        target = suggestions[0] if suggestions else query
        why = (
            "warnings present"
            if warnings
            else "citations do not resolve"
            if unresolvable
            else (f"missing {', '.join(missing)}" if missing else f"query only {coverage:.0%} covered")
        )
        if missing:
            action = RequiredAction(
                tool="memory_checkout",
                query=target,
                reason=why,
                missing_slots=missing,
                suggested_queries=suggestions,
            )
        elif warnings or unresolvable:  # the same checkout again, once the lane or the log is back
            action = RequiredAction(tool="memory_checkout", query=query, reason=why)
        else:  # seed 003's degraded example: a broader checkout of the current state around the question
            action = RequiredAction(tool="memory_checkout", query=REFRESH_QUERY.format(query=query[:3900]), reason=why)
    else:
        answerability, action = "answer_from_memory", None
    return Quality(
        answerability=answerability,
        confidence=confidence,
        reasons=reasons,
        required_action=action,
        query_coverage=round(coverage, 3),
        slot_plan=slots if composed else None,
        missing_slots=missing,
        suggested_queries=suggestions,
    )


def _suggestions(query: str, slots: list[Slot]) -> list[str]:
    topic = " ".join(_ANALYZER.words(query)[:8])
    out = []
    for slot in slots:
        if slot.satisfied:
            continue
        if slot.slot == "exact":
            out.append(slot.cue)
        elif slot.slot == "source":
            out.append(f"files and documents about {topic}")
        elif slot.slot == "numeric":
            out.append(f"{topic} count number")
        elif slot.slot == "temporal":
            out.append(f"when {topic}")
        else:
            out.append(topic)
    return list(dict.fromkeys(out))[:4]
