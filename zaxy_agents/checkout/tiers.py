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

import dataclasses
import heapq
import operator
from collections.abc import Callable
from typing import Any

from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.records import EntityVersion
from zaxy_agents.projection.session_memo import MergedMemo, SessionMemo

SCAN = 200  # identities' recent versions read per session and type
# a session's share: its versions as plain tuples of their fields (strings, numbers: the garbage collector stops
# tracking those; a whole memory keeps ~24 per session), ranked by their first four items
_Ranked = tuple[Any, ...]
_PARTIALS: SessionMemo[tuple[_Ranked, ...]] = SessionMemo()
_FIELDS = tuple(field.name for field in dataclasses.fields(EntityVersion))
_MERGED: MergedMemo[list[EntityVersion]] = MergedMemo()


def rank_key(version: EntityVersion) -> tuple[float, str, str, str]:
    return -version.importance, version.entity_type, version.name, version.id


_RANK = operator.itemgetter(0, 1, 2, 3)


def _ranked(version: EntityVersion) -> _Ranked:
    """The version as its :func:`rank_key` followed by its fields (``EntityVersion(*ranked[4:])`` is the version)."""
    return (*rank_key(version), *(getattr(version, name) for name in _FIELDS))


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
    admit: Callable[[EntityVersion], bool] | None,
    whole: bool,
    reads: tuple[str, ...] | None = None,
) -> list[EntityVersion]:
    """The ``limit`` most important current versions (``as_of=None``) across ``sessions`` (sorted; ``whole``: the
    catalog's every session), ordered by :func:`rank_key`; each session's share is kept until it changes.
    ``admit`` must read only its version's own session (the review gate does); ``None`` admits every version, and
    then a session's share is ranked from four columns of its candidates (:meth:`current_ranks`) and only the
    merged ``limit`` versions are read whole (a whole memory has ~24 candidates per session). ``reads``: the
    entity types ``admit`` reads besides the candidate itself (``None``: unknown, so any change of a session
    makes its share stale); the shares and the tier are kept until a version of ``entity_types`` or ``reads``
    changes in their sessions."""
    types = None if admit is not None and reads is None else tuple(sorted({*entity_types, *(reads or ())}))

    def partials(shares: list[str]) -> list[tuple[_Ranked, ...]]:  # read for many sessions at once
        listed_keys = {kind: catalog.first_recent_keys_many(shares, kind, listed, SCAN) for kind in entity_types}
        keys = [key for found in listed_keys.values() for session_keys in found.values() for key in session_keys]
        if admit is None:
            ranks = catalog.current_ranks(keys)
            return [
                tuple(
                    heapq.nsmallest(
                        limit, (ranks[k] for kind in entity_types for k in listed_keys[kind][s] if k in ranks)
                    )
                )
                for s in shares
            ]
        currents = catalog.currents(keys)
        found = (
            [
                v
                for kind in entity_types
                for v in map(currents.__getitem__, listed_keys[kind][s])
                if v is not None and admit(v)
            ]
            for s in shares
        )
        return [tuple(_ranked(v) for v in heapq.nsmallest(limit, candidates, key=rank_key)) for candidates in found]

    def combine(earlier: tuple[_Ranked, ...], later: tuple[_Ranked, ...]) -> tuple[_Ranked, ...]:
        return tuple(heapq.nsmallest(limit, earlier + later, key=_RANK))  # a total order: no ties to keep

    def merge() -> list[EntityVersion]:
        _, merged = _PARTIALS.merged(
            catalog, sessions, lambda s: partials([s])[0], combine, (entity_types, admit is None), partials, types
        )
        if admit is not None:
            return [EntityVersion(*ranked[4:]) for ranked in merged or ()]
        read = catalog.read_versions([ranked[3] for ranked in merged or ()])
        return [read[ranked[3]] for ranked in merged or () if ranked[3] in read]

    key = (entity_types, listed, limit, None if whole else tuple(sessions))
    return list(_MERGED.get(catalog, key, merge, None if whole else sessions, types))
