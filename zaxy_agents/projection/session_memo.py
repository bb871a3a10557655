"""Per-session partial results of whole-memory blocks, kept while the session's catalog epoch holds.

A checkout without a session or scope reads every session of the memory: its working set, stable and reviewed
tiers, metacognitive state and counts are each the merge of one partial result per session. A session's partial
depends only on that session's catalog rows, so it is computed once and reused until the catalog reports a change
of that session (:class:`~zaxy_agents.projection.catalog.SessionEpochs`): a whole-memory checkout then reads the
sessions that changed since the last one, and merges the others' partials from memory.

Exact by construction: the epoch moves on every commit that creates, changes or closes a version of the session
and whenever the catalog drops its caches (an erasure, a reset, another process's commit), which are the events
that invalidate the catalog's own per-session lists. A partial is stored under the epoch read *before* it was
computed, so a commit racing the computation only makes it stale sooner.

Memory bound: at most ``limit`` sessions per block (default :data:`SESSIONS`), oldest first out; each entry holds
what the block keeps of one session (a few versions, a few counters), never a session's whole history.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Generic, TypeVar, cast

from .catalog import EntityCatalog, SessionEpochs

T = TypeVar("T")
SESSIONS = 50_000  # sessions kept per block and catalog (a whole memory of 1M events has ~1,000)
FILL = 100  # sessions per call of a block's bulk fill (its reads of that many sessions are in memory at once)
_Entries = dict[Hashable, tuple[tuple[int, int], Any]]
_UNSUPPORTED: _Entries = {}  # the marker of a catalog without epochs (never written)


class SessionMemo(Generic[T]):
    """One block's per-session partials, per catalog (weakly held: a closed catalog's entries go with it)."""

    def __init__(self, limit: int = SESSIONS) -> None:
        self.limit = limit
        self._by_catalog: weakref.WeakKeyDictionary[EntityCatalog, _Entries] = weakref.WeakKeyDictionary()

    def many(
        self,
        catalog: EntityCatalog,
        sessions: Iterable[str],
        compute: Callable[[str], T],
        key: Hashable = None,
        fill: Callable[[list[str]], list[T]] | None = None,
    ) -> list[T]:
        """Each session's partial, in order: the one kept under the session's current epoch, else computed
        (kept under the epoch read before it ran, so a commit racing it only makes it stale sooner). ``fill``
        computes the partials of many sessions at once (the first whole-memory checkout of a process reads every
        session: one query per block and type instead of one per session), ``compute`` one session's. ``key``
        tells apart partials of one session that depend on more than the session (the types a tier ranks)."""
        memo = _entries(self._by_catalog, catalog)
        if memo is None:
            return [compute(session) for session in sessions]
        entries, epochs = memo
        epoch_of = epochs.session_epoch
        found: list[T | None] = []
        stale: list[tuple[int, str, tuple[int, int]]] = []  # (position, session, epoch read before computing)
        for session in sessions:
            epoch = epoch_of(session)
            kept = entries.get((session, key))
            if kept is not None and kept[0] == epoch:
                found.append(kept[1])
            else:
                stale.append((len(found), session, epoch))
                found.append(None)
        if stale:
            missing = [session for _, session, _ in stale]
            if fill is None:
                values = [compute(session) for session in missing]
            else:  # in chunks: what a fill reads of each session before reducing it stays bounded
                values = [value for at in range(0, len(missing), FILL) for value in fill(missing[at : at + FILL])]
            for (position, session, epoch), value in zip(stale, values, strict=True):
                entry_key = (session, key)
                if entry_key not in entries and len(entries) >= self.limit:
                    entries.pop(next(iter(entries)))
                entries[entry_key] = (epoch, value)
                found[position] = value
        return cast(list[T], found)


class MergedMemo(Generic[T]):
    """A whole block merged from its partials, kept while no session of the catalog changed (the catalog's
    :attr:`~zaxy_agents.projection.catalog.SessionEpochs.epoch`) and asked for the same ``key`` (scope)."""

    def __init__(self, limit: int = 8) -> None:
        self.limit = limit
        self._by_catalog: weakref.WeakKeyDictionary[EntityCatalog, _Entries] = weakref.WeakKeyDictionary()

    def get(self, catalog: EntityCatalog, key: Hashable, compute: Callable[[], T]) -> T:
        memo = _entries(self._by_catalog, catalog)
        if memo is None:
            return compute()
        entries, epochs = memo
        epoch = epochs.epoch
        found = entries.get(key)
        if found is not None and found[0] == epoch:
            return found[1]
        value = compute()
        if found is None and len(entries) >= self.limit:
            entries.pop(next(iter(entries)))
        entries[key] = (epoch, value)
        return value


def _entries(
    by_catalog: weakref.WeakKeyDictionary[EntityCatalog, _Entries], catalog: EntityCatalog
) -> tuple[_Entries, SessionEpochs] | None:
    """The memo of ``catalog`` with the catalog seen as :class:`SessionEpochs`, or ``None`` when it reports no
    epochs (the protocol check runs once per catalog: a runtime ``isinstance`` against a protocol costs more than
    the lookup it guards, so later calls trust the entry kept for it)."""
    entries = by_catalog.get(catalog)
    if entries is None:
        entries = {} if isinstance(catalog, SessionEpochs) else _UNSUPPORTED
        by_catalog[catalog] = entries
    return None if entries is _UNSUPPORTED else (entries, cast(SessionEpochs, catalog))
