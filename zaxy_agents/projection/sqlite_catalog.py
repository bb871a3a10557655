"""The projection catalog as tables of ``derived.sqlite``: written batch by batch, read where it lies.

The tables and row codecs are in :mod:`.catalog_rows`, the write path in :mod:`.catalog_writes`, the
cross-session bulk reads in :mod:`.catalog_bulk`. Reads go through small caches: a commit of projected batches
drops only the entries those batches touched (identities, versions, events, edges, feedback they wrote or
closed); any other commit, and any commit by another process (:meth:`SqliteCatalog.refresh`), drops them all.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from zaxy_agents.projection import catalog_bulk
from zaxy_agents.projection.catalog import FeedbackAggregate
from zaxy_agents.projection.catalog_ids import CatalogIds
from zaxy_agents.projection.catalog_rows import (
    _IN_CHUNK,
    _VERSION_COLUMNS,
    _VERSION_FROM,
    ANY_TYPE,
    CACHE_LIMIT,
    EDGE_SELECT,
    ID_OUT,
    IDS_BLOB,
    KEY_OUT,
    KEY_WHERE,
    KEYS_JSON,
    NAME,
    NAME_OUT,
    NAMES_JOIN,
    SCHEMA_VERSION,
    SID_OF,
    TID_OF,
    _chunks,
    _edge,
    _unpack,
    _version,
    create_tables,
    drop_tables,
    ids_blob,
    key_parts,
    keys_json,
    vid_bytes,
)
from zaxy_agents.projection.catalog_writes import Touched, apply_batch, delete_session_rows
from zaxy_agents.projection.logged_text import LogTexts, Request, fill
from zaxy_agents.projection.planner import KeyState, ProjectionBatch
from zaxy_agents.projection.records import EntityVersion, RelationRecord
from zaxy_agents.storage.derived.store import ID_LIST, DerivedStore

# An identity's state: its current version, that version's start (the identity stores no copy of it), closed.
_KEY_STATE = f"SELECT {ID_OUT}, v.valid_from, k.closed FROM cat_keys k JOIN cat_versions v ON v.vid = k.cur"
_SESSION_TYPE = f"sid = {SID_OF.format('?')} AND tid = {TID_OF.format('?')}"  # a session's versions of one type
_NAMED = "cat_keys k JOIN cat_sessions s ON s.sid = k.sid JOIN cat_types t ON t.tid = k.tid WHERE"
_KEY_WHERE_M = KEY_WHERE.replace("k.", "m.").replace("{", "{{").replace("}", "}}")  # KEY_WHERE on alias m
_NO_KEY = ("\x1f", "", "")  # parts of a string no identity can have (a normalised name holds no \x1f)
# A version's identity key and session by the identity's own names (lighter than NAMES_JOIN: no body, no types)
_KEY_JOIN = "JOIN cat_keys k ON k.kid = v.kid JOIN cat_sessions s ON s.sid = k.sid JOIN cat_types t ON t.tid = k.tid"

JOURNAL_LIMIT = 4096  # commits the change journal keeps (a view older than that compares every session's epoch)

__all__ = ["NAME", "SCHEMA_VERSION", "SqliteCatalog", "create_tables", "drop_tables"]


# neighbour_keys: the other end and confidence of an identity's edges in one direction, in eid order
# (the other end's identity is the edge's other kid: its key is rebuilt by the join, no version is read)
_ENDS = (
    f"SELECT {KEY_OUT}, e.confidence FROM cat_edges e JOIN cat_keys k ON k.kid = e.{{}} "
    "JOIN cat_sessions s ON s.sid = k.sid JOIN cat_types t ON t.tid = k.tid WHERE e.{} = "
    f"(SELECT m.kid FROM cat_keys m WHERE {_KEY_WHERE_M}) ORDER BY e.eid"
)


class SqliteCatalog:
    """The :class:`~zaxy_agents.projection.catalog.EntityCatalog` over ``derived.sqlite`` (reads and writes)."""

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
        self._edges: dict[tuple[str, str], list[RelationRecord]] = {}
        self._ends: dict[str, list[tuple[str, float]]] = {}  # neighbour_keys: key -> (other identity, confidence)
        self._events: dict[tuple[str, int], list[EntityVersion]] = {}
        self._feedback: dict[str, FeedbackAggregate | None] = {}
        self._recent: dict[tuple[str, str, int], list[EntityVersion]] = {}  # recent_versions, as_of=None
        self._recent_keys: dict[tuple[str, str, int], list[str]] = {}
        self._named: dict[str, frozenset[str]] = {}  # keys_named: normalised name -> identities
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

    # ------------------------------------------------------------------ identities and versions
    def version(self, version_id: str) -> EntityVersion | None:
        cache = self._versions
        if version_id in cache:
            return cache[version_id]
        rows = self._rows(f"{_VERSION_FROM} WHERE v.id = ?", (vid_bytes(version_id),))
        found = _version(rows[0], self.log_texts) if rows else None
        if len(cache) >= CACHE_LIMIT:
            cache.clear()
        cache[version_id] = found
        return found

    def versions(self, version_ids: Sequence[str]) -> dict[str, EntityVersion | None]:
        """:meth:`version` of many ids, those not cached read in one query per ``_IN_CHUNK``."""
        cache = self._versions
        missing = [v for v in dict.fromkeys(version_ids) if v not in cache]
        if missing and len(cache) + len(missing) >= CACHE_LIMIT:
            cache.clear()
            missing = list(dict.fromkeys(version_ids))
        for chunk in _chunks(missing):
            found = {row[0]: _version(row, self.log_texts) for row in self._rows(
                f"{_VERSION_FROM} WHERE v.id IN {IDS_BLOB}", (ids_blob(chunk),))}  # fmt: skip
            for version_id in chunk:
                cache[version_id] = found.get(version_id)
        return {v: cache.get(v) for v in version_ids}

    def version_sources(self, version_ids: Sequence[str]) -> dict[str, tuple[str, str, int, str]]:
        """``(key, session, seq, valid_from)`` of the versions found among ``version_ids`` (absent ids are left out):
        which identity and event each belongs to, without decoding whole rows (a keyword search locates ~150
        versions a question, and the graph lanes map every edge's end to its identity; whole rows are read only
        for the events a caller keeps). Cached versions answer from memory, the others one light read per
        ``_IN_CHUNK``, kept in a cache of their own (these four columns of a version id never change; erasure
        clears every cache)."""
        versions, located = self._versions, self._located
        found: dict[str, tuple[str, str, int, str]] = {}
        missing: list[str] = []
        for version_id in dict.fromkeys(version_ids):
            where = located.get(version_id)
            if where is None:
                version = versions.get(version_id)
                if version is not None:
                    where = (version.key, version.session, version.source_event_seq, version.valid_from)
            if where is not None:
                found[version_id] = where
            elif version_id not in versions:  # a cached None is known absent
                missing.append(version_id)
        if missing and len(located) + len(missing) >= CACHE_LIMIT:
            located.clear()
        for chunk in _chunks(missing):
            rows = self._rows(
                f"SELECT {ID_OUT}, {KEY_OUT}, s.name, v.seq, v.valid_from FROM cat_versions v {_KEY_JOIN} "
                f"WHERE v.id IN {IDS_BLOB}",
                (ids_blob(chunk),),
            )
            for version_id, key, session, seq, valid_from in rows:
                found[version_id] = located[version_id] = (key, session, int(seq), valid_from)
        return found

    def version_key(self, version_id: str) -> str | None:
        """The identity of one version (``None`` when absent), through the caches of :meth:`version_sources`."""
        where = self._located.get(version_id)
        if where is not None:
            return where[0]
        if version_id in self._versions:
            version = self._versions[version_id]
            return None if version is None else version.key
        found = self.version_sources([version_id]).get(version_id)
        return None if found is None else found[0]

    def texts(self, version_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """``(summary, properties JSON)`` of many versions, read in bulk and not cached (the embedded graph reads
        its entities' text here: a dump or a keyword search would only churn the version cache). Summaries kept
        in the log are read from it in one batched read."""
        found: dict[str, tuple[str, str]] = {}
        logged: dict[str, tuple[Request, str]] = {}
        for chunk in _chunks(list(dict.fromkeys(version_ids))):
            rows = self._rows(
                f"SELECT {ID_OUT}, v.body, s.name, v.seq, v.hash, {KEY_OUT}, v.valid_from FROM cat_versions v "
                f"{_KEY_JOIN} WHERE v.id IN {IDS_BLOB}",
                (ids_blob(chunk),),
            )
            for version_id, body, session, seq, digest, key, valid_from in rows:
                summary, properties = _unpack(body, valid_from)
                if summary is None:
                    logged[version_id] = ((session, int(seq), digest.hex(), key), properties)
                else:
                    found[version_id] = (summary, properties)
        if logged:
            summaries = self._log_texts().summaries(request for request, _ in logged.values())
            for version_id, (request, properties) in logged.items():
                found[version_id] = (summaries[request], properties)
        return found

    def _log_texts(self) -> LogTexts:
        if self.log_texts is None:
            raise RuntimeError("a version whose summary is in the log was read without access to the log")
        return self.log_texts

    def key_state(self, key: str) -> KeyState | None:
        cache = self._keys
        if key in cache:
            return cache[key]
        rows = self._rows(f"{_KEY_STATE} WHERE {KEY_WHERE}", key_parts(key) or _NO_KEY)
        found = KeyState(rows[0][0], rows[0][1], bool(rows[0][2])) if rows else None
        if len(cache) >= CACHE_LIMIT:
            cache.clear()
        cache[key] = found
        return found

    def has_key(self, key: str) -> bool:
        return self.key_state(key) is not None

    def current(self, key: str) -> EntityVersion | None:
        state = self.key_state(key)
        if state is None or state.closed:
            return None
        return self.version(state.current)

    def latest(self, key: str) -> EntityVersion | None:
        state = self.key_state(key)
        return None if state is None else self.version(state.current)

    def version_at(self, key: str, moment: str | None) -> EntityVersion | None:
        if moment is None:
            return self.current(key)
        rows = self._rows(
            f"{_VERSION_FROM} WHERE {KEY_WHERE} AND v.valid_from <= ? AND (v.valid_to IS NULL OR v.valid_to > ?) "
            "ORDER BY v.vid DESC LIMIT 1",
            (*(key_parts(key) or _NO_KEY), moment, moment),
        )
        return _version(rows[0], self.log_texts) if rows else None

    def is_current(self, version_id: str) -> bool:
        version = self.version(version_id)
        if version is None:
            return False
        state = self.key_state(version.key)
        return state is not None and not state.closed and state.current == version_id

    def history(self, key: str) -> list[EntityVersion]:
        return [
            _version(row, self.log_texts)
            for row in self._rows(f"{_VERSION_FROM} WHERE {KEY_WHERE} ORDER BY v.vid", key_parts(key) or _NO_KEY)
        ]

    def event_versions(self, session: str, seq: int) -> list[EntityVersion]:
        cached = self._events.get((session, seq))
        if cached is not None:
            return cached
        rows = self._rows(
            f"{_VERSION_FROM} WHERE v.sid = {SID_OF.format('?')} AND v.seq = ? ORDER BY v.vid", (session, seq)
        )
        found = [_version(row, self.log_texts) for row in rows]
        if len(self._events) >= CACHE_LIMIT:
            self._events.clear()
        self._events[(session, seq)] = found
        return found

    def events_versions(self, keys: Sequence[tuple[str, int]]) -> dict[tuple[str, int], list[EntityVersion]]:
        """:meth:`event_versions` of many events, those not cached read in one query per session."""
        cache = self._events
        missing = [key for key in dict.fromkeys(keys) if key not in cache]
        if missing and len(cache) + len(missing) >= CACHE_LIMIT:
            cache.clear()
            missing = list(dict.fromkeys(keys))
        by_session: dict[str, list[int]] = {}
        for session, seq in missing:
            by_session.setdefault(session, []).append(int(seq))
        for session, seqs in by_session.items():
            for start in range(0, len(seqs), _IN_CHUNK):
                chunk = seqs[start : start + _IN_CHUNK]
                found: dict[tuple[str, int], list[EntityVersion]] = {(session, seq): [] for seq in chunk}
                rows = self._rows(
                    f"{_VERSION_FROM} WHERE v.sid = {SID_OF.format('?')} AND v.seq IN {ID_LIST} ORDER BY v.vid",
                    (session, json.dumps(chunk)),
                )
                for row in rows:
                    version = _version(row, self.log_texts)
                    found[(session, version.source_event_seq)].append(version)
                cache.update(found)
        return {key: cache[key] if key in cache else self.event_versions(*key) for key in keys}

    def recent_keys(self, session: str, entity_type: str, scan: int = 500) -> list[str]:
        """Identities of ``session``'s last ``scan`` versions of ``entity_type``, newest first (cached until a
        commit gives the session a version)."""
        cached = self._recent_keys.get((session, entity_type, scan))
        if cached is not None:
            return list(cached)
        rows = self._rows(
            f"SELECT {KEY_OUT} FROM (SELECT kid, vid FROM cat_versions WHERE {_SESSION_TYPE} "
            "ORDER BY vid DESC LIMIT ?) r JOIN cat_keys k ON k.kid = r.kid JOIN cat_sessions s ON s.sid = k.sid "
            "JOIN cat_types t ON t.tid = k.tid ORDER BY r.vid DESC",
            (session, entity_type, scan),
        )
        found = list(dict.fromkeys(row[0] for row in rows))
        if len(self._recent_keys) >= CACHE_LIMIT // 10:
            self._recent_keys.clear()
        self._recent_keys[(session, entity_type, scan)] = found
        return list(found)

    def recent_versions(self, session: str, entity_type: str, scan: int, as_of: str | None) -> list[EntityVersion]:
        if as_of is not None:
            found = (self.version_at(key, as_of) for key in self.recent_keys(session, entity_type, scan))
            return [version for version in found if version is not None]
        cached = self._recent.get((session, entity_type, scan))
        if cached is not None:
            return list(cached)
        rows = self._rows(  # one query: the recent identities joined to their current (open) version
            f"SELECT {_VERSION_COLUMNS} FROM (SELECT kid, max(vid) AS last FROM (SELECT kid, vid FROM cat_versions "
            f"WHERE {_SESSION_TYPE} ORDER BY vid DESC LIMIT ?) GROUP BY kid) r "
            f"JOIN cat_keys k ON k.kid = r.kid JOIN cat_versions v ON v.vid = k.cur {NAMES_JOIN} "
            "WHERE NOT k.closed ORDER BY r.last DESC",
            (session, entity_type, scan),
        )
        found = [_version(row, self.log_texts) for row in rows]
        if len(self._recent) >= CACHE_LIMIT // 10:
            self._recent.clear()
        self._recent[(session, entity_type, scan)] = found
        return list(found)

    def recent_heads(self, session: str, entity_type: str, scan: int) -> list[tuple[str, str, int, str | None]]:
        """:meth:`recent_versions` (``as_of=None``) as ``(id, valid_from, seq, source_path)``: the same rows and
        order, without decoding the bodies (a whole-memory working set keeps five of each session's sixty)."""
        return [
            (row[0], row[1], int(row[2]), row[3])
            for row in self._rows(
                f"SELECT {ID_OUT}, v.valid_from, v.seq, v.source_path FROM (SELECT kid, max(vid) AS last FROM "
                f"(SELECT kid, vid FROM cat_versions WHERE {_SESSION_TYPE} ORDER BY vid DESC LIMIT ?) "
                "GROUP BY kid) r JOIN cat_keys k ON k.kid = r.kid JOIN cat_versions v ON v.vid = k.cur "
                "WHERE NOT k.closed ORDER BY r.last DESC",
                (session, entity_type, scan),
            )
        ]

    def recent_versions_many(
        self, sessions: Sequence[str], entity_type: str, scan: int, containing: Sequence[str] = ()
    ) -> dict[str, list[EntityVersion]]:
        return catalog_bulk.recent_versions_many(self, sessions, entity_type, scan, containing)

    def recent_heads_many(
        self, sessions: Sequence[str], entity_type: str, scan: int
    ) -> dict[str, list[tuple[str, str, int, str | None]]]:
        return catalog_bulk.recent_heads_many(self, sessions, entity_type, scan)

    def first_recent_keys_many(
        self, sessions: Sequence[str], entity_type: str, first: int, scan: int
    ) -> dict[str, list[str]]:
        return catalog_bulk.first_recent_keys_many(self, sessions, entity_type, first, scan)

    def read_versions(self, version_ids: Sequence[str]) -> dict[str, EntityVersion]:
        """The versions found among ``version_ids``, read in one query per ``_IN_CHUNK`` and not cached (a whole
        memory's memo reads thousands once: kept in the version cache they only pushed out what checkouts read
        again, and made each full garbage collection walk them)."""
        found: dict[str, EntityVersion] = {}
        for chunk in _chunks(list(dict.fromkeys(version_ids))):
            rows = self._rows(f"{_VERSION_FROM} WHERE v.id IN {IDS_BLOB}", (ids_blob(chunk),))
            found.update((row[0], _version(row, self.log_texts)) for row in rows)
        return found

    def current_ranks(self, keys: Sequence[str]) -> dict[str, tuple[float, str, str, str]]:
        """``(-importance, entity_type, name, id)`` of the current version of each open identity among ``keys``
        (closed and absent ones left out): what a tier ranks by, without decoding the versions."""
        found: dict[str, tuple[float, str, str, str]] = {}
        for chunk in _chunks(list(dict.fromkeys(keys))):
            rows = self._rows(
                f"SELECT j.key, -v.importance, t.name, {NAME_OUT}, {ID_OUT} FROM {KEYS_JSON} "
                "JOIN cat_versions v ON v.vid = k.cur JOIN cat_types t ON t.tid = k.tid WHERE NOT k.closed",
                (keys_json(chunk),),
            )
            found.update((chunk[row[0]], row[1:]) for row in rows)
        return found

    def currents(self, keys: Sequence[str]) -> dict[str, EntityVersion | None]:
        """:meth:`current` of many identities (``None``: absent or closed), read in one query per ``_IN_CHUNK``."""
        found: dict[str, EntityVersion | None] = dict.fromkeys(keys)
        for chunk in _chunks(list(found)):
            rows = self._rows(
                f"SELECT {_VERSION_COLUMNS} FROM {KEYS_JSON} JOIN cat_versions v ON v.vid = k.cur {NAMES_JOIN} "
                "WHERE NOT k.closed",
                (keys_json(chunk),),
            )
            for row in rows:
                found[row[1]] = _version(row, self.log_texts)
        return found

    def type_keys(self, session: str, entity_type: str) -> list[str]:
        rows = self._rows(
            f"SELECT {KEY_OUT} FROM cat_versions v {_KEY_JOIN} WHERE v.sid = {SID_OF.format('?')} "
            f"AND v.tid = {TID_OF.format('?')} "
            "ORDER BY v.vid",
            (session, entity_type),
        )
        return list(dict.fromkeys(row[0] for row in rows))

    def keys_named(self, name: str) -> set[str]:
        """Identities named ``name`` (normalised): the exact lane asks every word n-gram of a question, so
        answers are cached until a commit creates an identity of that name (names never change)."""
        norm = " ".join(name.casefold().split())
        cached = self._named.get(norm)
        if cached is None:
            cached = frozenset(row[0] for row in self._rows(f"SELECT {KEY_OUT} FROM {_NAMED} k.norm = ?", (norm,)))
            if len(self._named) >= CACHE_LIMIT:
                self._named.clear()
            self._named[norm] = cached
        return set(cached)

    def keys_named_many(self, names: Sequence[str]) -> dict[str, set[str]]:
        """:meth:`keys_named` of many names (the exact lane's word n-grams), those not cached read in one query
        per ``_IN_CHUNK``; keyed by the names as given."""
        norms = {name: " ".join(name.casefold().split()) for name in names}
        named = self._named
        missing = [norm for norm in dict.fromkeys(norms.values()) if norm not in named]
        if missing and len(named) + len(missing) >= CACHE_LIMIT:
            named.clear()
            missing = list(dict.fromkeys(norms.values()))
        for chunk in _chunks(missing):
            found: dict[str, list[str]] = {norm: [] for norm in chunk}
            rows = self._rows(
                f"SELECT k.norm, {KEY_OUT} FROM {_NAMED} k.norm IN {ID_LIST} ORDER BY k.norm, k.kid",
                (json.dumps(chunk),),
            )
            for norm, key in rows:
                found[norm].append(key)
            named.update((norm, frozenset(keys)) for norm, keys in found.items())
        return {name: set(named[norm]) if norm in named else self.keys_named(name) for name, norm in norms.items()}

    def session_keys(
        self,
        session: str,
        *,
        entity_type: str | None = None,
        contains: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[str]:
        typed = f" AND tid = {TID_OF.format('?')}" if entity_type is not None else ""
        named = " WHERE instr(k.norm, ?) > 0" if contains else ""
        parameters: list[Any] = [session, *([entity_type] if entity_type is not None else [])]
        parameters += [*([contains] if contains else []), limit, offset]
        rows = self._rows(
            f"SELECT {KEY_OUT} FROM (SELECT kid, max(vid) AS last FROM cat_versions WHERE sid = {SID_OF.format('?')}"
            f"{typed} GROUP BY kid) r JOIN cat_keys k ON k.kid = r.kid JOIN cat_sessions s ON s.sid = k.sid "
            f"JOIN cat_types t ON t.tid = k.tid{named} ORDER BY r.last DESC LIMIT ? OFFSET ?",
            parameters,
        )
        return [row[0] for row in rows]

    def entity_type_counts(self, session: str) -> dict[str, int]:
        rows = self._rows(
            "SELECT t.name, c.n FROM (SELECT tid, count(DISTINCT kid) AS n FROM cat_versions "
            f"WHERE sid = {SID_OF.format('?')} GROUP BY tid) c JOIN cat_types t ON t.tid = c.tid ORDER BY t.name",
            (session,),
        )
        return {str(kind): int(count) for kind, count in rows}

    # ------------------------------------------------------------------ graph
    def _adjacent(self, key: str, direction: str) -> list[RelationRecord]:
        cached = self._edges.get((key, direction))
        if cached is not None:
            return cached
        column = "source_kid" if direction == "out" else "target_kid"
        rows = self._rows(
            f"{EDGE_SELECT} WHERE e.{column} = (SELECT k.kid FROM cat_keys k WHERE {KEY_WHERE}) ORDER BY e.eid",
            key_parts(key) or _NO_KEY,
        )
        edges = [_edge(row) for row in rows]
        if len(self._edges) >= CACHE_LIMIT // 10:
            self._edges.clear()
        self._edges[(key, direction)] = edges
        return edges

    def out_edges(self, key: str) -> list[RelationRecord]:
        return self._adjacent(key, "out")

    def neighbour_keys(self, key: str) -> list[tuple[str, float]]:
        """The graph lanes' light read of an identity's relations: the protocol's pairs, from two columns of the
        edges (no records built) and one bulk :meth:`version_sources` of their ends. Cached with the edges (dropped
        with them) when every end was found: a version's identity never changes, and erasure clears every cache;
        an end not found yet is looked up again next time, as :meth:`version_key` would."""
        cached = self._ends.get(key)
        if cached is not None:
            return cached
        out, into = self._edges.get((key, "out")), self._edges.get((key, "in"))
        if out is not None and into is not None:
            ends = [(edge.target_id, edge.confidence) for edge in out]
            ends += [(edge.source_id, edge.confidence) for edge in into]
        else:  # every edge's ends are versions (both kept or both erased with the session): every end is found
            parts = key_parts(key) or _NO_KEY
            keys = self._rows(_ENDS.format("target_kid", "source_kid"), parts)
            keys += self._rows(_ENDS.format("source_kid", "target_kid"), parts)
            if len(self._ends) >= CACHE_LIMIT // 10:
                self._ends.clear()
            self._ends[key] = keys
            return keys
        located = self.version_sources([other for other, _ in ends])
        keys = [(located[other][0], confidence) for other, confidence in ends if other in located]
        if len(keys) == len(ends):
            if len(self._ends) >= CACHE_LIMIT // 10:
                self._ends.clear()
            self._ends[key] = keys
        return keys

    def in_edges(self, key: str) -> list[RelationRecord]:
        return self._adjacent(key, "in")

    def degree(self, key: str) -> int:
        cached_out, cached_in = self._edges.get((key, "out")), self._edges.get((key, "in"))
        if cached_out is not None and cached_in is not None:
            return len(cached_out) + len(cached_in)
        ends = self._ends.get(key)
        if ends is not None:  # cached only when every end was found: one pair per edge
            return len(ends)
        rows = self._rows(
            "SELECT (SELECT count(*) FROM cat_edges WHERE source_kid = k.kid) + "
            f"(SELECT count(*) FROM cat_edges WHERE target_kid = k.kid) FROM cat_keys k WHERE {KEY_WHERE}",
            key_parts(key) or _NO_KEY,
        )
        return int(rows[0][0]) if rows else 0

    def inferred_edges(self) -> list[RelationRecord]:
        return [_edge(row) for row in self._rows(f"{EDGE_SELECT} WHERE e.inferred ORDER BY e.eid")]

    # ------------------------------------------------------------------ aggregates
    def feedback(self, key: str) -> FeedbackAggregate | None:
        if key in self._feedback:
            return self._feedback[key]
        rows = self._rows("SELECT positive, negative, weight, last FROM cat_feedback WHERE key = ?", (key,))
        found = FeedbackAggregate(*rows[0]) if rows else None
        if len(self._feedback) >= CACHE_LIMIT:
            self._feedback.clear()
        self._feedback[key] = found
        return found

    @property
    def cursors(self) -> dict[str, tuple[int, str]]:
        if self._cursors is None:
            self._cursors = {s: (int(q), h) for s, q, h in self._rows("SELECT session, seq, hash FROM cat_cursors")}
        return self._cursors

    @property
    def sessions(self) -> list[str]:
        return sorted(self.cursors)

    def _counter(self, name: str, default: Any) -> Any:
        if self._counters is None:
            self._counters = dict(self._rows("SELECT name, value FROM cat_counters"))
        return self._counters.get(name, default)

    @property
    def latest_timestamp(self) -> str:
        return str(self._counter("latest_timestamp", ""))

    @property
    def event_count(self) -> int:
        return sum(seq for seq, _ in self.cursors.values())

    @property
    def failure_count(self) -> int:
        return int(self._rows("SELECT coalesce(sum(n), 0) FROM cat_failure_counts")[0][0])

    @property
    def failure_samples(self) -> list[dict[str, Any]]:
        rows = self._rows("SELECT id, session, seq, event_type, reason FROM cat_failures ORDER BY rid")
        return [{"id": i, "session_id": s, "seq": q, "event_type": t, "reason": r} for i, s, q, t, r in rows]

    def labels(self) -> set[str]:
        return {row[0] for row in self._rows("SELECT label FROM cat_labels")}

    def counts(self, session: str | None = None) -> dict[str, int]:
        parameters = (session,) if session is not None else ()
        by_sid = f"WHERE sid = {SID_OF.format('?')}" if session is not None else ""
        open_keys = f"{'AND' if by_sid else 'WHERE'} NOT closed"
        one = lambda sql: int(self._rows(sql, parameters)[0][0])  # noqa: E731
        edges_where = f"{by_sid} {'AND' if by_sid else 'WHERE'} inferred"
        return {
            "entities": one(f"SELECT count(*) FROM cat_versions {by_sid}"),
            "current_entities": one(f"SELECT count(*) FROM cat_keys {by_sid} {open_keys}"),
            "edges": one(f"SELECT count(*) FROM cat_edges {by_sid}"),
            "inferred_edges": one(f"SELECT count(*) FROM cat_edges {edges_where}"),
        }

    def entity_rows(self, session: str, first: int, last: int) -> list[dict[str, Any]]:
        """The versions events ``first..last`` of ``session`` created, as planner rows (for index replays)."""
        rows = self._rows(
            f"{_VERSION_FROM} WHERE v.sid = {SID_OF.format('?')} AND v.seq BETWEEN ? AND ? ORDER BY v.vid",
            (session, first, last),
        )
        versions = [_version(row, self.log_texts) for row in rows]
        fill(versions)
        return [
            {
                "id": v.id,
                "key": v.key,
                "session_id": v.session,
                "name": v.name,
                "entity_type": v.entity_type,
                "summary": v.summary,
                "properties": v.properties_json,
                "valid_from": v.valid_from,
                "valid_to": v.valid_to,
                "invalidated": v.invalidated,
                "source_event_seq": v.source_event_seq,
                "source_event_hash": v.source_event_hash,
                "source_event_type": v.source_event_type,
                "source_thread": v.session,
                "importance": v.importance,
                "source_path": v.source_path,
                "asserted": v.asserted,
            }
            for v in versions
        ]

    # ------------------------------------------------------------------ planner state (what planning reads)
    def key_states(self, keys: Iterable[str], db: sqlite3.Connection | None = None) -> dict[str, KeyState]:
        """Current state of each identity that exists (bulk lookup for the planner, inside its transaction)."""
        connection = db or self.store.reader()
        found: dict[str, KeyState] = {}
        for chunk in _chunks(list(keys)):
            for index, current, valid_from, closed in connection.execute(
                f"SELECT j.key, {ID_OUT}, v.valid_from, k.closed FROM {KEYS_JSON} JOIN cat_versions v ON v.vid = k.cur",
                (keys_json(chunk),),
            ):
                found[chunk[index]] = KeyState(current, valid_from, bool(closed))
        return found

    def sources_present(self, ids: Iterable[str], db: sqlite3.Connection | None = None) -> set[str]:
        connection = db or self.store.reader()
        present: set[str] = set()
        for chunk in _chunks(list(ids)):
            marks = ",".join("?" * len(chunk))
            present.update(
                row[0] for row in connection.execute(f"SELECT id FROM cat_sources WHERE id IN ({marks})", chunk)
            )
        return present

    # ------------------------------------------------------------------ writes
    def apply(self, db: sqlite3.Connection, batch: ProjectionBatch, generation: int | None = None) -> None:
        """Write one planned batch (inside the projector's transaction): see :func:`.catalog_writes.apply_batch`.

        ``generation``: ``PRAGMA data_version`` read inside this transaction (the projector reads it with the
        cursors; read here when not given). When another connection committed since the caches were filled, they
        are dropped before any remembered id is used: ids change only by deletes, which another process's erasure
        or reset may have made."""
        if generation is None:
            generation = int(db.execute("PRAGMA data_version").fetchone()[0])
        if generation != self._seen_generation:
            self._seen_generation = generation
            self._clear()
        apply_batch(self._touching(), db, batch, summaries_in_log=self.log_texts is not None, ids=self._ids)

    def delete_session(self, db: sqlite3.Connection, session: str) -> None:
        """Remove every row planned from ``session`` (erasure: the session is then replayed from the log)."""
        delete_session_rows(self._touching(), db, session)
