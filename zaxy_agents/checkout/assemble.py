"""Assemble a Memory Checkout packet from the retriever, the catalog and the log.

Order of work: purpose policy -> retrieval (all lanes, superseded kept aside and counted) -> suppression ->
current facts, evidence, working set, stable tier -> provenance (every citation re-resolved against the log)
-> quality -> guidance -> budgeted rendering -> diagnostics. Extensions (causal context, consolidation candidates;
see :mod:`.extensions`) add diagnostics blocks and guidance lines; the caller passes the list.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from zaxy_agents.consolidation.acceptance import admissible
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.evidence import EvidenceCheck
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.records import EntityVersion
from zaxy_agents.projection.salience import salience
from zaxy_agents.retrieval.engine import RetrievalHit, Retriever

from .answerability import assess
from .budget import Candidate, elided_summary, pack
from .extensions.context import CheckoutContext, Extension
from .models import (
    CheckoutPacket,
    Diagnostics,
    EvidenceItem,
    FactItem,
    FeedbackGuidance,
    Guidance,
    ProvenanceItem,
    PurposePolicy,
    Quality,
    Retention,
    WorkingSet,
)
from .purpose import EMPHASIS_BOOST
from .render import one_line, prefix_digest, render
from .tokens import get_encoding
from .working_set import build_working_set

FACT_TYPES = frozenset(
    {"fact", "decision", "task", "memory_item", "document_chunk", "file", "checkpoint", "procedure", "claim", "episode"}
)
# Procedures, claims and episodes come from reviewed consolidation: only accepted ones pass the review gate.
STABLE_TYPES = ("decision", "fact", "procedure", "claim", "episode")
STABLE_LIMIT = 12
REVIEWED_TYPES = frozenset({"procedure", "claim", "episode"})
STABLE_SHARE = 0.3  # the stable tier may use at most this share of max_tokens (it must not starve evidence)


def assemble(
    *,
    query: str,
    session: str | None,
    scope: list[str] | None,
    catalog: EntityCatalog,
    retriever: Retriever,
    log: EventLog,
    purpose: PurposePolicy,
    max_tokens: int | None,
    encoding: str,
    as_of: str | None,
    ref: str | None,
    k: int,
    projection_lag: int = 0,
    embedding_lag: int = 0,
    degraded: str | None = None,
    extensions: Sequence[tuple[str, Extension]] = (),
    evidence_resolves: Callable[[str, int, str], bool] | None = None,
    notices: list[str] | None = None,
    recent: list[EvidenceItem] | None = None,
) -> CheckoutPacket:
    """``recent``: the session's latest events (the replay lane of ``replay_from_seq`` / ``max_recent_events``),
    packed as session state and reported in ``evidence`` with the lane ``replay``."""
    started = time.perf_counter()
    scope_set = set(scope) if scope is not None else None
    warnings: list[str] = list(notices or [])
    if degraded:
        warnings.append(f"degraded: {degraded}")
    if projection_lag:
        warnings.append(f"projection is {projection_lag} events behind the log")

    hits: list[RetrievalHit] = []
    excluded: list[RetrievalHit] = []
    lane_counts: dict[str, int] = {}
    suppressed = 0
    if query:
        result = retriever.search(
            query, sessions=scope, k=max(k, purpose.recall_floor) * 2, profile=purpose.profile, as_of=as_of
        )
        warnings += result.warnings
        lane_counts, excluded = result.lane_counts, result.excluded
        for hit in result.hits:
            if hit.event_type in purpose.suppress_event_types or (
                hit.entity is not None and hit.entity.entity_type in purpose.suppress_entity_types
            ):
                suppressed += 1
                continue
            if purpose.emphasis_terms and any(term in hit.text.lower() for term in purpose.emphasis_terms):
                hit.score *= EMPHASIS_BOOST
                hit.boosts["purpose_emphasis"] = EMPHASIS_BOOST
            hits.append(hit)
        hits.sort(key=lambda h: (-h.score, h.session, h.seq))
        hits = hits[:k]

    evidence = [_evidence(hit) for hit in hits]
    replay = _replay_items(recent or [], evidence)
    stable = _stable_facts(catalog, scope_set, as_of)
    query_facts = _query_facts(hits, catalog, {fact.id for fact in stable}, as_of)
    working = build_working_set(catalog, scope_set, as_of)
    provenance, unresolvable = _provenance(log, [*evidence, *replay, *query_facts, *stable], working)
    if unresolvable:
        warnings.append(f"{unresolvable} citations no longer resolve against the log")
    invalidated = sum(1 for hit in excluded if hit.status == "invalidated")

    context = CheckoutContext(
        query,
        scope_set,
        catalog,
        hits,
        [*stable, *query_facts],
        as_of,
        log,
        evidence_resolves if evidence_resolves is not None else EvidenceCheck(log),
    )
    extension_blocks: dict[str, Any] = {}
    extension_guidance: list[str] = []
    for name, function in extensions:
        try:
            block, lines = function(context)
        except Exception as exc:  # an extension never breaks the checkout
            warnings.append(f"{name} unavailable: {type(exc).__name__}: {exc}")
            continue
        extension_blocks[name] = block
        extension_guidance += lines

    current_facts = [*stable, *query_facts]
    if query:
        quality = assess(query, evidence, len(current_facts), len(excluded), warnings, unresolvable)
    else:
        quality = _bootstrap_quality(working, stable, warnings)
    guidance = _guidance(current_facts, session, extension_guidance)

    encoder = get_encoding(encoding) if max_tokens is not None else None
    candidates = _candidates(stable, working, hits, evidence, purpose, max_tokens) + _replay_candidates(replay)
    full_guidance = _guidance_lines(quality, guidance)
    # Under tight budgets the guidance shrinks before memory items do: answerability (and the next action) always stay.
    for guidance_lines in (full_guidance, full_guidance[:2], full_guidance[:1]):
        overhead = _overhead_tokens(encoder, guidance_lines, query, bool(replay))
        caps = {1: int(max_tokens * STABLE_SHARE)} if max_tokens is not None else None
        packing = pack(candidates, max_tokens, overhead, encoder, caps)
        prompt, prefix = render(packing.kept, guidance_lines, query)
        budget_used = len(encoder.encode(prompt, disallowed_special=())) if encoder else packing.used
        if max_tokens is None or budget_used <= max_tokens:
            break
    kept_payloads = {id(c.payload) for c in packing.kept}
    if max_tokens is not None:
        evidence = [item for item in evidence if id(item) in kept_payloads]
        replay = [item for item in replay if id(item) in kept_payloads]
        shown = {fact.citation for fact in current_facts}
        guidance.feedback.payloads = [p for p in guidance.feedback.payloads if p["citation"] in shown]
        current_facts = [fact for fact in current_facts if id(fact) in kept_payloads]
        working = _trim_working(working, kept_payloads)

    diagnostics = Diagnostics(
        source_lanes=lane_counts,
        citation_count=len(provenance),
        current_citation_count=sum(1 for p in provenance if p.resolvable),
        current_fact_count=len(current_facts),
        superseded_contexts_excluded=len(excluded),
        warning_count=len(warnings),
        feedback_recommended=bool(guidance.feedback.payloads),
        inferred_context=_inferred_context(catalog, hits),
        purpose_policy={
            **purpose.model_dump(),
            "suppressed": suppressed,
            "emphasised": sum(1 for h in hits if "purpose_emphasis" in h.boosts),
        },
        budget_requested=max_tokens,
        budget_used=budget_used,
        encoding=encoding,
        elided=elided_summary(packing.elided),
        stable_prefix_chars=len(prefix),
        stable_prefix_sha256=prefix_digest(prefix),
        salience=[{"id": fact.id, "name": fact.name, **fact.salience} for fact in current_facts],
        embedding_lag=embedding_lag,
        projection_lag=projection_lag,
        degraded=degraded,
        took_ms=round((time.perf_counter() - started) * 1000, 3),
        **extension_blocks,
    )
    retention = Retention(
        log_events=sum(seq for seq, _ in catalog.cursors.values()),
        projected_through={s: c[0] for s, c in sorted(catalog.cursors.items()) if scope_set is None or s in scope_set},
        superseded_excluded=len(excluded) - invalidated,
        invalidated_excluded=invalidated,
        suppressed_by_purpose=suppressed,
        elided_by_budget=len(packing.elided),
    )
    return CheckoutPacket(
        query=query,
        session=session,
        scope=scope,
        as_of=as_of,
        ref=ref,
        purpose=purpose,
        current_facts=current_facts,
        evidence=[*evidence, *replay],
        provenance=provenance,
        working_set=working,
        retention=retention,
        warnings=warnings,
        quality=quality,
        guidance=guidance,
        diagnostics=diagnostics,
        prompt=prompt,
    )


def _replay_items(recent: list[EvidenceItem], evidence: list[EvidenceItem]) -> list[EvidenceItem]:
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


def _replay_candidates(replay: list[EvidenceItem]) -> list[Candidate]:
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


def _evidence(hit: RetrievalHit) -> EvidenceItem:
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


def _fact(version: EntityVersion, catalog: EntityCatalog, tier: int, score: float = 0.0) -> FactItem:
    properties = version.properties if version.entity_type in REVIEWED_TYPES else {}
    return FactItem(
        id=version.id,
        entity_type=version.entity_type,
        name=version.name,
        summary=one_line(version.summary),
        session=version.session,
        citation=version.citation,
        valid_from=version.valid_from,
        tier=tier,
        score=round(score, 8),
        salience=salience(version, catalog),
        review_status=properties.get("review_status"),
        authority_status=properties.get("authority_status"),
    )


def _query_facts(
    hits: list[RetrievalHit], catalog: EntityCatalog, stable_ids: set[str], as_of: str | None
) -> list[FactItem]:
    facts, seen = [], set(stable_ids)
    for hit in hits:
        entity = hit.entity
        if entity is None or hit.status != "current" or entity.entity_type not in FACT_TYPES or entity.id in seen:
            continue
        if entity.entity_type in REVIEWED_TYPES and not admissible(catalog, entity, as_of):
            continue
        seen.add(entity.id)
        facts.append(_fact(entity, catalog, tier=3, score=hit.score))
    return facts


def _stable_facts(catalog: EntityCatalog, scope: set[str] | None, as_of: str | None) -> list[FactItem]:
    """Query-independent tier 1: the most important current decisions, facts and accepted procedures."""
    versions: list[EntityVersion] = []
    for session in sorted(scope if scope is not None else catalog.sessions):
        for entity_type in STABLE_TYPES:
            for key in catalog.recent_keys(session, entity_type, scan=200)[:STABLE_LIMIT]:
                version = catalog.version_at(key, as_of)
                if version is not None and (entity_type not in REVIEWED_TYPES or admissible(catalog, version, as_of)):
                    versions.append(version)
    ranked = sorted(versions, key=lambda v: (-v.importance, v.entity_type, v.name, v.id))[:STABLE_LIMIT]
    return [_fact(version, catalog, tier=1) for version in sorted(ranked, key=lambda v: (v.entity_type, v.name, v.id))]


def _provenance(log: EventLog, items: list[Any], working: WorkingSet) -> tuple[list[ProvenanceItem], int]:
    citations: dict[str, str | None] = {}
    for item in items:
        citations.setdefault(item.citation, getattr(item, "event_type", None))
    for item in working.items():
        citations.setdefault(item.citation, None)
    provenance, unresolvable = [], 0
    parsed_all = {citation: parse_citation(citation) for citation in citations}
    found = log.hashes_and_types([(p.session, p.seq) for p in parsed_all.values()])  # one query on a server
    for citation, event_type in citations.items():
        parsed = parsed_all[citation]
        stored = found.get((parsed.session, parsed.seq))
        resolvable = stored is not None and parsed.matches(stored[0])
        event_type = stored[1] if resolvable and stored is not None else event_type
        unresolvable += not resolvable
        provenance.append(
            ProvenanceItem(
                citation=citation,
                session=parsed.session,
                seq=parsed.seq,
                hash_prefix=parsed.hash_prefix,
                event_type=event_type,
                resolvable=resolvable,
            )
        )
    return provenance, unresolvable


def _inferred_context(catalog: EntityCatalog, hits: list[RetrievalHit]) -> dict[str, Any]:
    edges = {}
    for hit in hits:
        if hit.entity is None:
            continue
        for edge in [*catalog.out_edges(hit.entity.key), *catalog.in_edges(hit.entity.key)]:
            if edge.inferred:
                edges[edge.id] = edge
    confidences = [edge.confidence for edge in edges.values()]
    return {
        "count": len(edges),
        "relation_labels": sorted({edge.relation_type for edge in edges.values()}),
        "methods": sorted({edge.inference_method for edge in edges.values()}),
        "average_trust": round(sum(confidences) / len(confidences), 4) if confidences else None,
    }


def _bootstrap_quality(working: WorkingSet, stable: list[FactItem], warnings: list[str]) -> Quality:
    has_state = bool(working.items() or stable)
    if has_state and not warnings:
        return Quality(
            answerability="answer_from_memory", confidence=0.7, reasons=["bootstrap: cited session state is available"]
        )
    if has_state:
        return Quality(
            answerability="refresh_recommended",
            confidence=0.4,
            reasons=["bootstrap: session state available but the packet carries warnings"],
        )
    return Quality(answerability="ask_user", confidence=0.1, reasons=["bootstrap: no memory for this scope yet"])


def _guidance(facts: list[FactItem], session: str | None, extra: list[str]) -> Guidance:
    payloads = [  # valid memory_feedback arguments, in the seed's names
        {
            "entity_name": fact.name,
            "entity_type": fact.entity_type,
            "feedback": "used",
            "actor": "assistant",
            "citation": fact.citation,
            "session_id": session or fact.session,
        }
        for fact in facts[:5]
        if fact.citation
    ]
    return Guidance(
        trust=[
            "Trust current facts and evidence that carry an eventloom:// citation; cite them in your answer.",
            "Prefer tier-1 stable memory for standing decisions, and newer evidence over older evidence.",
            *extra,
        ],
        ignore=[
            "Ignore anything superseded or invalidated: it is excluded here on purpose.",
            "Do not treat missing evidence as a negative answer; follow quality.required_action instead.",
        ],
        feedback=FeedbackGuidance(payloads=payloads),
    )


def _guidance_lines(quality: Quality, guidance: Guidance) -> list[str]:
    lines = [f"- answerability: {quality.answerability} (confidence {quality.confidence:.2f})"]
    if quality.required_action is not None:
        action = quality.required_action
        lines.append(f"- next: {action.tool}({action.query!r}) because {action.reason}")
    if quality.missing_slots:
        lines.append(f"- missing: {', '.join(quality.missing_slots)}")
    lines += [f"- {line}" for line in guidance.trust[:2] + guidance.ignore[:1] + guidance.trust[2:]]
    return lines


def _candidates(
    stable: list[FactItem],
    working: WorkingSet,
    hits: list[RetrievalHit],
    evidence: list[EvidenceItem],
    purpose: PurposePolicy,
    max_tokens: int | None,
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
    return len(encoder.encode(skeleton, disallowed_special=())) + 8


def _trim_working(working: WorkingSet, kept: set[int]) -> WorkingSet:
    return WorkingSet(
        **{name: [item for item in getattr(working, name) if id(item) in kept] for name in WorkingSet.model_fields}
    )
