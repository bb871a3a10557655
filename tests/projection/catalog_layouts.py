"""Earlier catalog layouts rebuilt from a current ``derived.sqlite`` (what an older version of Zaxy wrote), for the
tests of the in-place migrations (``catalog_migrations.py``)."""

from __future__ import annotations

import sqlite3

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


def to_layout_4(db: sqlite3.Connection) -> None:
    """Identities and versions as layout 4 stored them: names, keys and version ids as text (same vid / kid)."""
    db.execute(_V4_KEYS.replace("cat_keys(", "old_keys(", 1))
    db.execute(
        "INSERT INTO old_keys SELECT k.kid, s.name || char(31) || t.name || char(31) || k.norm, s.name, k.norm, "
        "lower(hex(v.id)), k.closed FROM cat_keys k JOIN cat_sessions s ON s.sid = k.sid "
        "JOIN cat_types t ON t.tid = k.tid JOIN cat_versions v ON v.vid = k.cur"
    )
    db.execute(_V4_VERSIONS.replace("cat_versions(", "old_versions(", 1))
    db.execute(
        "INSERT INTO old_versions SELECT v.vid, lower(hex(v.id)), v.kid, s.name, v.name, t.name, v.body, v.valid_from, "
        "v.valid_to, v.invalidated, v.seq, v.hash, e.name, v.importance, v.source_path, v.asserted FROM cat_versions v "
        "JOIN cat_sessions s ON s.sid = v.sid JOIN cat_types t ON t.tid = v.tid JOIN cat_types e ON e.tid = v.etid"
    )
    for table in ("cat_keys", "cat_versions", "cat_sessions", "cat_types"):
        db.execute(f"DROP TABLE {table}")
    db.execute("ALTER TABLE old_keys RENAME TO cat_keys")
    db.execute("ALTER TABLE old_versions RENAME TO cat_versions")
    for statement in _V4_INDEXES:
        db.execute(statement)
    db.execute("UPDATE meta SET value = '4' WHERE key = 'schema:catalog'")
