"""Greedy salience-per-token packing of packet lines under a token budget (counted with tiktoken).

Every candidate is one rendered line that carries its own citation, so packing drops whole items and never
cuts a citation. A recall floor keeps the best evidence items first; the rest go by value per token. What was
left out is summarised (counts per section and the elided citations), so truncated recall is never mistaken
for empty recall.

One item appears once per packet, in its best section: candidates that cite the same event (a decision is a
stable fact, a recent decision and evidence for the question) are one item, packed in the first section of
:data:`SECTION_ORDER` that has room; the others are alternates, used only when the better one did not fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .tokens import line_tokens

# Best section first: standing memory, reviewed consolidation, structured session state (a task with its status,
# a goal, a decision, a blocker, a file), evidence for the question (ranked for it: documents and turns are read
# there, not as bare source anchors), source anchors, replay.
SECTION_ORDER = (
    "stable",
    "reviewed",
    "goals",
    "tasks",
    "decisions",
    "blockers",
    "artifacts",
    "evidence",
    "source_anchors",
    "recent",
)


@dataclass
class Candidate:
    section: str
    tier: int
    line: str
    value: float
    citation: str
    floor: bool = False  # packed before anything else (the recall floor)
    tokens: int = 0
    payload: Any = None  # the packet item this line renders


@dataclass
class Packing:
    kept: list[Candidate]
    elided: list[Candidate]
    used: int
    complete: bool = False  # every item kept in its best section: no smaller overhead can keep more


def pack(
    candidates: list[Candidate],
    budget: int | None,
    overhead: int,
    encoder: Any,
    tier_caps: dict[int, int] | None = None,
) -> Packing:
    """Choose the lines that fit ``budget`` tokens after ``overhead`` (headers, guidance).

    ``tier_caps`` bounds how many tokens a tier may take (the stable tier may not starve the evidence).
    """
    for candidate in candidates:
        candidate.tokens = line_tokens(encoder, candidate.line + "\n") if encoder else 0
    primary, alternates = _by_item(candidates)
    if budget is None:
        return Packing(primary, [], overhead + sum(c.tokens for c in primary))
    remaining = budget - overhead
    caps = dict(tier_caps or {})
    kept: list[Candidate] = []
    shown: set[str] = set()
    floor = sorted((c for c in primary if c.floor), key=lambda c: -c.value)
    rest = sorted((c for c in primary if not c.floor), key=lambda c: -(c.value / max(c.tokens, 1)))
    for candidate in [*floor, *rest, *alternates]:
        cap = caps.get(candidate.tier)
        if candidate.citation in shown:
            continue
        if candidate.tokens <= remaining and (cap is None or candidate.tokens <= cap):
            kept.append(candidate)
            shown.add(candidate.citation)
            remaining -= candidate.tokens
            if cap is not None:
                caps[candidate.tier] = cap - candidate.tokens
    elided = [c for c in primary if c.citation not in shown]
    complete = not elided and len(kept) == len(primary)  # shown through their primaries, no alternate
    return Packing(kept, elided, budget - remaining, complete)


def _by_item(candidates: list[Candidate]) -> tuple[list[Candidate], list[Candidate]]:
    """(the best-section candidate of each cited item, the other candidates best section first)."""
    order = {section: index for index, section in enumerate(SECTION_ORDER)}
    ranked = sorted(candidates, key=lambda c: order.get(c.section, len(order)))  # stable: ties keep their order
    best: dict[str, Candidate] = {}
    for candidate in ranked:
        best.setdefault(candidate.citation, candidate)
    primary = [c for c in candidates if best[c.citation] is c]
    chosen = {id(c) for c in primary}
    return primary, [c for c in ranked if id(c) not in chosen]


def elided_summary(elided: list[Candidate]) -> dict[str, Any]:
    by_section: dict[str, int] = {}
    for candidate in elided:
        by_section[candidate.section] = by_section.get(candidate.section, 0) + 1
    return {
        "count": len(elided),
        "by_section": by_section,
        "citations": sorted({c.citation for c in elided}),
        "note": "left out to fit max_tokens; fetch with memory_query or raise the budget" if elided else "",
    }
