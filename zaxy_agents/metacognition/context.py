"""Checkout extension ``metacognition``: the uncertainty signals of the checkout's scope (seed 003 beta.2).

The block counts open known unknowns, confidence assessments (and the claims assessed weak), conflict clusters
among the packet's current facts and open re-verification requests, and lists the ones that bear on this
query. Two of them are guardrails, reported as checkout warnings so the packet can never say
``answer_from_memory`` over them: an open known unknown that matches the question (memory recorded that it
does not know this), and contradicting current claims that the question asks about (the claim's name is in
the question, or one of them is a top hit).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from zaxy_agents.checkout.extensions.context import CheckoutContext
from zaxy_agents.projection.session_memo import MergedMemo, SessionMemo
from zaxy_agents.retrieval.text import Analyzer

from .contracts import AUTHORITY_STATUS, split_claim_key
from .state import (
    OPEN_STATE_TYPES,
    PRIORITY_ORDER,
    WEAK_CONFIDENCE,
    KnownUnknown,
    conflict_clusters,
    merge_open_states,
    open_state,
)

GUIDANCE = (
    "metacognition: use known unknowns, confidence trajectories, conflict clusters and reverify requests as "
    "diagnostic uncertainty signals, not as accepted facts; an open known unknown that matches the question "
    "means memory does not know the answer."
)
MATCH_SHARE = 0.6  # share of a known unknown's question terms the query must contain to match it
SHOWN = 5
TOP_HITS = 2  # a contradiction among the best two hits bears on the question
SCAN = 2000  # most recent versions of each metacognitive type read per session (the tools read them all)
_ANALYZER = Analyzer()
# a session's metacognitive state, re-read only when the session changed (its catalog epoch): a whole-memory
# checkout reads the sessions that changed since the last one
_STATES: SessionMemo[dict[str, Any]] = SessionMemo()
_MERGED: MergedMemo[dict[str, Any]] = MergedMemo()  # the scope's state, kept while no session changed


@lru_cache(maxsize=8192)
def _terms(text: str) -> frozenset[str]:
    return frozenset(_ANALYZER(text))


def _claim_terms(claim_key: str | None) -> frozenset[str]:
    parts = split_claim_key(claim_key) if claim_key is not None else None
    return _terms(parts[1] if parts is not None else claim_key or "")


def matches(item: KnownUnknown, query_terms: set[str]) -> bool:
    """Does this open known unknown bear on the question (its words, or its claim's name, are asked)?"""
    claim = _claim_terms(item.claim_key)
    if claim and claim <= query_terms:
        return True
    terms = _terms(item.question)
    if not terms or not query_terms:
        return False
    return len(terms & query_terms) >= max(1, MATCH_SHARE * len(terms))


def asked(cluster: dict[str, Any], query_terms: set[str], top_hits: set[str]) -> bool:
    """Is a conflict cluster about this question (its claim's name is asked, or a member is a top hit)?"""
    claim = _claim_terms(cluster["claim_key"])
    return bool(claim and claim <= query_terms) or any(m["citation"] in top_hits for m in cluster["members"])


def _scope_state(context: CheckoutContext, sessions: list[str]) -> dict[str, Any]:
    catalog = context.catalog
    if context.as_of is not None:  # the past is read directly (rare; no memo)
        return merge_open_states([open_state(catalog, sessions, context.as_of, SCAN)])
    key = None if context.scope is None else tuple(sessions)

    def merge() -> dict[str, Any]:
        _, merged = _STATES.merged(
            catalog, sessions, lambda s: open_state(catalog, [s], None, SCAN), _combine, types=OPEN_STATE_TYPES
        )
        return merge_open_states([merged] if merged is not None else [])

    # kept until a version of the types open_state reads changes in the scope (an agent's turns do not count)
    return _MERGED.get(catalog, key, merge, None if context.scope is None else sessions, OPEN_STATE_TYPES)


def _combine(earlier: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """Two runs of sessions' :func:`open_state` as one (``earlier`` first), in the same form, so a change in one
    session re-merges its path of a :class:`~zaxy_agents.projection.session_memo.MergeTree`: the lists sorted as
    :func:`merge_open_states` sorts them (stable: ties in session order), and each claim's latest assessment, the
    later session's on equal moments."""
    latest = dict(earlier["assessed"])
    for claim, (moment, value) in later["assessed"].items():
        if claim not in latest or latest[claim][0] <= moment:
            latest[claim] = (moment, value)
    return {
        "unknowns": sorted(earlier["unknowns"] + later["unknowns"], key=lambda item: item.recorded_at, reverse=True),
        "assessed": latest,
        "requests": sorted(
            earlier["requests"] + later["requests"], key=lambda item: PRIORITY_ORDER.get(item["priority"], 1)
        ),
    }


def metacognition(context: CheckoutContext) -> tuple[dict[str, Any], list[str]]:
    catalog = context.catalog
    sessions = sorted(context.scope if context.scope is not None else catalog.sessions)
    state = _scope_state(context, sessions)
    query_terms = set(_ANALYZER(context.query)) if context.query else set()
    top_hits = {hit.citation for hit in context.hits[:TOP_HITS]}
    relevant = [item for item in state["unknowns"] if matches(item, query_terms)]
    clusters = conflict_clusters(
        catalog, sessions, context.as_of, names=[(fact.entity_type, fact.name) for fact in context.facts]
    )
    weak = sorted(claim for claim, value in state["assessed"].items() if value < WEAK_CONFIDENCE)
    for item in relevant:
        context.warnings.append(
            f"open known unknown matches this question: {item.question!r} ({item.citation}); memory recorded that "
            "it does not know this — resolve it (or ask) before answering from memory"
        )
    for cluster in (c for c in clusters if asked(c, query_terms, top_hits)):
        context.warnings.append(
            f"contradicting current claims for {cluster['claim_key']} in "
            f"{', '.join(member['session'] for member in cluster['members'])}"
        )
    block = {
        "known_unknown_count": len(state["unknowns"]),
        "relevant_known_unknowns": [_unknown(item) for item in relevant[:SHOWN]],
        "open_known_unknowns": [_unknown(item) for item in state["unknowns"][:SHOWN]],
        "confidence_assessment_count": len(state["assessed"]),
        "weak_claims": weak[:SHOWN],
        "conflict_cluster_count": len(clusters),
        "conflict_clusters": clusters[:SHOWN],
        "reverify_request_count": len(state["requests"]),
        "reverify_requests": [item for item in state["requests"][:SHOWN]],
        "authority_status": AUTHORITY_STATUS,
    }
    present = state["unknowns"] or state["assessed"] or clusters or state["requests"]
    return block, [GUIDANCE] if present else []


def _unknown(item: KnownUnknown) -> dict[str, Any]:
    return {
        "unknown_id": item.unknown_id,
        "question": item.question,
        "claim_key": item.claim_key,
        "priority": item.priority,
        "citation": item.citation,
    }
