"""Writing projected batches into the catalog's tables (inside the projector's transaction), and erasing a
session's rows. What each write changed is noted in a :class:`Touched`, so the commit drops only those cache
entries (:class:`~zaxy_agents.projection.sqlite_catalog.SqliteCatalog`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from zaxy_agents.projection.catalog_rows import FAILURE_SAMPLES, TEXT_FROM_LOG, _chunks, _edge_values, _key_type, _pack
from zaxy_agents.projection.planner import ProjectionBatch


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


def apply_batch(touched: Touched, db: sqlite3.Connection, batch: ProjectionBatch, *, summaries_in_log: bool) -> None:
    """Write one planned batch (inside the projector's transaction): versions, identities, closures,
    edges, feedback, failures, labels, sources, counters and the cursors it covers. ``summaries_in_log``: the
    summaries of raw-text entities (:data:`~.catalog_rows.TEXT_FROM_LOG`) are left in the log."""
    _note_touched(touched, db, batch)
    kids = _write_keys(db, batch)
    db.executemany(
        "INSERT INTO cat_versions(id, kid, session, name, entity_type, body, valid_from, "
        "valid_to, invalidated, seq, hash, event_type, importance, source_path, asserted) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                row["id"],
                kids[row["key"]],
                row["session_id"],
                row["name"],
                row["entity_type"],
                _pack(
                    row["summary"] or "",
                    row["properties"] or "",
                    summaries_in_log and row["entity_type"] in TEXT_FROM_LOG,
                ),
                row["valid_from"],
                row["valid_to"],
                int(bool(row["invalidated"])),
                int(row["source_event_seq"]),
                bytes.fromhex(row["source_event_hash"]),
                row["source_event_type"],
                float(row["importance"]),
                row.get("source_path"),
                int(row.get("asserted") is not False),
            )
            for row in batch.entities
        ],
    )
    if batch.key_updates:
        db.executemany(
            "UPDATE cat_keys SET current = ?, closed = ? WHERE key = ?",
            [(row["current_version"], int(bool(row["closed"])), row["id"]) for row in batch.key_updates],
        )
    if batch.closures:
        db.executemany(
            "UPDATE cat_versions SET valid_to = ?, invalidated = ? WHERE id = ?",
            [(row["valid_to"], int(bool(row["invalidated"])), row["id"]) for row in batch.closures],
        )
    if batch.relations:
        touched.edge_keys.update(_write_edges(db, batch))
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
            f"SELECT session, seq, entity_type FROM cat_versions WHERE id IN ({marks})", chunk
        ):
            touched.events.add((session, int(seq)))
            touched.sessions.add(session)
            touched.types.add((session, entity_type))
    for chunk in _chunks(sorted({row["id"] for row in batch.key_updates})):  # identities whose current moved
        marks = ",".join("?" * len(chunk))
        for session, key in db.execute(f"SELECT session, key FROM cat_keys WHERE key IN ({marks})", chunk):
            touched.sessions.add(session)
            touched.types.add((session, _key_type(key)))
    touched.feedback.update(row["entity_key"] for row in batch.feedback)


def _write_keys(db: sqlite3.Connection, batch: ProjectionBatch) -> dict[str, int]:
    """Insert the new identities; returns ``key -> kid`` for every key the batch's versions use."""
    db.executemany(
        "INSERT INTO cat_keys(key, session, norm, current, closed) VALUES (?, ?, ?, ?, ?)",
        [
            (row["id"], row["session_id"], row["norm_name"], row["current_version"], int(bool(row["closed"])))
            for row in batch.entity_keys
        ],
    )
    return _kids(db, {row["key"] for row in batch.entities})


def _kids(db: sqlite3.Connection, keys: Iterable[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for chunk in _chunks(sorted(keys)):
        marks = ",".join("?" * len(chunk))
        found.update(db.execute(f"SELECT key, kid FROM cat_keys WHERE key IN ({marks})", chunk).fetchall())
    return found


def _write_edges(db: sqlite3.Connection, batch: ProjectionBatch) -> set[str]:
    """Insert the batch's relations; returns the identity keys of their endpoints."""
    endpoints = {v for row in batch.relations for v in (row["from"], row["to"])}
    kid_of: dict[str, int] = {}
    keys: set[str] = set()
    for chunk in _chunks(sorted(endpoints)):
        marks = ",".join("?" * len(chunk))
        for version_id, kid, key in db.execute(
            f"SELECT v.id, v.kid, k.key FROM cat_versions v JOIN cat_keys k ON k.kid = v.kid WHERE v.id IN ({marks})",
            chunk,
        ):
            kid_of[version_id] = kid
            keys.add(key)
    db.executemany(
        "INSERT INTO cat_edges(id, source_id, target_id, source_kid, target_kid, relation_type, session, "
        "inferred, confidence, method, ev_session, ev_seq, ev_hash, valid_from, valid_to, seq, hash) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [_edge_values(row, kid_of[row["from"]], kid_of[row["to"]]) for row in batch.relations],
    )
    return keys


def delete_session_rows(touched: Touched, db: sqlite3.Connection, session: str) -> None:
    """Remove every row planned from ``session`` (erasure: the session is then replayed from the log)."""
    touched.everything = True
    db.execute("DELETE FROM cat_edges WHERE session = ?", (session,))
    db.execute("DELETE FROM cat_versions WHERE session = ?", (session,))
    db.execute("DELETE FROM cat_feedback WHERE key >= ? AND key < ?", (f"{session}\x1f", f"{session}\x20"))
    db.execute("DELETE FROM cat_keys WHERE session = ?", (session,))
    db.execute("DELETE FROM cat_failures WHERE session = ?", (session,))
    db.execute("DELETE FROM cat_failure_counts WHERE session = ?", (session,))
    db.execute("DELETE FROM cat_sources WHERE id >= ? AND id < ?", (f"{session}\x1f", f"{session}\x20"))
    db.execute("DELETE FROM cat_cursors WHERE session = ?", (session,))
