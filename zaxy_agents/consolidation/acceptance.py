"""The review gate on the read side: which reviewed memories a checkout may show as stable memory.

Ordinary memory (no review metadata) is unaffected. Memory that came out of consolidation is admitted only
when (1) it is labelled accepted, (2) its candidate's disposition *at the checkout's time* is still
``accepted`` and (3) that candidate was created by a real ``consolidation.candidate.created`` event in the
same session with the cited hash, type and title. So a pending, rejected, revoked or forged acceptance never
reaches tier 1, even if someone appends a review event by hand.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.model import entity_key
from zaxy_agents.projection.records import EntityVersion

from .contracts import CANDIDATE_ENTITY, CANDIDATE_EVENT

# The entity types :func:`admissible` reads besides the version it judges (its candidate, in the same session): a
# memo of admitted versions is exact while no version of these types or of the judged ones changes.
ADMISSION_READS = (CANDIDATE_ENTITY,)

REVIEW_KEYS = ("review_status", "authority_status", "candidate_id")


def is_reviewed_memory(properties: dict[str, Any]) -> bool:
    return any(key in properties for key in REVIEW_KEYS)


def admissible(catalog: EntityCatalog, version: EntityVersion, as_of: str | None = None) -> bool:
    """May ``version`` appear as current memory in a checkout at ``as_of``?"""
    properties = version.properties
    if not is_reviewed_memory(properties):
        return True
    return accepted_candidate(catalog, version, properties, as_of) is not None


def accepted_candidate(
    catalog: EntityCatalog, version: EntityVersion, properties: dict[str, Any], as_of: str | None
) -> EntityVersion | None:
    """The candidate creation version backing an accepted memory, or ``None`` when the gate says no."""
    if properties.get("review_status") != "accepted" or properties.get("authority_status") != "non_authoritative":
        return None
    identifier, event = properties.get("candidate_id"), properties.get("candidate_event")
    if not isinstance(identifier, str) or not isinstance(event, dict) or event.get("session") != version.session:
        return None
    seq = event.get("seq")
    if not isinstance(seq, int):
        return None
    key = entity_key(version.session, CANDIDATE_ENTITY, identifier)
    state = catalog.version_at(key, as_of)
    if state is None or state.properties.get("review_status") != "accepted":
        return None
    for creation in catalog.event_versions(version.session, seq):
        if (
            creation.key == key
            and creation.source_event_type == CANDIDATE_EVENT
            and creation.source_event_hash == event.get("hash")
            and creation.properties.get("candidate_type") == version.entity_type
            and creation.properties.get("title") == version.name
        ):
            return creation
    return None
