"""What a Memory Checkout cites, and whether the log still backs it: the events to re-read, which citations are
servable, the damage reading the log already found, and the packet's provenance list.

Why a module of its own: honest memory serves nothing it cannot verify; these are the checks every item of a
packet passes through, apart from how items are chosen (:mod:`.facts`) or packed (:mod:`.packing`).
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.integrity import CitedCheck
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.retrieval.engine import RetrievalHit

from .models import (
    EvidenceItem,
    FactItem,
    ProvenanceItem,
    WorkingSet,
)


def cited_events(
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


def servable(check: CitedCheck, citation: str) -> bool:
    parsed = parse_citation(citation)
    return check.servable(parsed.session, parsed.seq, parsed.hash_prefix)


def servable_working(working: WorkingSet, check: CitedCheck) -> WorkingSet:
    return WorkingSet(
        **{
            name: [item for item in getattr(working, name) if servable(check, item.citation)]
            for name in WorkingSet.model_fields
        }
    )


def known_damage(log: EventLog, scope: set[str] | None, damaged: dict[str, str]) -> list[str]:
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


def provenance_of(check: CitedCheck, items: list[Any], working: WorkingSet) -> tuple[list[ProvenanceItem], int]:
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
