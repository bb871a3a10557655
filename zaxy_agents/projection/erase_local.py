"""Erasing events from the catalog without re-planning their session, when nothing else depends on them.

Why: the catalog is what planning the session's events in order produced, and an erased event plans nothing. The
projector used to delete every row of the session and re-plan it from the scrubbed log (O(session): a batch of 100
store deletes after 20,000 puts re-planned the 20,000). Most erasures change nothing that any other event's rows
were planned from, and then the rows the erased events made are exactly what a re-plan would not make:

- a key an erased event *changed* (a version made at that event, an invalidation or feedback it names) is
  *local* when every event that refers to it is erased (``cat_refs``: which events refer to each key,
  whether or not that made a row). Its identity, versions, edges and feedback aggregate all came from erased
  events: they are deleted;
- a key an erased event only *read* (a reference that found it existing, an edge's end: a chat turn's speaker)
  keeps its state: no erased event made a version of it or closed it, so every other event planned it the same.
  Only the erased event's own edges go.

:func:`erase_locally` checks that every changed key is local, then deletes the erased events' rows (versions,
edges, the changed identities and feedback aggregates, the sources no remaining version cites, their failures,
their ``cat_refs`` rows, and the session's name when nothing of it is left) and returns True. Otherwise (a changed
key another event refers to: a fact a later event superseded, the speaker's first turn, a session projected before
``cat_refs`` existed, events whose pre-erasure content is not known here) it changes nothing and returns False: the
projector then re-plans the session, as before.
``tests/projection/test_erase_local.py`` compares both paths with a fresh rebuild, table by table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from .catalog_rows import SID_OF, _chunks
from .model import Extraction, entity_key
from .planner import ProjectionPlanner, referenced
from .refs import key_hash


def erase_locally(
    db: sqlite3.Connection,
    session: str,
    envelopes: dict[int, dict[str, Any]],
    extractions: dict[int, Extraction],
) -> bool:
    """Delete the catalog rows of the erased events ``envelopes`` (their pre-erasure envelopes, projected already,
    and their extractions) when no other event depends on them (module docstring); False, and nothing changed, when
    some event does. Inside the caller's write transaction."""
    row = db.execute(f"SELECT {SID_OF.format('?')}", (session,)).fetchone()
    sid = row[0] if row else None
    erased = sorted(envelopes)
    if sid is None:  # no row names the session (it planned no rows yet): only failures may be recorded
        return _forget_failures(db, session, envelopes, extractions)
    if db.execute("SELECT 1 FROM cat_refs_partial WHERE sid = ?", (sid,)).fetchone():
        return False  # projected before layout 8: its earlier references are not recorded
    changed: dict[str, int | None] = {}  # key -> its kid (None: no identity, e.g. an invalidation that failed)
    paths: set[str] = set()
    for chunk in _chunks(erased):
        marks = ",".join("?" * len(chunk))
        for kid, kind, norm, path in db.execute(
            "SELECT v.kid, t.name, k.norm, v.source_path FROM cat_versions v JOIN cat_keys k ON k.kid = v.kid "
            f"JOIN cat_types t ON t.tid = k.tid WHERE v.sid = ? AND v.seq IN ({marks})",
            (sid, *chunk),
        ):
            changed[f"{session}\x1f{kind}\x1f{norm}"] = kid
            if path:
                paths.add(path)
    feedback: set[str] = set()
    for extraction in extractions.values():
        for invalidation in extraction.invalidations:
            changed.setdefault(entity_key(session, invalidation.target.entity_type, invalidation.target.name), None)
        for signal in extraction.feedback:
            key = entity_key(session, signal.target.entity_type, signal.target.name)
            changed.setdefault(key, None)
            feedback.add(key)
    wanted = set(erased)
    for key in changed:
        seqs = db.execute("SELECT seq FROM cat_refs WHERE sid = ? AND h = ?", (sid, key_hash(key))).fetchall()
        if any(seq not in wanted for (seq,) in seqs):
            return False  # another event refers to a key an erased event changed: its rows may differ now
    for chunk in _chunks(erased):
        marks = ",".join("?" * len(chunk))
        _delete_edges(db, sid, chunk)
        db.execute(f"DELETE FROM cat_versions WHERE sid = ? AND seq IN ({marks})", (sid, *chunk))
    _delete_many(db, "DELETE FROM cat_keys WHERE kid = ?", [(kid,) for kid in changed.values() if kid is not None])
    _delete_many(db, "DELETE FROM cat_feedback WHERE key = ?", [(key,) for key in sorted(feedback)])
    orphaned = [
        (f"{session}\x1f{path}",)
        for path in sorted(paths)  # a source stays while a remaining version cites it (the planner made it once)
        if db.execute("SELECT 1 FROM cat_versions WHERE sid = ? AND source_path = ? LIMIT 1", (sid, path)).fetchone()
        is None
    ]
    _delete_many(db, "DELETE FROM cat_sources WHERE id = ?", orphaned)
    refs = [(sid, digest, seq) for seq in erased for digest in event_refs(envelopes[seq], extractions[seq])]
    _delete_many(db, "DELETE FROM cat_refs WHERE sid = ? AND h = ? AND seq = ?", refs)
    if not db.execute(
        "SELECT EXISTS(SELECT 1 FROM cat_versions WHERE sid = ?) OR EXISTS(SELECT 1 FROM cat_refs WHERE sid = ?)",
        (sid, sid),
    ).fetchone()[0]:  # nothing of the session is left (a whole session erased): its name goes, as in a rebuild
        db.execute("DELETE FROM cat_refs_partial WHERE sid = ?", (sid,))
        db.execute("DELETE FROM cat_sessions WHERE sid = ?", (sid,))
    return _forget_failures(db, session, envelopes, extractions)


