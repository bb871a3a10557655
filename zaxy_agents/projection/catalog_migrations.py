"""In-place migrations of the catalog's tables (run on first open, before the version check that would otherwise
drop and rebuild them from the log).

2 -> 3: raw-text summaries (:data:`~.catalog_rows.TEXT_FROM_LOG`) leave the catalog: each such version's body is
rewritten without its summary (the log holds it; readers re-derive it from the cited event). A back-fill of the
bodies only, in one transaction: no event is re-read, the indexes keep their rows and cursors, and a crash
mid-way leaves version 2 intact (the migration runs again). The freed space is reused by later writes.
"""

from __future__ import annotations

import json
import sqlite3

from zaxy_agents.projection.catalog_rows import NAME, SCHEMA_VERSION, TEXT_FROM_LOG, _pack, _unpack
from zaxy_agents.storage.derived.store import ID_LIST, DerivedStore

_BATCH = 2_000  # bodies rewritten per statement


def migrate(store: DerivedStore) -> bool:
    """Bring a version-2 catalog to the current layout in place; True when it did."""
    if store.meta(f"schema:{NAME}") != "2" or SCHEMA_VERSION != 3:
        return False
    with store.write() as db:
        if db.execute("SELECT value FROM meta WHERE key=?", (f"schema:{NAME}",)).fetchone() != ("2",):
            return False  # another process migrated it meanwhile
        _summaries_to_log(db)
        store.set_meta(db, f"schema:{NAME}", str(SCHEMA_VERSION))
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
