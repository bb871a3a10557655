"""Which facts a Memory Checkout lists: current facts the question matched, the query-independent stable tier,
and reviewed consolidation output (accepted procedures, claims, episodes, labelled non-authoritative).

Why a module of its own: the tiers are chosen from the catalog alone (tests compare :func:`ranked` with a
reference ranking), before anything is checked against the log or packed into a budget.
"""

from __future__ import annotations

from zaxy_agents.consolidation.acceptance import ADMISSION_READS, admissible
from zaxy_agents.projection.catalog import EntityCatalog, reports_epochs
from zaxy_agents.projection.records import EntityVersion
from zaxy_agents.projection.salience import salience
from zaxy_agents.retrieval.attenuation import attenuation
from zaxy_agents.retrieval.engine import RetrievalHit

from .models import (
    FactItem,
)
from .render import one_line
from .tiers import most_important, rank_key, session_candidates

FACT_TYPES = frozenset(
    {"fact", "decision", "task", "memory_item", "document_chunk", "file", "checkpoint", "procedure", "claim", "episode"}
)
STABLE_TYPES = ("decision", "fact")
STABLE_LIMIT = 12
# Procedures, claims and episodes come from reviewed consolidation: only accepted ones pass the review gate, and
# even then acceptance is a disposition, not a promotion (seed 001): they are listed in ``reviewed_memory``, in a
# section of their own labelled non-authoritative, never among the current facts or in the stable tier.
REVIEWED_TYPES = frozenset({"procedure", "claim", "episode"})


def fact_item(version: EntityVersion, catalog: EntityCatalog, tier: int, score: float = 0.0) -> FactItem:
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


def matched_facts(
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
                reviewed.append(fact_item(entity, catalog, tier=3, score=hit.score))
            continue
        facts.append(fact_item(entity, catalog, tier=3, score=hit.score))
    return facts


def stable_facts(
    catalog: EntityCatalog, scope: set[str] | None, as_of: str | None, floor: float = 0.0
) -> tuple[list[FactItem], set[str]]:
    """Query-independent tier 1: the most important current decisions and facts, less those below the retrieval
    profile's attenuation ``floor`` (default ranking); returns them and the ids of the attenuated ones."""
    versions = ranked(catalog, scope, as_of, STABLE_TYPES)
    kept = [v for v in versions if not floor or not attenuation(v, catalog, floor)["attenuated"]]
    return [fact_item(version, catalog, tier=1) for version in kept], {v.id for v in versions} - {v.id for v in kept}


def reviewed_memory(catalog: EntityCatalog, scope: set[str] | None, as_of: str | None) -> list[FactItem]:
    """Query-independent accepted consolidation output (procedures, claims, episodes) that passes the review
    gate: shown labelled non-authoritative, outside the stable tier and the current facts."""
    return [
        fact_item(version, catalog, tier=2) for version in ranked(catalog, scope, as_of, tuple(sorted(REVIEWED_TYPES)))
    ]


def ranked(
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
