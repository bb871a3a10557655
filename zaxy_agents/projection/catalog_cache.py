"""What the catalog remembers between reads, and when it forgets it: the read caches, the change epochs and the
change journal.

Why apart from the queries: the invalidation rules are the part that must never be wrong (a cached row served after
the commit that changed it is a stale answer), and they are one piece: a commit of projected batches drops only the
entries those batches touched (identities, versions, events, edges, feedback they wrote or closed); any other
commit, and any commit by another process (:meth:`CatalogCache.refresh`), drops them all. The epochs and the journal
move with the same commits, so a result memoised under them (checkout's memos) is exact whenever the caches are.
The queries that fill the caches are :class:`~.catalog_reads.CatalogReads` and
:class:`~.sqlite_catalog.SqliteCatalog`, built on this class (one object: a read costs no extra call).
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.projection.catalog import FeedbackAggregate
from zaxy_agents.projection.catalog_ids import CatalogIds
from zaxy_agents.projection.catalog_rows import ANY_TYPE
from zaxy_agents.projection.catalog_writes import Touched
from zaxy_agents.projection.logged_text import LogTexts
from zaxy_agents.projection.planner import KeyState
from zaxy_agents.projection.records import EntityVersion, RelationRecord
from zaxy_agents.storage.derived.store import DerivedStore

JOURNAL_LIMIT = 4096  # commits the change journal keeps (a view older than that compares every session's epoch)


class CatalogCache:
    """The caches, epochs and change journal of one catalog over ``derived.sqlite`` (the base of
    :class:`~.sqlite_catalog.SqliteCatalog`)."""

    def __init__(self, store: DerivedStore, log_texts: LogTexts | None = None) -> None:
        """``log_texts``: reads the summaries the catalog leaves in the log (raw-text entities, ``TEXT_FROM_LOG``);
        without it every summary written is stored, and reading one kept in the log raises."""
        self.store = store
        self.log_texts = log_texts
        self._seen_generation = -1
        self._touched: Touched | None = None
        self._base_epoch = 0  # moves whenever every cache is dropped (erasure, reset, another process's commit)
        self._changes = 0  # moves whenever any session's epoch does
        # what each commit changed since the base epoch moved, one tuple swapped whole: (base epoch, position of its
        # first entry, entries); positions only grow, so a mark never points into another journal's entries
        self._journal: tuple[int, int, list[tuple[set[str], set[tuple[str, str]]]]] = (0, 0, [])
        self._clear()
        store.on_commit(self._committed)

    # ------------------------------------------------------------------ caches
    def _committed(self) -> None:
        """After a commit: drop what its batches touched, or everything when it wrote anything else."""
        touched, self._touched = self._touched, None
        if touched is None or touched.everything or touched.serial != self.store.transaction_serial:
            self._clear()  # not (only) projected batches, or they were rolled back: nothing is known
            return
        self._ids.adopt(touched.ids)
        for version_id in touched.versions:
            self._versions.pop(version_id, None)
            self._located.pop(version_id, None)
        for key in touched.keys:
            self._keys.pop(key, None)
        for event in touched.events:
            self._events.pop(event, None)
        for key in touched.edge_keys:
            self._edges.pop((key, "out"), None)
            self._edges.pop((key, "in"), None)
            self._ends.pop(key, None)
        for key in touched.feedback:
            self._feedback.pop(key, None)
        for norm in touched.names:
            self._named.pop(norm, None)
        if touched.sessions:
            self._changes += 1
            epochs = self._session_epochs
            for session in touched.sessions:
                epochs[session] = epochs.get(session, 0) + 1
            typed, by_type = self._type_epochs, self._type_changes
            for session_type in touched.types:
                typed[session_type] = typed.get(session_type, 0) + 1
            for entity_type in {entity_type for _, entity_type in touched.types}:
                by_type[entity_type] = by_type.get(entity_type, 0) + 1
            # journaled after the epochs moved: a reader whose mark covers this commit reads the moved epochs
            base, start, entries = self._journal
            if len(entries) >= JOURNAL_LIMIT:  # a new tuple (one atomic swap): marks before it read everything
                self._journal = base, start + len(entries), [(touched.sessions, touched.types)]
            else:
                entries.append((touched.sessions, touched.types))
            # a (session, type) list is read from that type's versions and identities alone: the types written drop it
            changed = touched.types
            anything = {session for session, entity_type in changed if entity_type == ANY_TYPE}

            def kept(entry: tuple[str, str, int]) -> bool:
                return entry[:2] not in changed and entry[0] not in anything

            self._recent = {entry: found for entry, found in self._recent.items() if kept(entry)}
            self._recent_keys = {entry: found for entry, found in self._recent_keys.items() if kept(entry)}
        # Cursors and the counter are kept exact, not re-read: re-reading every session's cursor after each commit
        # made projecting one event cost O(sessions) (a full scan of cat_cursors per event). Known sessions' cursors
        # are replaced in place (the dict keeps its size, so another thread iterating it - the graph follower, a
        # status - never fails, and a cursor only moves forward); a new session makes a new dict.
        cursors = self._cursors
        if cursors is not None:
            if touched.cursors.keys() <= cursors.keys():
                cursors.update(touched.cursors)
            else:
                self._cursors = {**cursors, **touched.cursors}
        if self._counters is not None and touched.latest:
            current = self._counters.get("latest_timestamp")
            self._counters["latest_timestamp"] = touched.latest if current is None else max(current, touched.latest)

    def _touching(self) -> Touched:
        serial = self.store.transaction_serial
        if self._touched is None or self._touched.serial != serial:
            self._touched = Touched(serial)
        return self._touched

    def _clear(self) -> None:
        self._base_epoch += 1
        self._changes += 1
        _, start, entries = self._journal
        self._journal = (self._base_epoch, start + len(entries), [])
        self._session_epochs: dict[str, int] = {}  # session -> commits that changed one of its versions
        self._type_epochs: dict[tuple[str, str], int] = {}  # (session, entity_type) -> commits that changed one
        self._type_changes: dict[str, int] = {}  # entity_type -> commits that changed a version of it (any session)
        self._versions: dict[str, EntityVersion | None] = {}
        self._located: dict[str, tuple[str, str, int, str]] = {}  # version_sources: id -> (key, session, seq, from)
        self._keys: dict[str, KeyState | None] = {}
        self._edges: dict[tuple[str, str], list[RelationRecord] | tuple[()]] = {}  # () when none (untracked)
        self._ends: dict[str, list[tuple[str, float]]] = {}  # neighbour_keys: key -> (other identity, confidence)
        self._events: dict[tuple[str, int], list[EntityVersion]] = {}
        self._feedback: dict[str, FeedbackAggregate | None] = {}
        self._recent: dict[tuple[str, str, int], tuple[EntityVersion, ...]] = {}  # recent_versions, as_of=None
        self._recent_keys: dict[tuple[str, str, int], tuple[str, ...]] = {}
        self._named: dict[str, frozenset[str] | tuple[()]] = {}  # keys_named: normalised name -> identities
        self._cursors: dict[str, tuple[int, str]] | None = None
        self._counters: dict[str, Any] | None = None
        self._ids = CatalogIds()  # the writer's ids (catalog_ids.py)

    def refresh(self) -> bool:
        """Drop every cache when another process committed since the last call; True when it had."""
        generation = self.store.foreign_generation()
        if generation == self._seen_generation:
            return False
        self._seen_generation = generation
        self._clear()
        return True

    @property
    def generation(self) -> int:
        return self.store.generation()

    def session_epoch(self, session: str, types: tuple[str, ...] | None = None) -> tuple[int, int]:
        """Moves when a version of ``session`` is created, changed or closed, or when every cache is dropped: the
        same events that drop the session's ``recent_versions`` lists (so a result memoised under it is exact
        whenever those lists are). With ``types``, only when a version of one of those entity types is (a
        session's read of those types alone is exact while it holds: the turns an agent appends every turn do
        not move the epoch of its tasks and decisions). In memory, O(1) per type: no read."""
        if types is None:
            return self._base_epoch, self._session_epochs.get(session, 0)
        typed = self._type_epochs
        changed = typed.get((session, ANY_TYPE), 0)
        return self._base_epoch, changed + sum(typed.get((session, entity_type), 0) for entity_type in types)

    @property
    def epoch(self) -> tuple[int, int]:
        """Moves whenever any :meth:`session_epoch` does."""
        return self._base_epoch, self._changes

    def types_epoch(self, types: tuple[str, ...]) -> tuple[int, int]:
        """Moves whenever ``session_epoch(session, types)`` does for any session (a sum of counters that only
        grow: it moves whenever one of them does)."""
        changes = self._type_changes
        return self._base_epoch, changes.get(ANY_TYPE, 0) + sum(changes.get(entity_type, 0) for entity_type in types)

    def journal_mark(self) -> tuple[int, int]:
        """A position in the change journal, for :meth:`changed_since` (read it before the epochs it guards)."""
        base, start, entries = self._journal
        return base, start + len(entries)

    def changed_since(self, mark: tuple[int, int], types: tuple[str, ...] | None = None) -> set[str] | None:
        """The sessions whose :meth:`session_epoch` (with ``types``) may have moved since ``mark``, or ``None`` when
        the journal no longer reaches back to it (every cache was dropped since, or more than ``JOURNAL_LIMIT``
        commits ran): then any session may have changed. A whole-memory block's view of 1,000 sessions compares the
        epochs of these sessions only, where reading every session's epoch after each append cost ~15 % of a
        whole-memory checkout."""
        base, start, entries = self._journal
        if mark[0] != base or not start <= mark[1] <= start + len(entries):
            return None
        changed: set[str] = set()
        for sessions, typed in entries[mark[1] - start :]:
            if types is None:
                changed |= sessions
            else:
                changed.update(session for session, kind in typed if kind in types or kind == ANY_TYPE)
        return changed

    def _rows(self, sql: str, parameters: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        return self.store.reader().execute(sql, parameters).fetchall()
