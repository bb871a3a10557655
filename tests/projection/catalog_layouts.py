"""Earlier catalog layouts rebuilt from a current ``derived.sqlite`` (what an older version of Zaxy wrote), for the
tests of the in-place migrations (``catalog_migrations.py``)."""

from __future__ import annotations

import sqlite3

from zaxy_agents.projection.catalog_rows import _pack, _unpack

_V4_KEYS = (
    "CREATE TABLE cat_keys(kid INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, session TEXT NOT NULL, "
    "norm TEXT NOT NULL, current TEXT NOT NULL, closed INTEGER NOT NULL)"
)
_V4_VERSIONS = (
    "CREATE TABLE cat_versions(vid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, kid INTEGER NOT NULL, "
    "session TEXT NOT NULL, name TEXT NOT NULL, entity_type TEXT NOT NULL, body BLOB NOT NULL, "
    "valid_from TEXT NOT NULL, valid_to TEXT, invalidated INTEGER NOT NULL, "
    "seq INTEGER NOT NULL, hash BLOB NOT NULL, event_type TEXT NOT NULL, importance REAL NOT NULL, "
    "source_path TEXT, asserted INTEGER NOT NULL)"
)
_V4_INDEXES = (
    "CREATE INDEX cat_keys_norm ON cat_keys(norm)",
    "CREATE INDEX cat_versions_kid ON cat_versions(kid)",
    "CREATE INDEX cat_versions_event ON cat_versions(session, seq)",
    "CREATE INDEX cat_versions_type ON cat_versions(session, entity_type)",
)


_V3_EDGES = (
    "CREATE TABLE cat_edges(eid INTEGER PRIMARY KEY, id NOT NULL, source_id NOT NULL, target_id NOT NULL, "
    "source_kid INTEGER NOT NULL, target_kid INTEGER NOT NULL, relation_type TEXT NOT NULL, session TEXT NOT NULL, "
    "inferred INTEGER NOT NULL, confidence REAL NOT NULL, method TEXT, ev_session TEXT, ev_seq INTEGER, "
    "ev_hash BLOB, valid_from TEXT NOT NULL, valid_to TEXT, seq INTEGER NOT NULL, hash BLOB NOT NULL)"
)


def to_layout_6(db: sqlite3.Connection) -> None:
    """Bodies as layouts 2-6 stored them: a version's valid_from spelled out in its properties."""
    rows = db.execute("SELECT vid, body, valid_from FROM cat_versions").fetchall()
    for vid, body, valid_from in rows:
        summary, properties = _unpack(body, valid_from)
        db.execute(
            "UPDATE cat_versions SET body = ? WHERE vid = ?", (_pack(summary or "", properties, summary is None), vid)
        )
    db.execute("UPDATE meta SET value = '6' WHERE key = 'schema:catalog'")


def to_layout_5(db: sqlite3.Connection) -> None:
    """Edges as layouts 3-5 stored them: ends as version ids (12-byte blobs), names as text, event time and hash
    spelled out (same eid); every version's name spelled out."""
    to_layout_6(db)
    db.execute(_V3_EDGES.replace("cat_edges(", "old_edges(", 1))
    db.execute(
        "INSERT INTO old_edges SELECT e.eid, e.id, sv.id, tv.id, e.source_kid, e.target_kid, r.name, s.name, "
        "e.inferred, e.confidence, e.method, e.ev_session, e.ev_seq, e.ev_hash, "
        "CASE e.borrow WHEN 1 THEN tv.valid_from WHEN 2 THEN sv.valid_from ELSE e.valid_from END, e.valid_to, e.seq, "
        "CASE e.borrow WHEN 1 THEN tv.hash WHEN 2 THEN sv.hash ELSE e.hash END FROM cat_edges e "
        "JOIN cat_versions sv ON sv.vid = e.source_vid JOIN cat_versions tv ON tv.vid = e.target_vid "
        "JOIN cat_types r ON r.tid = e.rtid JOIN cat_sessions s ON s.sid = e.sid"
    )
    db.execute("DROP TABLE cat_edges")
    db.execute("ALTER TABLE old_edges RENAME TO cat_edges")
    db.execute("CREATE INDEX cat_edges_out ON cat_edges(source_kid)")
    db.execute("CREATE INDEX cat_edges_in ON cat_edges(target_kid)")
    db.execute(
        "UPDATE cat_versions SET name = (SELECT norm FROM cat_keys WHERE kid = cat_versions.kid) WHERE name IS NULL"
    )
    db.execute("UPDATE meta SET value = '5' WHERE key = 'schema:catalog'")


def to_layout_4(db: sqlite3.Connection) -> None:
    """Identities and versions as layout 4 stored them: names, keys and version ids as text (same vid / kid)."""
    to_layout_5(db)
    db.execute(_V4_KEYS.replace("cat_keys(", "old_keys(", 1))
    db.execute(
        "INSERT INTO old_keys SELECT k.kid, s.name || char(31) || t.name || char(31) || k.norm, s.name, k.norm, "
        "lower(hex(v.id)), k.closed FROM cat_keys k JOIN cat_sessions s ON s.sid = k.sid "
        "JOIN cat_types t ON t.tid = k.tid JOIN cat_versions v ON v.vid = k.cur"
    )
    db.execute(_V4_VERSIONS.replace("cat_versions(", "old_versions(", 1))
    db.execute(
        "INSERT INTO old_versions SELECT v.vid, lower(hex(v.id)), v.kid, s.name, coalesce(v.name, k.norm), t.name, "
        "v.body, v.valid_from, v.valid_to, v.invalidated, v.seq, v.hash, e.name, v.importance, v.source_path, "
        "v.asserted FROM cat_versions v JOIN cat_keys k ON k.kid = v.kid JOIN cat_sessions s ON s.sid = v.sid "
        "JOIN cat_types t ON t.tid = v.tid JOIN cat_types e ON e.tid = v.etid"
    )
    for table in ("cat_keys", "cat_versions", "cat_sessions", "cat_types"):
        db.execute(f"DROP TABLE {table}")
    db.execute("ALTER TABLE old_keys RENAME TO cat_keys")
    db.execute("ALTER TABLE old_versions RENAME TO cat_versions")
    for statement in _V4_INDEXES:
        db.execute(statement)
    db.execute("UPDATE meta SET value = '4' WHERE key = 'schema:catalog'")
