"""How a Memory Checkout's items become a prompt under a token budget: evidence and replay items, the candidates
of every section, and the packing that settles on the fullest guidance leaving the most memory.

Why a module of its own: the budget is the last step of a checkout and the one a tight ``max_tokens`` exercises;
what the items are (:mod:`.facts`, :mod:`.cited`) does not depend on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zaxy_agents.retrieval.engine import RetrievalHit

from .budget import Candidate, Packing, pack
from .guidance import render_guidance
from .models import (
    EvidenceItem,
    FactItem,
    Guidance,
    PurposePolicy,
    Quality,
    WorkingSet,
)
from .render import one_line, render
from .tokens import text_tokens

STABLE_SHARE = 0.3  # the stable tier may use at most this share of max_tokens (it must not starve evidence)


def replay_items(recent: list[EvidenceItem], evidence: list[EvidenceItem]) -> list[EvidenceItem]:
    """Recent events not already retrieved (a retrieved one just gains the ``replay`` lane)."""
    retrieved = {item.citation: item for item in evidence}
    items = []
    for item in recent:
        found = retrieved.get(item.citation)
        if found is not None:
            found.lanes = sorted({*found.lanes, "replay"})
        else:
            items.append(item)
    return items


def replay_candidates(replay: list[EvidenceItem]) -> list[Candidate]:
    newest_first = sorted(replay, key=lambda item: -item.seq)
    return [
        Candidate(
            "recent",
            2,
            f"- [{item.event_type}] {item.text} ({item.citation})",
            value=0.7 - 0.01 * rank,
            citation=item.citation,
            payload=item,
        )
        for rank, item in enumerate(newest_first)
    ]


def evidence_item(hit: RetrievalHit) -> EvidenceItem:
    return EvidenceItem(
        citation=hit.citation,
        session=hit.session,
        seq=hit.seq,
        event_type=hit.event_type,
        text=one_line(hit.text),
        status=hit.status,
        score=round(hit.score, 8),
        lanes=sorted(hit.lanes),
        score_explanation={
            "lane_scores": {lane: round(score, 6) for lane, score in hit.lanes.items()},
            "lane_ranks": hit.ranks,
            "boosts": hit.boosts,
            **({"verbatim_components": hit.components} if hit.components else {}),
        },
    )


def packet_candidates(
    stable: list[FactItem],
    reviewed: list[FactItem],
    working: WorkingSet,
    hits: list[RetrievalHit],
    evidence: list[EvidenceItem],
    purpose: PurposePolicy,
) -> list[Candidate]:
    # The stable tier is packed first (floor) and its lines carry no scores, so its bytes depend only on memory
    # and the budget, never on the question.
    candidates = [
        Candidate(
            "stable",
            1,
            f"- [{_label(fact)}] {fact.name}: {fact.summary} ({fact.citation})",
            value=2.0 - index / 100,
            citation=fact.citation,
            floor=True,
            payload=fact,
        )
        for index, fact in enumerate(stable)
    ]
    candidates += [
        Candidate(
            "reviewed",
            2,
            f"- [{_label(fact)}] {fact.name}: {fact.summary} ({fact.citation})",
            value=0.9 - index / 100,
            citation=fact.citation,
            payload=fact,
        )
        for index, fact in enumerate(reviewed)
    ]
    for section, items in (
        ("goals", working.goals),
        ("tasks", working.tasks),
        ("decisions", working.decisions),
        ("blockers", working.blockers),
        ("artifacts", working.artifacts),
        ("source_anchors", working.source_anchors),
    ):
        for rank, item in enumerate(items):
            candidates.append(
                Candidate(
                    section,
                    2,
                    f"- {item.text} ({item.citation})",
                    value=0.8 - 0.05 * rank,
                    citation=item.citation,
                    payload=item,
                )
            )
    top = max((hit.score for hit in hits), default=1.0) or 1.0
    for rank, (hit, item) in enumerate(zip(hits, evidence, strict=True)):
        candidates.append(
            Candidate(
                "evidence",
                3,
                f"- [{item.status}, {item.event_type}] {item.text} ({item.citation})",
                value=0.5 + hit.score / top,
                citation=item.citation,
                floor=rank < purpose.recall_floor,
                payload=item,
            )
        )
    return candidates


def _label(fact: FactItem) -> str:
    """``procedure, accepted, non-authoritative`` for reviewed consolidation output, else the entity type."""
    if fact.review_status is None:
        return fact.entity_type
    return f"{fact.entity_type}, {fact.review_status}, {(fact.authority_status or '').replace('_', '-')}"


def _overhead_tokens(encoder: Any, guidance_lines: list[str], query: str, replay: bool = False) -> int:
    if encoder is None:
        return 0
    skeleton = "\n".join(
        [
            "# Memory Checkout",
            "",
            "## How to use this memory",
            *guidance_lines,
            f"## Evidence for this question: {query!r}",
            "## Open tasks",
            "## Recent decisions",
            *(["## Recent events (replay, oldest first)"] if replay else []),
        ]
    )
    return text_tokens(encoder, skeleton) + 8


def trim_working(working: WorkingSet, shown: set[str]) -> WorkingSet:
    return WorkingSet(
        **{
            name: [item for item in getattr(working, name) if item.citation in shown]
            for name in WorkingSet.model_fields
        }
    )


def fit(
    candidates: list[Candidate],
    quality: Quality,
    guidance: Guidance,
    query: str,
    replay: bool,
    max_tokens: int | None,
    encoder: Any,
) -> tuple[Packing, str, str, int]:
    """Pack and render under ``quality``'s guidance. Under tight budgets the guidance shrinks before memory items
    do: answerability (and the next action) always stay."""
    full = render_guidance(quality, guidance)
    best: tuple[tuple[float, int], Packing, str, str, int] | None = None
    for guidance_lines in (full, full[:2], full[:1]):
        overhead = _overhead_tokens(encoder, guidance_lines, query, replay)
        caps = {1: int(max_tokens * STABLE_SHARE)} if max_tokens is not None else None
        packing = pack(candidates, max_tokens, overhead, encoder, caps)
        prompt, prefix = render(packing.kept, guidance_lines, query)
        used = text_tokens(encoder, prompt) if encoder else packing.used
        if max_tokens is None:
            return packing, prompt, prefix, used
        # the fullest guidance that leaves the most memory in the prompt
        rank = (sum(c.value for c in packing.kept), len(guidance_lines))
        if used <= max_tokens and (best is None or rank > best[0]):
            best = (rank, packing, prompt, prefix, used)
            if packing.complete:  # every item fits with the fullest guidance left: no later variant ranks higher
                break
    if best is None:  # nothing fits even with one guidance line: the shortest prompt
        return packing, prompt, prefix, used
    return best[1], best[2], best[3], best[4]


def settle(
    packing: Packing,
    quality_of: Callable[[set[str] | None], Quality],
    guidance: Guidance,
    query: str,
    replay: bool,
    max_tokens: int | None,
    encoder: Any,
) -> tuple[Packing, str, str, int, Quality]:
    """When packing and verdict did not agree within the rounds: keep the packed items, state the verdict on them
    (answerability line only) and drop the least valuable items until the prompt fits."""
    kept = sorted(packing.kept, key=lambda c: -c.value)
    while True:
        quality = quality_of({c.citation for c in kept})
        prompt, prefix = render(kept, render_guidance(quality, guidance)[:1], query)
        used = text_tokens(encoder, prompt) if encoder else packing.used
        if max_tokens is None or used <= max_tokens or not kept:
            dropped = [c for c in packing.kept if c not in kept]
            return Packing(kept, [*packing.elided, *dropped], used), prompt, prefix, used, quality
        kept.pop()
