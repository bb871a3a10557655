"""Greedy salience-per-token packing of packet lines under a token budget (counted with tiktoken).

Every candidate is one rendered line that carries its own citation, so packing drops whole items and never
cuts a citation. A recall floor keeps the best evidence items first; the rest go by value per token. What was
left out is summarised (counts per section and the elided citations), so truncated recall is never mistaken
for empty recall.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
        candidate.tokens = len(encoder.encode(candidate.line + "\n", disallowed_special=())) if encoder else 0
    if budget is None:
        return Packing(list(candidates), [], overhead + sum(c.tokens for c in candidates))
    remaining = budget - overhead
    caps = dict(tier_caps or {})
    kept: list[Candidate] = []
    floor = sorted((c for c in candidates if c.floor), key=lambda c: -c.value)
    rest = sorted((c for c in candidates if not c.floor), key=lambda c: -(c.value / max(c.tokens, 1)))
    for candidate in [*floor, *rest]:
        cap = caps.get(candidate.tier)
        if candidate.tokens <= remaining and (cap is None or candidate.tokens <= cap):
            kept.append(candidate)
            remaining -= candidate.tokens
            if cap is not None:
                caps[candidate.tier] = cap - candidate.tokens
    kept_ids = {id(c) for c in kept}
    elided = [c for c in candidates if id(c) not in kept_ids]
    return Packing(kept, elided, budget - remaining)


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