def event_refs(envelope: dict[str, Any], extraction: Extraction) -> set[int]:
    """The hashes of every entity key one event refers to: the keys planning it reads (:func:`referenced`) and the
    targets of its feedback (which no planning reads, but whose aggregate it adds to). An erasure reads them back to
    know whether events outside the erased ones depend on a key (erase_local.py). The planner collects the same
    keys as it plans (``ProjectionPlanner._refs``; tests/projection/test_erase_local.py holds them equal)."""
    keys, _ = referenced(envelope, extraction)
    session = envelope["session"]
    keys.update(entity_key(session, s.target.entity_type, s.target.name) for s in extraction.feedback)
    return {key_hash(key) for key in keys}


def _forget_failures(
    db: sqlite3.Connection,
    session: str,
    envelopes: dict[int, dict[str, Any]],
    extractions: dict[int, Extraction],
) -> bool:
    """Remove the erased events' failure samples and their share of the session's failure count. How many failures
    they made is what planning them alone makes: a failed invalidation depends only on the key's state, and every
    key they changed is local (only erased events refer to it)."""
    planner = ProjectionPlanner()
    for seq in sorted(envelopes):
        planner.add(envelopes[seq], extractions[seq])
    failures = len(planner.take_batch().failures)
    erased = sorted(envelopes)
    for chunk in _chunks(erased):
        marks = ",".join("?" * len(chunk))
        db.execute(f"DELETE FROM cat_failures WHERE session = ? AND seq IN ({marks})", (session, *chunk))
    if failures:
        db.execute("UPDATE cat_failure_counts SET n = n - ? WHERE session = ?", (failures, session))
        db.execute("DELETE FROM cat_failure_counts WHERE session = ? AND n <= 0", (session,))
    return True


def _delete_edges(db: sqlite3.Connection, sid: int, seqs: list[int]) -> None:
    """The edges the events ``seqs`` made (an edge's ``seq`` is its event's; both its ends are in its session)."""
    db.execute(f"DELETE FROM cat_edges WHERE sid = ? AND seq IN ({','.join('?' * len(seqs))})", (sid, *seqs))


def _delete_many(db: sqlite3.Connection, sql: str, rows: Iterable[tuple[Any, ...]]) -> None:
    rows = list(rows)
    if rows:
        db.executemany(sql, rows)
