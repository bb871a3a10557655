"""The query-independent tiers of a checkout (stable facts, reviewed memory): the most important current
versions of some types across a scope, from per-session partials kept until their session changes.

Each session contributes the current versions of its ``listed`` most recently asserted identities per type (the
reviewed types only when the review gate admits them); the tier is the ``limit`` most important of all of them,
ordered by (-importance, entity_type, name, id), a total order. So the tier is among each session's own ``limit``
most important candidates: a session keeps those (:class:`~zaxy_agents.projection.session_memo.SessionMemo`,
re-read when its catalog epoch moves) and a whole memory merges ``limit`` entries per session instead of reading
every session's identities at every checkout.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.records import EntityVersion
from zaxy_agents.projection.session_memo import MergedMemo, SessionMemo

SCAN = 200  # identities' recent versions read per session and type
_PARTIALS: SessionMemo[list[EntityVersion]] = SessionMemo()
_MERGED: MergedMemo[list[EntityVersion]] = MergedMemo()


def rank_key(version: EntityVersion) -> tuple[float, str, str, str]:
    return -version.importance, version.entity_type, version.name, version.id


def session_candidates(
    catalog: EntityCatalog,
    session: str,
    entity_types: tuple[str, ...],
    listed: int,
    as_of: str | None,
    admit: Callable[[EntityVersion], bool],
) -> list[EntityVersion]:
    """The versions one session offers the tier: the version at ``as_of`` of its ``listed`` most recent
    identities per type that ``admit`` lets through, in type order."""
    found = []
    for entity_type in entity_types:
        for key in catalog.recent_keys(session, entity_type, scan=SCAN)[:listed]:
            version = catalog.version_at(key, as_of)
            if version is not None and admit(version):
                found.append(version)
    return found


def most_important(
    catalog: EntityCatalog,
    sessions: list[str],
    entity_types: tuple[str, ...],
    listed: int,
    limit: int,
    admit: Callable[[EntityVersion], bool],
    whole: bool,
) -> list[EntityVersion]:
    """The ``limit`` most important current versions (``as_of=None``) across ``sessions`` (sorted; ``whole``: the
    catalog's every session), ordered by :func:`rank_key`; each session's share is kept until it changes.
    ``admit`` must read only its version's own session (the review gate does)."""

    def partials(shares: list[str]) -> list[list[EntityVersion]]:  # read for many sessions at once
        listed_keys = {kind: catalog.first_recent_keys_many(shares, kind, listed, SCAN) for kind in entity_types}
        currents = catalog.currents([key for keys in listed_keys.values() for found in keys.values() for key in found])
        found = (
            [
                v
                for kind in entity_types
                for v in map(currents.__getitem__, listed_keys[kind][s])
                if v is not None and admit(v)
            ]
            for s in shares
        )
        return [heapq.nsmallest(limit, candidates, key=rank_key) for candidates in found]

    def merge() -> list[EntityVersion]:
        shares = _PARTIALS.many(catalog, sessions, lambda s: partials([s])[0], entity_types, partials)
        return heapq.nsmallest(limit, itertools.chain.from_iterable(shares), key=rank_key)

    return list(_MERGED.get(catalog, (entity_types, listed, limit, None if whole else tuple(sessions)), merge))
