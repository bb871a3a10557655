"""Cross-session bulk reads of the catalog: one query for many sessions (a whole memory's working-set memo fills
every session's share at once)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from zaxy_agents.projection.catalog_rows import _IN_CHUNK, _SESSION_VID, _in_log, _raw, _version, timed
from zaxy_agents.projection.records import EntityVersion

if TYPE_CHECKING:
    from zaxy_agents.projection.sqlite_catalog import SqliteCatalog


_EVENT_TYPE_JOIN = " JOIN cat_types e ON e.tid = v.etid"


def _rows(catalog: SqliteCatalog, sql: str, parameters: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
    return catalog.store.reader().execute(sql, parameters).fetchall()


def recent_across(
    catalog: SqliteCatalog,
    sessions: Sequence[str],
    entity_type: str,
    scan: int,
    columns: str,
    event_types: bool = False,
) -> dict[str, list[tuple[Any, ...]]]:
    """Per session of ``sessions``: the rows ``columns`` (of ``cat_versions v``, ``c.session`` its session, ``?2``
    its entity type, ``e.name`` its event type with ``event_types``; the first one ``v.id``), then the identity's key
    and its current version's id)
    of the newest version of each identity among the session's last ``scan`` versions of ``entity_type``, open
    identities only, newest first (what :meth:`recent_versions` reads of one session, for many in one query).
    ``cut`` finds each session's ``scan``-th newest version on the ``(session, entity_type)`` index, and drives
    the range join (``CROSS JOIN`` fixes SQLite's loop order). The rows come unsorted and ungrouped (SQLite
    sorting them, blobs included, was half the query) and are ordered and reduced here: an identity's newest
    version in the window is its current one unless that was retracted (the caller reads those few by
    ``k.current``)."""
    found: dict[str, list[tuple[Any, ...]]] = {session: [] for session in sessions}
    if not found or scan < 1:
        return found
    rows = _rows(
        catalog,
        "WITH kind(tid) AS MATERIALIZED (SELECT tid FROM cat_types WHERE name = ?2), "
        "cut(session, sid, cutoff) AS MATERIALIZED (SELECT c.name, c.sid, coalesce((SELECT vid FROM cat_versions "
        "WHERE sid = c.sid AND tid = (SELECT tid FROM kind) ORDER BY vid DESC LIMIT 1 OFFSET ?3), -1) "
        "FROM json_each(?1) j JOIN cat_sessions c ON c.name = j.value) "
        f"SELECT c.session, v.vid, v.kid, k.closed, {columns}, c.session || char(31) || ?2 || char(31) || k.norm, "
        f"k.cur FROM cut c CROSS JOIN cat_versions v ON v.sid = c.sid AND v.tid = (SELECT tid FROM kind) "
        f"AND v.vid >= c.cutoff JOIN cat_keys k ON k.kid = v.kid{_EVENT_TYPE_JOIN if event_types else ''}",
        (json.dumps(list(found)), entity_type, scan - 1),
    )
    rows.sort(key=_SESSION_VID)
    seen: set[tuple[str, int]] = set()
    retracted: dict[int, list[tuple[str, int]]] = {}  # current vid -> (session, position) of rows it replaces
    for row in reversed(rows):  # each session's versions newest first
        identity = row[0], row[2]
        if identity not in seen:  # the identity's newest version in the window
            seen.add(identity)
            if not row[3]:
                kept = found[row[0]]
                if row[-1] == row[1]:
                    kept.append((*row[4:-1], row[4]))
                else:
                    retracted.setdefault(row[-1], []).append((row[0], len(kept)))
                    kept.append(row[4:])
    if retracted:  # the few whose current version is outside the window: its id (the caller reads it by id)
        vids = sorted(retracted)
        for start in range(0, len(vids), _IN_CHUNK):
            chunk = vids[start : start + _IN_CHUNK]
            marks = ",".join(map(str, chunk))
            for vid, current in _rows(catalog, f"SELECT vid, lower(hex(id)) FROM cat_versions WHERE vid IN ({marks})"):
                for session, position in retracted[vid]:
                    found[session][position] = (*found[session][position][:-1], current)
    return found


def recent_versions_many(
    catalog: SqliteCatalog, sessions: Sequence[str], entity_type: str, scan: int, containing: Sequence[str] = ()
) -> dict[str, list[EntityVersion]]:
    """``recent_versions(session, entity_type, scan, None)`` of each session, in one query (a whole memory's
    memo fills every session's share at once). ``containing``: only the versions whose summary or properties
    JSON holds one of these strings (the body is searched before a version is built: a whole-memory working set
    looks for goals among 60,000 facts at 1M events, and building each one cost more than reading it)."""
    columns = (
        "lower(hex(v.id)), c.session, coalesce(v.name, k.norm), ?2, v.body, v.valid_from, v.valid_to, v.invalidated, "
        "v.seq, v.hash, e.name, v.importance, v.source_path, v.asserted"
    )
    rows = recent_across(catalog, sessions, entity_type, scan, columns, event_types=True)
    retracted = [row[-1] for found in rows.values() for row in found if row[0] != row[-1]]
    currents = catalog.versions(retracted) if retracted else {}
    needles = [needle.encode() for needle in containing]

    def wanted(row: tuple[Any, ...]) -> bool:
        if not needles:
            return True
        if row[0] != row[-1]:
            version = currents.get(row[-1])
            texts = (b"",) if version is None else (version.summary.encode(), version.properties_json.encode())
        elif _in_log(row[4]):  # a summary kept in the log (not a type read in bulk): read as a reader would
            version = _version((row[0], row[-2], *row[1:-2]), catalog.log_texts)
            texts = (version.summary.encode(), version.properties_json.encode())
        else:
            raw = _raw(row[4])
            size = 4 + int.from_bytes(raw[:4], "little")
            texts = (raw[4:size], timed(raw[size:], row[5]))  # summary, properties JSON (as _pack lays them out)
        return any(needle in text for needle in needles for text in texts)

    return {
        session: [
            _version((row[0], row[-2], *row[1:-2]), catalog.log_texts) if row[0] == row[-1] else currents[row[-1]]
            for row in found
            if (row[0] == row[-1] or currents.get(row[-1]) is not None) and wanted(row)
        ]
        for session, found in rows.items()
    }


def recent_heads_many(
    catalog: SqliteCatalog, sessions: Sequence[str], entity_type: str, scan: int
) -> dict[str, list[tuple[str, str, int, str | None]]]:
    """:meth:`recent_heads` of each session, in one query."""
    rows = recent_across(catalog, sessions, entity_type, scan, "lower(hex(v.id)), v.valid_from, v.seq, v.source_path")
    retracted = [row[-1] for found in rows.values() for row in found if row[0] != row[-1]]
    currents = catalog.versions(retracted) if retracted else {}

    def head(row: tuple[Any, ...]) -> tuple[str, str, int, str | None] | None:
        if row[0] == row[-1]:
            return row[0], row[1], int(row[2]), row[3]
        version = currents.get(row[-1])
        if version is None:
            return None
        return version.id, version.valid_from, version.source_event_seq, version.source_path

    return {session: [found for found in map(head, found) if found is not None] for session, found in rows.items()}


def first_recent_keys_many(
    catalog: SqliteCatalog, sessions: Sequence[str], entity_type: str, first: int, scan: int
) -> dict[str, list[str]]:
    """``recent_keys(session, entity_type, scan)[:first]`` of each session: each session's versions are read
    newest first only until ``first`` identities are found (a tier lists 12 of the 200 it may scan)."""
    kids: dict[str, list[int]] = {}
    reader = catalog.store.reader()
    statement = (
        "SELECT kid FROM cat_versions WHERE sid = (SELECT sid FROM cat_sessions WHERE name = ?) "
        "AND tid = (SELECT tid FROM cat_types WHERE name = ?) ORDER BY vid DESC LIMIT ?"
    )
    for session in sessions:
        found: dict[int, None] = {}
        if first > 0:
            cursor = reader.execute(statement, (session, entity_type, scan))
            for (kid,) in cursor:
                found[kid] = None
                if len(found) >= first:
                    break
            cursor.close()
        kids[session] = list(found)
    wanted = sorted({kid for found in kids.values() for kid in found})
    keys: dict[int, str] = {}
    for start in range(0, len(wanted), _IN_CHUNK):
        chunk = wanted[start : start + _IN_CHUNK]
        keys.update(
            _rows(
                catalog,
                "SELECT k.kid, s.name || char(31) || t.name || char(31) || k.norm FROM cat_keys k "
                "JOIN cat_sessions s ON s.sid = k.sid JOIN cat_types t ON t.tid = k.tid "
                f"WHERE k.kid IN ({','.join(map(str, chunk))})",
            )
        )
    return {session: [keys[kid] for kid in found] for session, found in kids.items()}
