"""Writing projected batches into the catalog's tables (inside the projector's transaction), and erasing a
session's rows. What each write changed is noted in a :class:`Touched`, so the commit drops only those cache
entries (:class:`~zaxy_agents.projection.sqlite_catalog.SqliteCatalog`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from zaxy_agents.projection.catalog_ids import CatalogIds, StagedIds
from zaxy_agents.projection.catalog_rows import (
    _HEX_ID,
    FAILURE_SAMPLES,
    ID_OUT,
    KEY_OUT,
    SID_OF,
    TEXT_FROM_LOG,
    _chunks,
    _key_type,
    _pack,
    edge_values,
    key_parts,
    vid_bytes,
)
from zaxy_agents.projection.planner import ProjectionBatch

KEYS_PER_INSERT = 100  # new identities per INSERT ... RETURNING (5 parameters each)


@dataclass
class Touched:
    """What the batches applied in one write transaction changed: the cache entries its commit must drop."""

    serial: int
    versions: set[str] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)
    events: set[tuple[str, int]] = field(default_factory=set)
    edge_keys: set[str] = field(default_factory=set)
    feedback: set[str] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)  # whose identities gained, changed or closed a version
    types: set[tuple[str, str]] = field(default_factory=set)  # (session, entity_type) of those versions
    names: set[str] = field(default_factory=set)  # normalised names of the identities it created
    cursors: dict[str, tuple[int, str]] = field(default_factory=dict)  # the cursors it wrote (kept, not re-read)
    latest: str = ""  # the largest event timestamp it wrote into the latest_timestamp counter
    everything: bool = False  # rows were deleted (erasure, reset): the commit drops every cache
    ids: StagedIds = field(default_factory=StagedIds)  # ids it looked up or created (catalog_ids.py)


def apply_batch(
    touched: Touched,
    db: sqlite3.Connection,
    batch: ProjectionBatch,
    *,
    summaries_in_log: bool,
    ids: CatalogIds | None = None,
) -> None:
    """Write one planned batch (inside the projector's transaction): versions, identities, closures,
    edges, feedback, failures, labels, sources, counters and the cursors it covers. ``summaries_in_log``: the
    summaries of raw-text entities (:data:`~.catalog_rows.TEXT_FROM_LOG`) are left in the log. ``ids``: the ids
    committed transactions looked up or created (valid for ``db``'s state: the caller checked no other connection
    wrote since); without it every id is looked up."""
    _note_touched(touched, db, batch)
    ids = CatalogIds() if ids is None else ids
    staged = touched.ids
    sessions = [row["session_id"] for row in (*batch.entities, *batch.relations)]
    sessions += [session for session, _, _ in batch.refs]
    sids = _name_ids(db, "cat_sessions", "sid", sessions, ids, staged)  # one lookup per dictionary and batch
    types = [name for row in batch.entities for name in (row["entity_type"], row["source_event_type"])]
    types += [row["relation_type"] for row in batch.relations]
    tids = _name_ids(db, "cat_types", "tid", types, ids, staged)
    first = ids.vid(staged)
    if first is None:
        first = db.execute("SELECT coalesce(max(vid), 0) + 1 FROM cat_versions").fetchone()[0]
    staged.next_vid = first + len(batch.entities)  # the versions below take first .. first + n - 1
    vids = {row["id"]: vid for vid, row in enumerate(batch.entities, first)}  # assertion order, as rowids would be
    kids = _write_keys(db, batch, sids, tids, vids, ids, staged)
    db.executemany(
        "INSERT INTO cat_versions(vid, id, kid, sid, name, tid, body, valid_from, "
        "valid_to, invalidated, seq, hash, etid, importance, source_path, asserted) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                vid,
                _stored_id(row["id"]),
                kids[row["key"]],
                sids[row["session_id"]],
                None if row["name"] == _parts(row["key"])[0] else row["name"],  # read back as the key's norm
                tids[row["entity_type"]],
                _pack(
                    row["summary"] or "",
                    row["properties"] or "",
                    summaries_in_log and row["entity_type"] in TEXT_FROM_LOG,
                    row["valid_from"],
                ),
                row["valid_from"],
                row["valid_to"],
                int(bool(row["invalidated"])),
                int(row["source_event_seq"]),
                bytes.fromhex(row["source_event_hash"]),
                tids[row["source_event_type"]],
                float(row["importance"]),
                row.get("source_path"),
                int(row.get("asserted") is not False),
            )
            for vid, row in enumerate(batch.entities, first)
        ],
    )
    if batch.key_updates:
        db.executemany(
            "UPDATE cat_keys SET cur = (SELECT vid FROM cat_versions WHERE id = ?), closed = ? "
            f"WHERE norm = ? AND sid = {SID_OF.format('?')} AND tid = (SELECT tid FROM cat_types WHERE name = ?)",
            [
                (vid_bytes(row["current_version"]), int(bool(row["closed"])), *_parts(row["id"]))
                for row in batch.key_updates
            ],
        )
    if batch.closures:
        db.executemany(
            "UPDATE cat_versions SET valid_to = ?, invalidated = ? WHERE id = ?",
            [(row["valid_to"], int(bool(row["invalidated"])), vid_bytes(row["id"])) for row in batch.closures],
        )
    if batch.relations:
        ends = {  # the batch's own versions, as the endpoint lookup would read them back
            row["id"]: (
                (vids[row["id"]], kids[row["key"]], int(row["source_event_seq"]), row["valid_from"],
                 bytes.fromhex(row["source_event_hash"])),
                row["key"],
            )
            for row in batch.entities
        }  # fmt: skip
        touched.edge_keys.update(_write_edges(db, batch, sids, tids, ends))
    for row in batch.feedback:
        positive = bool(row["positive"])
        db.execute(
            "INSERT INTO cat_feedback(key, positive, negative, weight, last) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET positive = positive + excluded.positive, "
            "negative = negative + excluded.negative, weight = weight + excluded.weight, "
            "last = max(last, excluded.last)",
            (
                row["entity_key"],
                int(positive),
                int(not positive),
                float(row["weight"]) if positive else 0.0,
                row["timestamp"],
            ),
        )
    if batch.failures:
        db.executemany(
            "INSERT INTO cat_failures(id, session, seq, event_type, reason) VALUES (?, ?, ?, ?, ?)",
            [(r["id"], r["session_id"], r["seq"], r["event_type"], r["reason"]) for r in batch.failures[-20:]],
        )
        db.execute("DELETE FROM cat_failures WHERE rid <= (SELECT max(rid) FROM cat_failures) - ?", (FAILURE_SAMPLES,))
        per_session: dict[str, int] = {}
        for row in batch.failures:
            per_session[row["session_id"]] = per_session.get(row["session_id"], 0) + 1
        db.executemany(
            "INSERT INTO cat_failure_counts(session, n) VALUES (?, ?) ON CONFLICT(session) DO UPDATE "
            "SET n = n + excluded.n",
            sorted(per_session.items()),
        )
    if batch.new_labels:
        db.executemany("INSERT OR IGNORE INTO cat_labels(label) VALUES (?)", [(label,) for label in batch.new_labels])
    if batch.sources:
        db.executemany("INSERT OR IGNORE INTO cat_sources(id) VALUES (?)", [(row["id"],) for row in batch.sources])
    if batch.refs:
        db.executemany(
            "INSERT OR IGNORE INTO cat_refs(sid, h, seq) VALUES (?, ?, ?)",
            [(sids[session], digest, seq) for session, digest, seq in batch.refs],
        )
    latest = max((row["timestamp"] for row in batch.events), default="")
    touched.cursors.update(batch.cursors)
    if latest:
        touched.latest = max(touched.latest, latest)
        db.execute(
            "INSERT INTO cat_counters(name, value) VALUES ('latest_timestamp', ?) ON CONFLICT(name) DO UPDATE "
            "SET value = max(value, excluded.value)",
            (latest,),
        )
    db.executemany(
        "INSERT OR REPLACE INTO cat_cursors(session, seq, hash) VALUES (?, ?, ?)",
        [(session, seq, digest) for session, (seq, digest) in sorted(batch.cursors.items())],
    )


def _note_touched(touched: Touched, db: sqlite3.Connection, batch: ProjectionBatch) -> None:
    """Remember the cache entries this batch changes (dropped when its transaction commits)."""
    touched.versions.update(row["id"] for row in batch.entities)
    touched.versions.update(row["id"] for row in batch.closures)
    touched.keys.update(row["id"] for row in batch.entity_keys)
    touched.names.update(row["norm_name"] for row in batch.entity_keys)
    touched.keys.update(row["id"] for row in batch.key_updates)
    touched.keys.update(row["key"] for row in batch.entities)
    touched.events.update((row["session_id"], int(row["source_event_seq"])) for row in batch.entities)
    touched.sessions.update(row["session_id"] for row in batch.entities)
    touched.types.update((row["session_id"], row["entity_type"]) for row in batch.entities)
    for chunk in _chunks(sorted({row["id"] for row in batch.closures})):  # events listing a closed version
        marks = ",".join("?" * len(chunk))
        for session, seq, entity_type in db.execute(
            "SELECT s.name, v.seq, t.name FROM cat_versions v JOIN cat_sessions s ON s.sid = v.sid "
            f"JOIN cat_types t ON t.tid = v.tid WHERE v.id IN ({marks})",
            [vid_bytes(version_id) for version_id in chunk],
        ):
            touched.events.add((session, int(seq)))
            touched.sessions.add(session)
            touched.types.add((session, entity_type))
    for key in {row["id"] for row in batch.key_updates}:  # identities whose current moved (they exist: planned)
        parts = key_parts(key)
        if parts is not None:
            touched.sessions.add(parts[1])
            touched.types.add((parts[1], _key_type(key)))
    touched.feedback.update(row["entity_key"] for row in batch.feedback)


def _stored_id(version_id: str) -> bytes:
    """A new version's id as stored (12 bytes): ids are ``stable_id`` hex digits, anything else is refused."""
    if not _HEX_ID.fullmatch(version_id):
        raise ValueError(f"version id {version_id!r}: expected 24 lower-case hex digits (stable_id)")
    return bytes.fromhex(version_id)


def _parts(key: str) -> tuple[str, str, str]:
    parts = key_parts(key)
    if parts is None:
        raise ValueError(f"identity key {key!r}: expected 'session\\x1ftype\\x1fname' (entity_key)")
    return parts


def _name_ids(
    db: sqlite3.Connection, table: str, column: str, names: list[str], ids: CatalogIds, staged: StagedIds
) -> dict[str, int]:
    """``name -> id`` in a dictionary table (``cat_sessions`` / ``cat_types``), adding the names it lacks in the
    order they first appear (one event at a time and one batch number them alike; ``INSERT OR IGNORE`` would
    spend an AUTOINCREMENT id on every name it ignores). Names whose id is remembered are not looked up."""
    ordered = list(dict.fromkeys(names))
    found: dict[str, int] = {}
    unknown: list[str] = []
    for name in ordered:
        known = ids.name_id(staged, table, name)
        if known is None:
            unknown.append(name)
        else:
            found[name] = known
    for chunk in _chunks(unknown):
        marks = ",".join("?" * len(chunk))
        found.update(db.execute(f"SELECT name, {column} FROM {table} WHERE name IN ({marks})", chunk).fetchall())
    missing = [name for name in ordered if name not in found]
    for name in missing:
        found[name] = db.execute(f"INSERT INTO {table}(name) VALUES (?) RETURNING {column}", (name,)).fetchone()[0]
    staged.names[table].update((name, found[name]) for name in unknown)
    return found


def _write_keys(
    db: sqlite3.Connection,
    batch: ProjectionBatch,
    sids: dict[str, int],
    tids: dict[str, int],
    vids: dict[str, int],
    ids: CatalogIds,
    staged: StagedIds,
) -> dict[str, int]:
    """Insert the new identities (their current version is one of the batch's: ``vids``); returns ``key -> kid``
    for every key the batch's versions use (remembered ones are not looked up)."""
    rows = []
    keyed: dict[tuple[int, int, str], str] = {}  # (sid, tid, norm) -> the new identity's key
    for row in batch.entity_keys:
        norm, session, entity_type = _parts(row["id"])
        if (session, entity_type) != (row["session_id"], row["entity_type"]) or norm != row["norm_name"]:
            raise ValueError(f"identity key {row['id']!r} does not name its session, type and normalised name")
        current = vids.get(row["current_version"])
        if current is None:
            found = db.execute("SELECT vid FROM cat_versions WHERE id = ?", (vid_bytes(row["current_version"]),))
            current = found.fetchone()[0]
        rows.append((sids[session], tids[entity_type], norm, current, int(bool(row["closed"]))))
        keyed[rows[-1][:3]] = row["id"]
    kids: dict[str, int] = {}
    for start in range(0, len(rows), KEYS_PER_INSERT):  # rows take their kids in VALUES order, as one insert each
        chunk = rows[start : start + KEYS_PER_INSERT]
        values = ", ".join(["(?, ?, ?, ?, ?)"] * len(chunk))
        for sid, tid, norm, kid in db.execute(
            f"INSERT INTO cat_keys(sid, tid, norm, cur, closed) VALUES {values} RETURNING sid, tid, norm, kid",
            [value for row in chunk for value in row],
        ).fetchall():
            kids[keyed[(sid, tid, norm)]] = kid
    staged.kids.update(kids)
    unknown: set[str] = set()
    for key in {row["key"] for row in batch.entities}.difference(kids):
        kid = ids.kid(staged, key)
        if kid is None:
            unknown.add(key)
        else:
            kids[key] = kid
    found = _kids(db, unknown)
    staged.kids.update(found)
    kids.update(found)
    return kids


def _kids(db: sqlite3.Connection, keys: Iterable[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for chunk in _chunks(sorted(keys)):
        for index, kid in db.execute(
            "SELECT j.key, k.kid FROM json_each(?) j JOIN cat_keys k ON k.norm = j.value ->> 0 "
            "AND k.sid = (SELECT sid FROM cat_sessions WHERE name = j.value ->> 1) "
            "AND k.tid = (SELECT tid FROM cat_types WHERE name = j.value ->> 2)",
            (json.dumps([_parts(key) for key in chunk]),),
        ):
            found[chunk[index]] = kid
    return found


def _write_edges(
    db: sqlite3.Connection,
    batch: ProjectionBatch,
    sids: dict[str, int],
    rtids: dict[str, int],
    own: dict[str, tuple[tuple[int, int, int, str, bytes], str]],
) -> set[str]:
    """Insert the batch's relations; returns the identity keys of their endpoints. ``own``: the batch's versions
    (id -> their ``(vid, kid, seq, valid_from, hash)`` and identity key): a relation made by the event that made
    its ends (most of them) reads nothing back; other ends are looked up."""
    endpoints = {v for row in batch.relations for v in (row["from"], row["to"])}
    ends: dict[str, tuple[int, int, int, str, bytes]] = {}
    keys: set[str] = set()
    for version_id in endpoints.intersection(own):
        ends[version_id], key = own[version_id]
        keys.add(key)
    for chunk in _chunks(sorted(endpoints.difference(own))):
        marks = ",".join("?" * len(chunk))
        for version_id, vid, kid, seq, valid_from, digest, key in db.execute(
            f"SELECT {ID_OUT}, v.vid, v.kid, v.seq, v.valid_from, v.hash, {KEY_OUT} FROM cat_versions v "
            "JOIN cat_keys k ON k.kid = v.kid JOIN cat_sessions s ON s.sid = k.sid JOIN cat_types t ON t.tid = k.tid "
            f"WHERE v.id IN ({marks})",
            [vid_bytes(version_id) for version_id in chunk],
        ):
            ends[version_id] = (vid, kid, int(seq), valid_from, digest)
            keys.add(key)
    db.executemany(
        "INSERT INTO cat_edges(id, source_vid, target_vid, source_kid, target_kid, rtid, sid, inferred, confidence, "
        "method, ev_session, ev_seq, ev_hash, borrow, valid_from, valid_to, seq, hash) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            edge_values(row, ends[row["from"]], ends[row["to"]], rtids[row["relation_type"]], sids[row["session_id"]])
            for row in batch.relations
        ],
    )
    return keys


def delete_session_rows(touched: Touched, db: sqlite3.Connection, session: str) -> None:
    """Remove every row planned from ``session`` (erasure: the session is then replayed from the log)."""
    touched.everything = True
    sid = SID_OF.format("?")
    db.execute(f"DELETE FROM cat_edges WHERE sid = {sid}", (session,))
    db.execute(f"DELETE FROM cat_versions WHERE sid = {sid}", (session,))
    db.execute("DELETE FROM cat_feedback WHERE key >= ? AND key < ?", (f"{session}\x1f", f"{session}\x20"))
    db.execute(f"DELETE FROM cat_keys WHERE sid = {sid}", (session,))
    db.execute(f"DELETE FROM cat_refs WHERE sid = {sid}", (session,))
    db.execute(f"DELETE FROM cat_refs_partial WHERE sid = {sid}", (session,))  # its replay writes every row
    db.execute("DELETE FROM cat_sessions WHERE name = ?", (session,))  # ids are never reused (AUTOINCREMENT)
    db.execute("DELETE FROM cat_failures WHERE session = ?", (session,))
    db.execute("DELETE FROM cat_failure_counts WHERE session = ?", (session,))
    db.execute("DELETE FROM cat_sources WHERE id >= ? AND id < ?", (f"{session}\x1f", f"{session}\x20"))
    db.execute("DELETE FROM cat_cursors WHERE session = ?", (session,))
