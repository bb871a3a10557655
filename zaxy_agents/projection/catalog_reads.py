"""The catalog's reads of identities and versions: by id, by identity, by event, a session's recent ones, by name.

Why apart: these are most of the catalog's queries and all of checkout's per-question reads; each goes through
the caches of :class:`~.catalog_cache.CatalogCache` (which this class extends) and fills them. The cross-session
bulk reads are in :mod:`.catalog_bulk`; edges, aggregates, planner state and writes in :mod:`.sqlite_catalog`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from zaxy_agents.projection import catalog_bulk
from zaxy_agents.projection.catalog_cache import CatalogCache
from zaxy_agents.projection.catalog_rows import (
    _IN_CHUNK,
    _VERSION_COLUMNS,
    _VERSION_FROM,
    CACHE_LIMIT,
    ID_OUT,
    IDS_BLOB,
    KEY_OUT,
    KEY_WHERE,
    KEYS_JSON,
    NAME_OUT,
    NAMES_JOIN,
    SID_OF,
    TID_OF,
    _chunks,
    _unpack,
    _version,
    ids_blob,
    key_parts,
    keys_json,
    vid_bytes,
)
from zaxy_agents.projection.logged_text import LogTexts, Request
from zaxy_agents.projection.planner import KeyState
from zaxy_agents.projection.records import EntityVersion
from zaxy_agents.storage.derived.store import ID_LIST

# An identity's state: its current version, that version's start (the identity stores no copy of it), closed.
_KEY_STATE = f"SELECT {ID_OUT}, v.valid_from, k.closed FROM cat_keys k JOIN cat_versions v ON v.vid = k.cur"
_SESSION_TYPE = f"sid = {SID_OF.format('?')} AND tid = {TID_OF.format('?')}"  # a session's versions of one type
_NAMED = "cat_keys k JOIN cat_sessions s ON s.sid = k.sid JOIN cat_types t ON t.tid = k.tid WHERE"
NO_KEY = ("\x1f", "", "")  # parts of a string no identity can have (a normalised name holds no \x1f)
# A version's identity key and session by the identity's own names (lighter than NAMES_JOIN: no body, no types)
_KEY_JOIN = "JOIN cat_keys k ON k.kid = v.kid JOIN cat_sessions s ON s.sid = k.sid JOIN cat_types t ON t.tid = k.tid"


class CatalogReads(CatalogCache):
    """Identity and version reads through the caches (the middle layer of :class:`~.sqlite_catalog.SqliteCatalog`)."""

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
        rows = self._rows(f"{_KEY_STATE} WHERE {KEY_WHERE}", key_parts(key) or NO_KEY)
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
            (*(key_parts(key) or NO_KEY), moment, moment),
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
            for row in self._rows(f"{_VERSION_FROM} WHERE {KEY_WHERE} ORDER BY v.vid", key_parts(key) or NO_KEY)
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
        # a tuple of strings (the reader copies it): once it survives a collection the collector stops tracking it,
        # where a list stayed a tracked survivor of the question
        self._recent_keys[(session, entity_type, scan)] = tuple(found)
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
        self._recent[(session, entity_type, scan)] = tuple(found)  # the reader copies it; () shared when empty
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
            found = frozenset(row[0] for row in self._rows(f"SELECT {KEY_OUT} FROM {_NAMED} k.norm = ?", (norm,)))
            cached = found or ()  # no name: the empty tuple, no tracked object left per question
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
            # most n-grams name nothing: () (untracked, shared) where an empty frozenset was a tracked object
            # surviving the question; set(()) and set(frozenset()) are the same empty set
            named.update((norm, frozenset(keys) if keys else ()) for norm, keys in found.items())
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
