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

from zaxy_agents.consolidation.acceptance import ADMISSION_READS, admissible
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.evidence import EvidenceCheck
from zaxy_agents.eventloom.integrity import CallReads, CitedCheck
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.projection.catalog import EntityCatalog, reports_epochs
from zaxy_agents.projection.records import EntityVersion
from zaxy_agents.projection.salience import salience
from zaxy_agents.retrieval.attenuation import attenuation
from zaxy_agents.retrieval.engine import RetrievalHit, Retriever
from zaxy_agents.retrieval.ranking import RankingPolicy, get_retrieval_profile

from .answerability import RELEVANT, assess
from .budget import Candidate, Packing, elided_summary, pack
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
    RequiredAction,
    Retention,
    WorkingSet,
)
from .purpose import EMPHASIS_BOOST
from .render import one_line, prefix_digest, render
from .tiers import most_important, rank_key, session_candidates
from .tokens import get_encoding, text_tokens
from .working_set import build_working_set

FACT_TYPES = frozenset(
    {"fact", "decision", "task", "memory_item", "document_chunk", "file", "checkpoint", "procedure", "claim", "episode"}
)
STABLE_TYPES = ("decision", "fact")
STABLE_LIMIT = 12
# Procedures, claims and episodes come from reviewed consolidation: only accepted ones pass the review gate, and
# even then acceptance is a disposition, not a promotion (seed 001): they are listed in ``reviewed_memory``, in a
# section of their own labelled non-authoritative, never among the current facts or in the stable tier.
REVIEWED_TYPES = frozenset({"procedure", "claim", "episode"})
# the follow-up checkout a bootstrap packet (no question yet) recommends (seed 003's CLI example)
LOW_TRUST = 0.5  # an inferred edge below this trust gets a guidance line
FOLLOW_UP_QUERY = "current task, project direction, and recent decisions"
FOLLOW_UP_REASON = "Refresh memory before major follow-up work, after compaction/resume, or when task scope changes."
MAX_VERDICT_ROUNDS = 4
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
    damaged: dict[str, str] | None = None,
    ranking: RankingPolicy | None = None,
    cues: dict[str, str] | None = None,
) -> CheckoutPacket:
    """``ranking``: the retrieval profile (2.2 ranking features; default profile when ``None``); attenuated memories
    leave the packet and are counted. ``recent``: the session's latest events (the replay lane of
    ``replay_from_seq`` / ``max_recent_events``), packed as session state and reported in ``evidence`` with the
    lane ``replay``."""
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
    ranking = get_retrieval_profile(ranking)
    attenuated: list[RetrievalHit] = []
    reads = CallReads(log.lines_at)  # this checkout's reads of the log: each line read and verified once
    if query:
        result = retriever.search(
            query,
            sessions=scope,
            k=max(k, purpose.recall_floor) * 2,
            profile=purpose.profile,
            as_of=as_of,
            retrieval_profile=ranking,
            hide_attenuated=True,
            cues=cues,
            read_excluded=False,  # superseded / invalidated hits are only counted here
            reads=reads,
        )
        attenuated = result.attenuated
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

    stable, attenuated_ids = _stable_facts(catalog, scope_set, as_of, ranking.attenuation_floor)
    attenuated_ids |= {hit.entity.id if hit.entity is not None else hit.citation for hit in attenuated}
    reviewed = _reviewed_memory(catalog, scope_set, as_of)
    working = build_working_set(catalog, scope_set, as_of)
    # Read-side verification: every event this packet would cite is re-read from the log and checked against
    # its hash first; one that fails is excluded and named in an integrity_error warning (so answerability
    # cannot be answer_from_memory on it).
    check = reads.check(_cited(hits, [*stable, *reviewed], working, recent or []))
    hits = [hit for hit in hits if check.servable(hit.session, hit.seq, hit.hash)]
    stable = [fact for fact in stable if _servable(check, fact.citation)]
    working = _servable_working(working, check)
    warnings += check.warnings() + _known_damage(log, scope_set, damaged or {})
    evidence = [_evidence(hit) for hit in hits]
    replay = _replay_items([item for item in recent or [] if _servable(check, item.citation)], evidence)
    query_facts = [
        fact
        for fact in _query_facts(hits, catalog, {fact.id for fact in stable}, as_of, reviewed)
        if _servable(check, fact.citation)
    ]
    reviewed = [fact for fact in reviewed if _servable(check, fact.citation)]
    provenance, unresolvable = _provenance(check, [*evidence, *replay, *query_facts, *stable, *reviewed], working)
    if unresolvable:
        warnings.append(f"{unresolvable} citations no longer resolve against the log")
    invalidated = sum(1 for hit in excluded if hit.status == "invalidated")

    context = CheckoutContext(
        query,
        scope_set,
        catalog,
        hits,
        [*stable, *query_facts, *reviewed],
        as_of,
        log,
        evidence_resolves if evidence_resolves is not None else EvidenceCheck(log),
        warnings,
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
    inferred = _inferred_context(catalog, hits)
    if inferred["low_trust"]:  # seed 002: low-trust guidance for inferred graph context
        extension_guidance.append(
            f"{inferred['low_trust']} inferred edge(s) near this context are weakly evidenced (low trust): "
            "treat them as leads to verify, not as memory."
        )
    guidance = _guidance(current_facts, session, extension_guidance, query)

    def quality_of(shown: set[str] | None) -> Quality:
        """The verdict on what the prompt holds (``shown``: its citations; ``None``: everything retrieved)."""
        if not query:
            state = [item for item in [*working.items(), *stable] if shown is None or item.citation in shown]
            return _bootstrap_quality(bool(state), bool(working.items() or stable), warnings)
        in_prompt = [item for item in evidence if shown is None or item.citation in shown]
        facts_shown = sum(1 for fact in current_facts if shown is None or fact.citation in shown)
        left_out = sum(
            1 for item in evidence if item.status in RELEVANT and shown is not None and item.citation not in shown
        )
        return assess(query, in_prompt, facts_shown, len(excluded), warnings, unresolvable, left_out)

    encoder = get_encoding(encoding) if max_tokens is not None else None
    candidates = _candidates(stable, reviewed, working, hits, evidence, purpose) + _replay_candidates(replay)
    # Answerability and every count describe what the packed prompt holds: pack under the guidance of a verdict,
    # judge what was kept, and pack again under the new verdict until the two agree.
    quality = quality_of(None)
    for _ in range(MAX_VERDICT_ROUNDS):
        packing, prompt, prefix, budget_used = _fit(
            candidates, quality, guidance, query, bool(replay), max_tokens, encoder
        )
        shown = {candidate.citation for candidate in packing.kept}
        judged = quality_of(shown) if max_tokens is not None else quality
        if judged == quality:
            break
        quality = judged
    else:
        packing, prompt, prefix, budget_used, quality = _settle(
            packing, quality_of, guidance, query, bool(replay), max_tokens, encoder
        )
    shown = {candidate.citation for candidate in packing.kept}
    evidence = [item for item in evidence if item.citation in shown]
    replay = [item for item in replay if item.citation in shown]
    current_facts = [fact for fact in current_facts if fact.citation in shown]
    reviewed = [fact for fact in reviewed if fact.citation in shown]
    guidance.feedback.payloads = [p for p in guidance.feedback.payloads if p["citation"] in shown]
    working = _trim_working(working, shown)
    provenance = [item for item in provenance if item.citation in shown]

    diagnostics = Diagnostics(
        source_lanes=lane_counts,
        citation_count=len(provenance),  # the citations the prompt shows (each item once)
        current_citation_count=sum(1 for p in provenance if p.resolvable),
        current_fact_count=len(current_facts),
        superseded_contexts_excluded=len(excluded),
        warning_count=len(warnings),
        feedback_recommended=bool(guidance.feedback.payloads),
        inferred_context=inferred,
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
        # seed 003: "checkout diagnostics also include a slot_plan contract" (also under quality, next to the
        # missing slots it explains); null when the question is not composed
        slot_plan=[slot.model_dump() for slot in quality.slot_plan] if quality.slot_plan is not None else None,
        retrieval_profile={
            **ranking.to_dict(),
            "attenuated_excluded": len(attenuated_ids),
            **({"cues": cues, "cue_matched": sum(1 for h in hits if "cue_overlap" in h.boosts)} if cues else {}),
        },
        **extension_blocks,
    )
    retention = Retention(
        log_events=sum(seq for seq, _ in catalog.cursors.values()),
        projected_through={s: c[0] for s, c in sorted(catalog.cursors.items()) if scope_set is None or s in scope_set},
        superseded_excluded=len(excluded) - invalidated,
        invalidated_excluded=invalidated,
        suppressed_by_purpose=suppressed,
        elided_by_budget=len(packing.elided),
        attenuated_excluded=len(attenuated_ids),
        purpose_policy={
            "name": purpose.name,
            "suppressed": suppressed,
            "suppress_event_types": list(purpose.suppress_event_types),
            "suppress_entity_types": list(purpose.suppress_entity_types),
        },
    )
    return CheckoutPacket(
        query=query,
        session=session,
        scope=scope,
        as_of=as_of,
        ref=ref,
        purpose=purpose,
        current_facts=current_facts,
        reviewed_memory=reviewed,
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
    hits: list[RetrievalHit],
    catalog: EntityCatalog,
    stable_ids: set[str],
    as_of: str | None,
    reviewed: list[FactItem],
) -> list[FactItem]:
    """Current facts the question matched (tier 3). An accepted reviewed memory it matched joins ``reviewed``
    instead: it is never a current fact."""
    facts, seen = [], {*stable_ids, *(fact.id for fact in reviewed)}
    for hit in hits:
        entity = hit.entity
        if entity is None or hit.status != "current" or entity.entity_type not in FACT_TYPES or entity.id in seen:
            continue
        seen.add(entity.id)
        if entity.entity_type in REVIEWED_TYPES:
            if admissible(catalog, entity, as_of):
                reviewed.append(_fact(entity, catalog, tier=3, score=hit.score))
            continue
        facts.append(_fact(entity, catalog, tier=3, score=hit.score))
    return facts


def _stable_facts(
    catalog: EntityCatalog, scope: set[str] | None, as_of: str | None, floor: float = 0.0
) -> tuple[list[FactItem], set[str]]:
    """Query-independent tier 1: the most important current decisions and facts, less those below the retrieval
    profile's attenuation ``floor`` (default ranking); returns them and the ids of the attenuated ones."""
    versions = _ranked(catalog, scope, as_of, STABLE_TYPES)
    kept = [v for v in versions if not floor or not attenuation(v, catalog, floor)["attenuated"]]
    return [_fact(version, catalog, tier=1) for version in kept], {v.id for v in versions} - {v.id for v in kept}


def _reviewed_memory(catalog: EntityCatalog, scope: set[str] | None, as_of: str | None) -> list[FactItem]:
    """Query-independent accepted consolidation output (procedures, claims, episodes) that passes the review
    gate: shown labelled non-authoritative, outside the stable tier and the current facts."""
    return [
        _fact(version, catalog, tier=2) for version in _ranked(catalog, scope, as_of, tuple(sorted(REVIEWED_TYPES)))
    ]


def _ranked(
    catalog: EntityCatalog, scope: set[str] | None, as_of: str | None, entity_types: tuple[str, ...]
) -> list[EntityVersion]:
    def admit(version: EntityVersion) -> bool:
        return version.entity_type not in REVIEWED_TYPES or admissible(catalog, version, as_of)

    scoped = sorted(scope if scope is not None else catalog.sessions)
    if as_of is None and reports_epochs(catalog):  # per-session shares, kept until their session changes
        gated = admit if REVIEWED_TYPES.intersection(entity_types) else None  # None: every version is admitted
        ranked = most_important(
            catalog, scoped, entity_types, STABLE_LIMIT, STABLE_LIMIT, gated, scope is None, ADMISSION_READS
        )
    else:
        versions = [
            version
            for session in scoped
            for version in session_candidates(catalog, session, entity_types, STABLE_LIMIT, as_of, admit)
        ]
        ranked = sorted(versions, key=rank_key)[:STABLE_LIMIT]
    return sorted(ranked, key=lambda v: (v.entity_type, v.name, v.id))


def _cited(
    hits: list[RetrievalHit], stable: list[FactItem], working: WorkingSet, recent: list[EvidenceItem]
) -> list[tuple[str, int, str]]:
    """``(session, seq, hash or hash prefix)`` of every event the packet may cite."""
    cited = [(hit.session, hit.seq, hit.hash) for hit in hits]
    citations = [*(fact.citation for fact in stable), *(item.citation for item in working.items())]
    for citation in [*citations, *(item.citation for item in recent)]:
        parsed = parse_citation(citation)
        cited.append((parsed.session, parsed.seq, parsed.hash_prefix))
    for hit in hits:  # a current fact a hit asserted cites its entity version's event
        if hit.entity is not None:
            parsed = parse_citation(hit.entity.citation)
            cited.append((parsed.session, parsed.seq, parsed.hash_prefix))
    return cited


def _servable(check: CitedCheck, citation: str) -> bool:
    parsed = parse_citation(citation)
    return check.servable(parsed.session, parsed.seq, parsed.hash_prefix)


def _servable_working(working: WorkingSet, check: CitedCheck) -> WorkingSet:
    return WorkingSet(
        **{
            name: [item for item in getattr(working, name) if _servable(check, item.citation)]
            for name in WorkingSet.model_fields
        }
    )


def _known_damage(log: EventLog, scope: set[str] | None, damaged: dict[str, str]) -> list[str]:
    """Warnings for what reading the log already excluded in the scope: events that do not match their hash
    (left out of the projection) and sessions that cannot be read past some event."""
    warnings = []
    for session, problems in sorted(log.integrity_problems.items()):
        if scope is None or session in scope:
            warnings += [
                f"integrity_error: session {session} event {seq} excluded: {why}" for seq, why in problems.items()
            ]
    for session, why in sorted(damaged.items()):
        if scope is None or session in scope:
            warnings.append(f"integrity_error: session {session} is damaged, later events are not used: {why}")
    return warnings


def _provenance(check: CitedCheck, items: list[Any], working: WorkingSet) -> tuple[list[ProvenanceItem], int]:
    """Every citation of the packet, parsed, with its event type from the read-side check (all of them were
    checked and the unservable ones excluded before this point)."""
    citations: dict[str, str | None] = {}
    for item in items:
        citations.setdefault(item.citation, getattr(item, "event_type", None))
    for item in working.items():
        citations.setdefault(item.citation, None)
    provenance, unresolvable = [], 0
    for citation, event_type in citations.items():
        parsed = parse_citation(citation)
        envelope = check.envelopes.get((parsed.session, parsed.seq))
        resolvable = envelope is not None and envelope["hash"].startswith(parsed.hash_prefix)
        unresolvable += not resolvable
        provenance.append(
            ProvenanceItem(
                citation=citation,
                session=parsed.session,
                seq=parsed.seq,
                hash_prefix=parsed.hash_prefix,
                event_type=envelope["type"] if resolvable and envelope is not None else event_type,
                resolvable=resolvable,
            )
        )
    return provenance, unresolvable


def _inferred_context(catalog: EntityCatalog, hits: list[RetrievalHit]) -> dict[str, Any]:
    """Seed 002's ``inferred_context``: the inferred edges around the retrieved entities and how far to trust them.

    An edge's trust is its confidence scaled by its coverage: the share of a named (not ``unknown``) inference
    method, Eventloom provenance of the edge (source event seq and hash) and cited evidence (seq and hash) it has
    (trust = confidence x (0.5 + 0.5 x coverage)). Diagnostics only: ranking does not use it.
    """
    edges = {}
    contexts = 0
    for hit in hits:
        if hit.entity is None:
            continue
        near = [e for e in (*catalog.out_edges(hit.entity.key), *catalog.in_edges(hit.entity.key)) if e.inferred]
        contexts += bool(near)
        edges.update((edge.id, edge) for edge in near)
    coverage = {key: _edge_coverage(edge) for key, edge in edges.items()}
    trust = {key: edge.confidence * (0.5 + 0.5 * coverage[key]) for key, edge in edges.items()}
    mean = lambda values: round(sum(values) / len(values), 4) if values else None  # noqa: E731
    return {
        "count": len(edges),
        "context_count": contexts,
        "edge_count": len(edges),
        "relation_labels": sorted({edge.relation_type for edge in edges.values()}),
        "methods": sorted({edge.inference_method for edge in edges.values()}),
        "average_confidence": mean([edge.confidence for edge in edges.values()]),
        "average_trust": mean(list(trust.values())),
        "average_coverage": mean(list(coverage.values())),
        "uncited": sum(1 for edge in edges.values() if not (edge.evidence_seq and edge.evidence_hash)),
        "low_trust": sum(1 for value in trust.values() if value < LOW_TRUST),
    }


def _edge_coverage(edge: Any) -> float:
    factors = (
        bool(edge.inference_method) and edge.inference_method != "unknown",
        bool(edge.source_event_seq and edge.source_event_hash),
        bool(edge.evidence_seq and edge.evidence_hash),
    )
    return sum(factors) / len(factors)


def _bootstrap_quality(has_state: bool, held: bool, warnings: list[str]) -> Quality:
    """``has_state``: the prompt shows cited session state; ``held``: memory holds some (the budget may have
    left it all out)."""
    if held and not has_state:
        return Quality(
            answerability="refresh_recommended",
            confidence=0.2,
            reasons=["bootstrap: session state exists but max_tokens left all of it out"],
            required_action=RequiredAction(
                tool="memory_bootstrap", query="", reason="raise max_tokens: the budget left all session state out"
            ),
        )
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


def _guidance(facts: list[FactItem], session: str | None, extra: list[str], query: str) -> Guidance:
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
        recommended_checkout={  # seed 003: the follow-up checkout (with the reason of the seed's example)
            "tool": "memory_checkout",
            "arguments": {"query": query or FOLLOW_UP_QUERY, **({"session_id": session} if session else {})},
            "reason": FOLLOW_UP_REASON,
        },
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


def _trim_working(working: WorkingSet, shown: set[str]) -> WorkingSet:
    return WorkingSet(
        **{
            name: [item for item in getattr(working, name) if item.citation in shown]
            for name in WorkingSet.model_fields
        }
    )


def _fit(
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
    full = _guidance_lines(quality, guidance)
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


def _settle(
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
        prompt, prefix = render(kept, _guidance_lines(quality, guidance)[:1], query)
        used = text_tokens(encoder, prompt) if encoder else packing.used
        if max_tokens is None or used <= max_tokens or not kept:
            dropped = [c for c in packing.kept if c not in kept]
            return Packing(kept, [*packing.elided, *dropped], used), prompt, prefix, used, quality
        kept.pop()
