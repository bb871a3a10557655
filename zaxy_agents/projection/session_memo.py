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


class _View(Generic[T]):
    """One scope's partials as the last call saw them: its sessions, their epochs, the values, the catalog's epoch
    then, and (when asked for) the partials merged in a tree."""

    __slots__ = ("_positions", "epochs", "mark", "sessions", "tree", "values")

    def __init__(self, sessions: tuple[str, ...], epochs: list[tuple[int, int]], values: list[T]) -> None:
        self.sessions, self.epochs, self.values = sessions, epochs, values
        self.mark: tuple[int, int] | None = None  # the catalog's journal mark read before these epochs were
        self.tree: MergeTree[T] | None = None
        self._positions: dict[str, int] | None = None

    def positions(self) -> dict[str, int]:
        """Each session's position in the scope (made once per view)."""
        if self._positions is None:
            self._positions = {session: position for position, session in enumerate(self.sessions)}
        return self._positions


class MergeTree(Generic[T]):
    """Partials merged pairwise in a balanced binary tree, in session order (a node merges its left child, the
    earlier sessions, with its right child): after a change in a few sessions only their paths to the root are
    merged again (log2(sessions) merges each) instead of every session's partial. ``combine`` must be associative
    and keep ties in input order (a stable top-k, a sum), so the root equals the merge of the partials in order."""

    def __init__(self, values: list[T], combine: Callable[[T, T], T]) -> None:
        self.combine = combine
        self.size = 1 << max(0, len(values) - 1).bit_length()
        self.nodes: list[T | None] = [None] * self.size + list(values) + [None] * (self.size - len(values))
        for node in range(self.size - 1, 0, -1):
            self._merge(node)

    @property
    def root(self) -> T | None:
        return self.nodes[1]

    def update(self, changed: dict[int, T]) -> None:
        """Replace the partials at the given positions and merge their paths to the root again."""
        parents: set[int] = set()
        for position, value in changed.items():
            self.nodes[self.size + position] = value
            parents.add((self.size + position) // 2)
        while parents and min(parents) >= 1:
            for node in sorted(parents, reverse=True):
                self._merge(node)
            parents = {node // 2 for node in parents if node > 1}

    def _merge(self, node: int) -> None:
        left, right = self.nodes[2 * node], self.nodes[2 * node + 1]
        self.nodes[node] = left if right is None else right if left is None else self.combine(left, right)


class SessionMemo(Generic[T]):
    """One block's per-session partials, per catalog (weakly held: a closed catalog's entries go with it)."""

    def __init__(self, limit: int = SESSIONS, views: int = 8) -> None:
        self.limit, self.views = limit, views
        self._by_catalog: weakref.WeakKeyDictionary[EntityCatalog, _Entries] = weakref.WeakKeyDictionary()
        self._views: weakref.WeakKeyDictionary[EntityCatalog, dict[Hashable, _View[T]]] = weakref.WeakKeyDictionary()

    def many(
        self,
        catalog: EntityCatalog,
        sessions: Iterable[str],
        compute: Callable[[str], T],
        key: Hashable = None,
        fill: Callable[[list[str]], list[T]] | None = None,
        types: tuple[str, ...] | None = None,
    ) -> list[T]:
        """Each session's partial, in order: the one kept under the session's current epoch, else computed
        (kept under the epoch read before it ran, so a commit racing it only makes it stale sooner). ``fill``
        computes the partials of many sessions at once (the first whole-memory checkout of a process reads every
        session: one query per block and type instead of one per session), ``compute`` one session's. ``key``
        tells apart partials of one session that depend on more than the session (the types a tier ranks).
        ``types``: the entity types a partial reads (and nothing else of its session), so only a change of a
        version of those types makes it stale; ``None``: any change of the session does.
        While no session of the catalog changed, the same scope is answered without looking at its sessions;
        after a change, by comparing the scope's epochs with those of the last call. The list returned is
        shared: callers read it, never change it."""
        found = self._view(catalog, tuple(sessions), compute, key, fill, types)
        return found[0].values if found is not None else [compute(session) for session in sessions]

    def merged(
        self,
        catalog: EntityCatalog,
        sessions: Iterable[str],
        compute: Callable[[str], T],
        combine: Callable[[T, T], T],
        key: Hashable = None,
        fill: Callable[[list[str]], list[T]] | None = None,
        types: tuple[str, ...] | None = None,
    ) -> tuple[list[T], T | None]:
        """:meth:`many` and the partials merged by ``combine`` (``None`` for no session), kept in a
        :class:`MergeTree` per scope: a change in one session merges its path to the root again."""
        scope = tuple(sessions)
        found = self._view(catalog, scope, compute, key, fill, types)
        if found is None:
            values = [compute(session) for session in scope]
            return values, MergeTree(values, combine).root
        view, changed = found
        if view.tree is None or changed is None:
            view.tree = MergeTree(view.values, combine)
        elif changed:
            view.tree.update({position: view.values[position] for position in changed})
        return view.values, view.tree.root

    def _view(
        self,
        catalog: EntityCatalog,
        scope: tuple[str, ...],
        compute: Callable[[str], T],
        key: Hashable,
        fill: Callable[[list[str]], list[T]] | None,
        types: tuple[str, ...] | None = None,
    ) -> tuple[_View[T], list[int] | None] | None:
        """The scope's view brought up to date, and the positions whose partial changed (``None``: a new view);
        ``None`` for a catalog without epochs."""
        memo = _entries(self._by_catalog, catalog)
        if memo is None:
            return None
        entries, epochs = memo
        if types is not None:
            key = (key, types)  # an entry's epoch is read over its types: never compared with another reading
        # read before any epoch or partial (a racing commit moves it again, and is journaled after its epochs moved)
        mark = epochs.journal_mark()
        views = self._views.setdefault(catalog, {})
        view = views.get((key, scope))
        if view is not None and view.mark == mark:
            return view, []
        epoch_of = epochs.session_epoch
        changed = epochs.changed_since(view.mark, types) if view is not None and view.mark is not None else None
        if view is not None and changed is not None:  # only the sessions a commit since the view's mark touched
            current = list(view.epochs)
            positions = view.positions()
            for position in sorted(positions[session] for session in changed if session in positions):
                session = scope[position]
                current[position] = epoch_of(session) if types is None else epoch_of(session, types)
        else:
            current = (
                [epoch_of(session) for session in scope]
                if types is None
                else [epoch_of(session, types) for session in scope]
            )
        if view is not None and view.epochs == current:
            view.mark = mark
            return view, []
        if view is None:
            values: list[T | None] = []
            stale: list[int] = []
            for position, (session, epoch) in enumerate(zip(scope, current, strict=True)):
                kept = entries.get((session, key))
                values.append(kept[1] if kept is not None and kept[0] == epoch else None)
                if kept is None or kept[0] != epoch:
                    stale.append(position)
        else:
            values = list(view.values)
            stale = [
                position for position, (old, new) in enumerate(zip(view.epochs, current, strict=True)) if old != new
            ]
        if stale:
            missing = [scope[position] for position in stale]
            if fill is None:
                computed = [compute(session) for session in missing]
            else:  # in chunks: what a fill reads of each session before reducing it stays bounded
                computed = [value for at in range(0, len(missing), FILL) for value in fill(missing[at : at + FILL])]
            for position, value in zip(stale, computed, strict=True):
                entry_key = (scope[position], key)
                if entry_key not in entries and len(entries) >= self.limit:
                    entries.pop(next(iter(entries)))
                entries[entry_key] = (current[position], value)
                values[position] = value
        if view is None:
            if len(views) >= self.views:
                views.pop(next(iter(views)))
            view = views[(key, scope)] = _View(scope, current, cast(list[T], values))
            view.mark = mark
            return view, None
        view.epochs, view.values, view.mark = current, cast(list[T], values), mark
        return view, stale


class MergedMemo(Generic[T]):
    """A whole block merged from its partials, kept while no session of the catalog changed (the catalog's
    :attr:`~zaxy_agents.projection.catalog.SessionEpochs.epoch`) and asked for the same ``key`` (scope).

    With ``types`` (the entity types the block reads, and nothing else) only a change of a version of those
    types counts; with ``sessions`` (the block reads those sessions only), only a change in one of them: after
    any other change the scope's epochs are compared with those the value was computed under."""

    def __init__(self, limit: int = 8) -> None:
        self.limit = limit
        self._by_catalog: weakref.WeakKeyDictionary[EntityCatalog, _Entries] = weakref.WeakKeyDictionary()

    def get(
        self,
        catalog: EntityCatalog,
        key: Hashable,
        compute: Callable[[], T],
        sessions: Iterable[str] | None = None,
        types: tuple[str, ...] | None = None,
    ) -> T:
        memo = _entries(self._by_catalog, catalog)
        if memo is None:
            return compute()
        entries, epochs = memo
        entry_key = key if types is None else (key, types)
        epoch = epochs.epoch if types is None else epochs.types_epoch(types)  # read before computing
        found = entries.get(entry_key)
        if found is not None and found[0] == epoch:
            return found[1][1]
        scoped = None
        if sessions is not None:
            epoch_of = epochs.session_epoch
            scoped = tuple(epoch_of(session, types) for session in sessions)
            if found is not None and found[1][0] == scoped:  # what changed is outside the scope
                entries[entry_key] = (epoch, found[1])
                return found[1][1]
        value = compute()
        if found is None and len(entries) >= self.limit:
            entries.pop(next(iter(entries)))
        entries[entry_key] = (epoch, (scoped, value))
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
