"""The catalog: what hot reads need from the projection, read where it lies (``derived.sqlite``).

Every entity version with its validity, the current version of each identity, names, key-level adjacency,
feedback and the projection cursors. Readers (retrieval lanes, checkout, causal, consolidation, lifecycle...)
depend on this protocol only; the implementation (:class:`zaxy_agents.projection.sqlite_catalog.SqliteCatalog`)
queries the on-disk tables with small caches, so nothing here is ever loaded whole into memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .planner import KeyState
from .records import EntityVersion, RelationRecord


@dataclass(slots=True)
class FeedbackAggregate:
    positive: int = 0
    negative: int = 0
    weight: float = 0.0
    last_timestamp: str = ""


class EntityCatalog(Protocol):
    """Read interface of the projection catalog (versions, identities, names, adjacency, feedback, cursors)."""

    # identities and versions
    def version(self, version_id: str) -> EntityVersion | None: ...

    def versions(self, version_ids: Sequence[str]) -> dict[str, EntityVersion | None]:
        """:meth:`version` of many ids at once (one read for those not cached)."""

    def version_sources(self, version_ids: Sequence[str]) -> dict[str, tuple[str, str, int, str]]:
        """``(key, session, seq, valid_from)`` of the versions found (absent ids are left out), without whole rows."""

    def version_key(self, version_id: str) -> str | None:
        """The identity (key) of one version, ``None`` when absent."""

    def texts(self, version_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """``(summary, properties JSON)`` of the versions found, in bulk (what the embedded graph does not store)."""

    def key_state(self, key: str) -> KeyState | None: ...

    def has_key(self, key: str) -> bool: ...

    def current(self, key: str) -> EntityVersion | None: ...

    def latest(self, key: str) -> EntityVersion | None:
        """The identity's latest version, current or closed."""

    def version_at(self, key: str, moment: str | None) -> EntityVersion | None:
        """The version of ``key`` valid at ``moment`` (``None`` = now)."""

    def is_current(self, version_id: str) -> bool: ...

    def history(self, key: str) -> list[EntityVersion]:
        """Every version of one identity, in assertion order (oldest first)."""

    def event_versions(self, session: str, seq: int) -> list[EntityVersion]:
        """The versions one event created, in planning order."""

    def events_versions(self, keys: Sequence[tuple[str, int]]) -> dict[tuple[str, int], list[EntityVersion]]:
        """:meth:`event_versions` of many events at once (one read per session for those not cached)."""

    def recent_keys(self, session: str, entity_type: str, scan: int = 500) -> list[str]:
        """Identities of one type in one session, most recently asserted first (bounded scan, no duplicates)."""

    def recent_versions(self, session: str, entity_type: str, scan: int, as_of: str | None) -> list[EntityVersion]:
        """``version_at(key, as_of)`` of each of :meth:`recent_keys` that has one, in the same order."""

    def recent_heads(self, session: str, entity_type: str, scan: int) -> list[tuple[str, str, int, str | None]]:
        """``(id, valid_from, seq, source_path)`` of what ``recent_versions(session, entity_type, scan, None)``
        returns, in the same order, without reading the versions' text (a caller keeps a few of them)."""

    def recent_versions_many(
        self, sessions: Sequence[str], entity_type: str, scan: int, containing: Sequence[str] = ()
    ) -> dict[str, list[EntityVersion]]:
        """``recent_versions(session, entity_type, scan, None)`` of each session (every one a key), read at once;
        with ``containing``, only those whose summary or properties JSON holds one of these strings."""

    def recent_heads_many(
        self, sessions: Sequence[str], entity_type: str, scan: int
    ) -> dict[str, list[tuple[str, str, int, str | None]]]:
        """:meth:`recent_heads` of each session (every one a key), read at once."""

    def first_recent_keys_many(
        self, sessions: Sequence[str], entity_type: str, first: int, scan: int
    ) -> dict[str, list[str]]:
        """``recent_keys(session, entity_type, scan)[:first]`` of each session, reading only as far as needed."""

    def current_ranks(self, keys: Sequence[str]) -> dict[str, tuple[float, str, str, str]]:
        """``(-importance, entity_type, name, id)`` of the current version of each open identity among ``keys``."""

    def currents(self, keys: Sequence[str]) -> dict[str, EntityVersion | None]:
        """:meth:`current` of many identities at once."""

    def read_versions(self, version_ids: Sequence[str]) -> dict[str, EntityVersion]:
        """The versions found among ``version_ids``, read at once and not cached (bulk fills)."""

    def type_keys(self, session: str, entity_type: str) -> list[str]:
        """Every identity of one type in one session, in order of first assertion."""

    def keys_named(self, name: str) -> set[str]: ...

    def keys_named_many(self, names: Sequence[str]) -> dict[str, set[str]]:
        """:meth:`keys_named` of many names at once (one read for those not cached)."""

    def session_keys(
        self,
        session: str,
        *,
        entity_type: str | None = None,
        contains: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[str]:
        """Identities of one session (of one type; whose normalised name holds ``contains``), most recently
        asserted first: a page of what the session knows, for browsing (the Memory Inspector)."""

    def entity_type_counts(self, session: str) -> dict[str, int]:
        """How many identities each entity type has in one session."""

    # graph
    def out_edges(self, key: str) -> list[RelationRecord]: ...

    def in_edges(self, key: str) -> list[RelationRecord]: ...

    def degree(self, key: str) -> int: ...

    def neighbour_keys(self, key: str) -> list[tuple[str, float]]:
        """``(identity at the other end, confidence)`` of the identity's relations: its out-edges' targets, then its
        in-edges' sources, each in :meth:`out_edges` / :meth:`in_edges` order, an end whose version is not in the
        catalog left out (what a graph walk reads)."""
        ends = [(edge.target_id, edge.confidence) for edge in self.out_edges(key)]
        ends += [(edge.source_id, edge.confidence) for edge in self.in_edges(key)]
        located = self.version_sources([other for other, _ in ends])
        return [(located[other][0], confidence) for other, confidence in ends if other in located]

    def inferred_edges(self) -> list[RelationRecord]: ...

    # aggregates
    def feedback(self, key: str) -> FeedbackAggregate | None: ...

    @property
    def cursors(self) -> dict[str, tuple[int, str]]: ...

    @property
    def sessions(self) -> list[str]: ...

    @property
    def latest_timestamp(self) -> str: ...

    @property
    def event_count(self) -> int: ...

    @property
    def failure_count(self) -> int: ...

    @property
    def failure_samples(self) -> list[dict[str, Any]]: ...

    @property
    def generation(self) -> int:
        """Changes whenever the catalog changed (memo keys for derived reads)."""

    def counts(self, session: str | None = None) -> dict[str, int]:
        """``entities``, ``current_entities``, ``edges``, ``inferred_edges`` (of one session or all)."""


@runtime_checkable
class SessionEpochs(Protocol):
    """Optional capability of a catalog: an in-memory change counter per session, so a reader can keep a
    session's partial result of a whole-memory block (its working-set candidates, its metacognitive state, its
    counts) and reuse it until the session changes; a whole memory then costs O(changed sessions) in reads.

    A catalog without it is read session by session at every checkout (the same results)."""

    def session_epoch(self, session: str, types: tuple[str, ...] | None = None) -> tuple[int, int]:
        """Moves whenever a version of ``session`` is created, changed or closed, and whenever the catalog drops
        what it cached (erasure, reset, another process's commit): equal epochs mean equal per-session reads.
        With ``types``: only for versions of those entity types (equal epochs mean equal reads of those types)."""

    @property
    def epoch(self) -> tuple[int, int]:
        """Moves whenever any session's epoch moves."""

    def types_epoch(self, types: tuple[str, ...]) -> tuple[int, int]:
        """Moves whenever any session's ``session_epoch(session, types)`` moves."""

    def journal_mark(self) -> tuple[int, int]:
        """A position in the catalog's change journal; moves with every commit that moves an epoch."""

    def changed_since(self, mark: tuple[int, int], types: tuple[str, ...] | None = None) -> set[str] | None:
        """The sessions whose ``session_epoch(session, types)`` may have moved since ``mark`` (a superset), or
        ``None`` when the journal does not reach back to it (then any session may have changed)."""


_REPORTS_EPOCHS: dict[type, bool] = {}


def reports_epochs(catalog: object) -> bool:
    """``isinstance(catalog, SessionEpochs)``, answered once per class: a runtime protocol check walks the
    protocol's members each time (~20 us, several times a checkout), and they are all methods of the class."""
    kind = type(catalog)
    known = _REPORTS_EPOCHS.get(kind)
    if known is None:
        known = _REPORTS_EPOCHS[kind] = isinstance(catalog, SessionEpochs)
    return known
