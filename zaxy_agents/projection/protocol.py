"""The graph-store contract every projection backend implements (Kuzu, PostgreSQL, in-memory, third-party).

Hot reads (checkout, retrieval) are served from the in-memory :class:`EntityCatalog` and retrieval indexes;
the store is the durable, queryable graph of record: it takes batches with their cursors atomically, answers
graph and temporal queries, and produces the canonical dump behind the rebuild digest.

Stores inherit this class explicitly. ``shared`` names the one optional capability: a shared store (many
processes write it) also answers :meth:`session_state`, and its :meth:`apply` reports per-session outcomes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

from .planner import KeyState, ProjectionBatch
from .records import EntityVersion, ProjectionStats, TraversalHit


class EntityWords(Protocol):
    """Which entity versions may hold a word (the catalog's entity keyword index): a filter a store that keeps its
    entity text out of its own files reads before fetching text (see :meth:`ProjectionStore.attach_entity_words`)."""

    unindexed_types: frozenset[str]  # entity types the index never holds (a store scans them)

    def versions_with(self, words: Sequence[str], sessions: Sequence[str] | None) -> set[str] | None:
        """Ids of indexed versions (of ``sessions``; ``None``: all) whose name or summary may hold one of ``words``
        (case-folded ``\\w+`` words): every one that does, maybe more; ``None`` when the index cannot tell."""


def version_order(version: EntityVersion) -> tuple[int, str, str]:
    """The total order of the entity versions a store lists (:meth:`ProjectionStore.entity_history`,
    :meth:`ProjectionStore.entities_as_of`): source event seq, then session, then version id (strings in code-point
    order). Seqs restart in every session, so versions of different sessions, and the versions one event projects,
    tie on the seq; the session and the id make the order total, so a ``limit`` that cuts inside a tie keeps the
    same versions on every backend and every rebuild."""
    return (version.source_event_seq, version.session, version.id)


@runtime_checkable
class ProjectionStore(Protocol):
    backend: ClassVar[str]  # kuzu | postgresql | memory | ...
    shared: ClassVar[bool] = False  # True when other processes write to the same store (cursors may be ahead)

    def apply(self, batch: ProjectionBatch) -> dict[str, str] | None:
        """Write a batch and its per-session cursors atomically.

        A shared store writes only the sessions whose batch starts at its stored cursor and returns each
        session's outcome (``written``, ``skipped`` when another worker already wrote it, ``behind`` when the
        projector must continue from the store's cursor); a private store writes everything and returns None.
        """

    def cursors(self) -> dict[str, tuple[int, str]]:
        """Last projected (seq, hash) per session."""

    def migrations(self) -> list[dict[str, Any]]: ...

    def entity_history(
        self, name: str, entity_type: str | None = None, session: str | None = None
    ) -> list[EntityVersion]:
        """Every version of the identities with this name (optionally of one type / session), in
        :func:`version_order` (oldest first within a session)."""

    def entities_as_of(self, moment: str, *, session: str | None = None, limit: int = 1000) -> list[EntityVersion]:
        """The first ``limit`` versions valid at ``moment`` (``valid_from <= t < valid_to``) in :func:`version_order`:
        the same versions, in the same order, on every store and after every rebuild of the same log."""

    def traverse(
        self,
        start_keys: list[str],
        *,
        depth: int = 2,
        relation_types: list[str] | None = None,
        as_of: str | None = None,
        limit: int = 200,
    ) -> list[TraversalHit]: ...

    def search_entities(
        self, text: str, *, session: str | None = None, as_of: str | None = None, limit: int = 20
    ) -> list[tuple[EntityVersion, float]]:
        """Keyword search over entity versions valid at ``as_of`` (now by default), best first."""

    def stats(self) -> ProjectionStats: ...

    def dump_lines(self) -> Iterator[str]:
        """Canonical sorted lines of every node and edge (wall-clock fields excluded)."""

    def close(self) -> None: ...

    # ------------------------------------------------------------------ optional
    def reset(self) -> None:
        """Empty the store in place, keeping it open (``zaxy reproject``)."""
        raise NotImplementedError(f"{type(self).__name__} cannot be emptied in place")

    def session_state(self, session: str) -> Any:
        """Shared stores only: the stored cursor, identities and sources of one session (see store_catchup)."""
        raise NotImplementedError(f"{type(self).__name__} is not a shared store")

    # A private store (``shared = False``) is caught up from the log by re-planning from its own state:
    def key_states(self, keys: Iterable[str]) -> dict[str, KeyState]:
        """Private stores: current version and closed flag of each identity the store holds."""
        raise NotImplementedError(f"{type(self).__name__} cannot be continued from its own state")

    def sources_present(self, ids: Iterable[str]) -> set[str]:
        """Private stores: which of these source ids the store holds."""
        raise NotImplementedError(f"{type(self).__name__} cannot be continued from its own state")

    def typed_labels(self) -> set[str]:
        """The typed relation labels the store has tables for."""
        raise NotImplementedError(f"{type(self).__name__} does not list its relation labels")

    def checkpoint(self) -> None:
        """Make what was written durable in the store's own files (default: nothing to do)."""

    @contextlib.contextmanager
    def spanning_transaction(self) -> Iterator[Callable[[], None]]:
        """The batches this thread applies inside commit together when it ends (rolled back, with their cursors,
        if it raises); it yields ``commit()``, which commits what was applied so far and goes on in a new
        transaction. For a writer that applies many batches in a row (a graph catching up from the log), where one
        commit per batch costs the store more than the rows (embedded Kuzu). Default: each apply() commits on its
        own, and ``commit()`` does nothing."""
        yield lambda: None

    def attach_texts(self, texts: Callable[[Sequence[str]], dict[str, tuple[str, str]]]) -> None:
        """Where to read entity versions' ``summary`` and ``properties`` (JSON) by version id: the catalog, which
        holds the same versions. A store that keeps that text out of its own files (embedded Kuzu) reads it here;
        default: the store holds its text, nothing to attach."""

    def attach_entity_words(self, words: EntityWords) -> None:
        """Where :meth:`search_entities` learns which versions may match before reading their text from the
        catalog (:meth:`attach_texts`); default: the store searches its own text, nothing to attach."""

    # A store that can report and stop a long write (``zaxy reproject``'s bar and Ctrl-C):
    rows_applied: int = 0  # rows the apply() in progress has written so far (0 when idle)

    def interrupt(self) -> None:
        """From any thread: make the apply() or query in progress fail soon (its transaction rolls back), and
        every later one until :meth:`resume`. Default: nothing to interrupt (the write finishes first)."""

    def resume(self) -> None:
        """Accept writes and queries again after :meth:`interrupt`."""
