"""Assemble a Memory Checkout packet from the retriever, the catalog and the log.

Order of work: purpose policy -> retrieval (all lanes, superseded kept aside and counted) -> suppression ->
current facts, evidence, working set, stable tier -> provenance (every citation re-resolved against the log)
-> quality -> guidance -> budgeted rendering -> diagnostics. Extensions (causal context, consolidation candidates;
see :mod:`.extensions`) add diagnostics blocks and guidance lines; the caller passes the list. This module keeps
that order of work; the steps are in :mod:`.facts` (which facts), :mod:`.cited` (checked against the log),
:mod:`.guidance` (the advice) and :mod:`.packing` (the budget).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from zaxy_agents.eventloom.evidence import EvidenceCheck
from zaxy_agents.eventloom.integrity import CallReads
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.retrieval.engine import RetrievalHit, Retriever
from zaxy_agents.retrieval.ranking import RankingPolicy, get_retrieval_profile

from .answerability import RELEVANT, assess
from .budget import elided_summary
from .cited import cited_events, known_damage, provenance_of, servable, servable_working
from .extensions.context import CheckoutContext, Extension
from .facts import matched_facts, reviewed_memory, stable_facts
from .guidance import bootstrap_quality, build_guidance, inferred_context
from .models import (
    CheckoutPacket,
    Diagnostics,
    EvidenceItem,
    PurposePolicy,
    Quality,
    Retention,
)
from .packing import evidence_item, fit, packet_candidates, replay_candidates, replay_items, settle, trim_working
from .purpose import EMPHASIS_BOOST
from .render import prefix_digest
from .tokens import get_encoding
from .working_set import build_working_set

MAX_VERDICT_ROUNDS = 4


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

    stable, attenuated_ids = stable_facts(catalog, scope_set, as_of, ranking.attenuation_floor)
    attenuated_ids |= {hit.entity.id if hit.entity is not None else hit.citation for hit in attenuated}
    reviewed = reviewed_memory(catalog, scope_set, as_of)
    working = build_working_set(catalog, scope_set, as_of)
    # Read-side verification: every event this packet would cite is re-read from the log and checked against
    # its hash first; one that fails is excluded and named in an integrity_error warning (so answerability
    # cannot be answer_from_memory on it).
    check = reads.check(cited_events(hits, [*stable, *reviewed], working, recent or []))
    hits = [hit for hit in hits if check.servable(hit.session, hit.seq, hit.hash)]
    stable = [fact for fact in stable if servable(check, fact.citation)]
    working = servable_working(working, check)
    warnings += check.warnings() + known_damage(log, scope_set, damaged or {})
    evidence = [evidence_item(hit) for hit in hits]
    replay = replay_items([item for item in recent or [] if servable(check, item.citation)], evidence)
    query_facts = [
        fact
        for fact in matched_facts(hits, catalog, {fact.id for fact in stable}, as_of, reviewed)
        if servable(check, fact.citation)
    ]
    reviewed = [fact for fact in reviewed if servable(check, fact.citation)]
    provenance, unresolvable = provenance_of(check, [*evidence, *replay, *query_facts, *stable, *reviewed], working)
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
    inferred = inferred_context(catalog, hits)
    if inferred["low_trust"]:  # seed 002: low-trust guidance for inferred graph context
        extension_guidance.append(
            f"{inferred['low_trust']} inferred edge(s) near this context are weakly evidenced (low trust): "
            "treat them as leads to verify, not as memory."
        )
    guidance = build_guidance(current_facts, session, extension_guidance, query)

    def quality_of(shown: set[str] | None) -> Quality:
        """The verdict on what the prompt holds (``shown``: its citations; ``None``: everything retrieved)."""
        if not query:
            state = [item for item in [*working.items(), *stable] if shown is None or item.citation in shown]
            return bootstrap_quality(bool(state), bool(working.items() or stable), warnings)
        in_prompt = [item for item in evidence if shown is None or item.citation in shown]
        facts_shown = sum(1 for fact in current_facts if shown is None or fact.citation in shown)
        left_out = sum(
            1 for item in evidence if item.status in RELEVANT and shown is not None and item.citation not in shown
        )
        return assess(query, in_prompt, facts_shown, len(excluded), warnings, unresolvable, left_out)

    encoder = get_encoding(encoding) if max_tokens is not None else None
    candidates = packet_candidates(stable, reviewed, working, hits, evidence, purpose) + replay_candidates(replay)
    # Answerability and every count describe what the packed prompt holds: pack under the guidance of a verdict,
    # judge what was kept, and pack again under the new verdict until the two agree.
    quality = quality_of(None)
    for _ in range(MAX_VERDICT_ROUNDS):
        packing, prompt, prefix, budget_used = fit(
            candidates, quality, guidance, query, bool(replay), max_tokens, encoder
        )
        shown = {candidate.citation for candidate in packing.kept}
        judged = quality_of(shown) if max_tokens is not None else quality
        if judged == quality:
            break
        quality = judged
    else:
        packing, prompt, prefix, budget_used, quality = settle(
            packing, quality_of, guidance, query, bool(replay), max_tokens, encoder
        )
    shown = {candidate.citation for candidate in packing.kept}
    evidence = [item for item in evidence if item.citation in shown]
    replay = [item for item in replay if item.citation in shown]
    current_facts = [fact for fact in current_facts if fact.citation in shown]
    reviewed = [fact for fact in reviewed if fact.citation in shown]
    guidance.feedback.payloads = [p for p in guidance.feedback.payloads if p["citation"] in shown]
    working = trim_working(working, shown)
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
