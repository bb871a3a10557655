"""The catalog's tables in ``derived.sqlite`` and how a row becomes a record (shared by reads and writes).

Layout choices (sizes matter: derived state must stay within ~2x the log): identities get an integer id
(``kid``) that versions and edges reference; event hashes are stored as 32-byte blobs; versions are numbered in
assertion order (``vid``), which is the order of an identity's history and of a session's type log.
"""

from __future__ import annotations

import json
import operator
import re
import sqlite3
import zlib
from collections.abc import Iterable
from typing import Any

from zaxy_agents.projection.logged_text import LoggedVersion, LogTexts
from zaxy_agents.projection.records import EntityVersion, RelationRecord

SCHEMA_VERSION = 8  # 2: summary and properties in one compressed blob; 3: raw-text summaries read from the log,
# lean edges; 4: an identity's valid_from is its current version's (read by a join, not stored twice); 5: version ids
# as 12-byte blobs, session / type names as small integers (cat_sessions, cat_types), an identity's key rebuilt from
# (session, type, normalised name) and its current version as a vid; 6: edges name their ends by vid and repeat
# no event time or hash their end versions hold; a version's name is NULL when it equals its identity's norm; 7: a
# version's properties hold no copy of its valid_from (TIME_MARK); 8: ``cat_refs``, which events refer to each entity
# key (an erasure then re-plans nothing when the keys it touched have no other event: erase_local.py)

# Entity types whose summary is their event's raw text (the verbatim lane's territory): stored without it and read
# from the log on first use (logged_text.py). Bulk readers of the catalog (the working set, the cognitive memos)
# never read these types, so what a whole memory reads in bulk stays in the catalog.
TEXT_FROM_LOG = frozenset({"turn", "prompt", "hook_event", "event"})
NAME = "catalog"
FAILURE_SAMPLES = 20
CACHE_LIMIT = 20_000
COMPRESS_ABOVE = 160  # bytes of summary + properties from which zlib is tried
_IN_CHUNK = 500  # keys per IN (...) lookup

# Edges (layout 3): ids of 24 hex digits as 12-byte blobs (others as text); the evidence columns and the method are
# NULL when they repeat the edge's own event and the deterministic method (every extracted edge).
EDGES_DDL_V3 = (
    "CREATE TABLE cat_edges(eid INTEGER PRIMARY KEY, id NOT NULL, source_id NOT NULL, target_id NOT NULL, "
    "source_kid INTEGER NOT NULL, target_kid INTEGER NOT NULL, relation_type TEXT NOT NULL, session TEXT NOT NULL, "
    "inferred INTEGER NOT NULL, confidence REAL NOT NULL, method TEXT, ev_session TEXT, ev_seq INTEGER, "
    "ev_hash BLOB, valid_from TEXT NOT NULL, valid_to TEXT, seq INTEGER NOT NULL, hash BLOB NOT NULL)"
)
# Edges (layout 6): the two ends as the versions' vids (their ids are read by the join), the relation type and the
# session as integers (cat_types, cat_sessions); ``borrow`` says whose event time and hash the edge repeats: 1 its
# target version's, 2 its source version's (an extracted edge comes from the event that made one of its ends; the
# copy is then NULL), 0 its own columns'.
EDGES_DDL = (
    "CREATE TABLE cat_edges(eid INTEGER PRIMARY KEY, id NOT NULL, source_vid INTEGER NOT NULL, "
    "target_vid INTEGER NOT NULL, source_kid INTEGER NOT NULL, target_kid INTEGER NOT NULL, rtid INTEGER NOT NULL, "
    "sid INTEGER NOT NULL, inferred INTEGER NOT NULL, confidence REAL NOT NULL, method TEXT, ev_session TEXT, "
    "ev_seq INTEGER, ev_hash BLOB, borrow INTEGER NOT NULL, valid_from TEXT, valid_to TEXT, seq INTEGER NOT NULL, "
    "hash BLOB)"
)
BORROW_TARGET, BORROW_SOURCE = 1, 2
EDGE_INDEXES = (
    "CREATE INDEX cat_edges_out ON cat_edges(source_kid)",
    "CREATE INDEX cat_edges_in ON cat_edges(target_kid)",
)
DETERMINISTIC = "deterministic"
_HEX_ID = re.compile(r"[0-9a-f]{24}")

# Layout 5: what repeats on every version row is an integer. Session names and type names (entity types and event
# types) are dictionary-encoded (``cat_sessions`` / ``cat_types``, AUTOINCREMENT: an id is never reused, so an id
# read once never names something else); an identity stores no key text (its key is ``session \x1f type \x1f norm``,
# ``entity_key``, rebuilt by the join) and points at its current version by ``vid``; version ids (24 hex digits) are
# 12-byte blobs. The unique ``(norm, sid, tid)`` index serves both lookups by key and by name.
VERSIONS_DDL = (
    "CREATE TABLE cat_versions(vid INTEGER PRIMARY KEY, id BLOB NOT NULL UNIQUE, kid INTEGER NOT NULL, "
    "sid INTEGER NOT NULL, name TEXT, tid INTEGER NOT NULL, body BLOB NOT NULL, "
    "valid_from TEXT NOT NULL, valid_to TEXT, invalidated INTEGER NOT NULL, "
    "seq INTEGER NOT NULL, hash BLOB NOT NULL, etid INTEGER NOT NULL, importance REAL NOT NULL, "
    "source_path TEXT, asserted INTEGER NOT NULL)"
)
VERSION_INDEXES = (
    "CREATE INDEX cat_versions_kid ON cat_versions(kid)",
    "CREATE INDEX cat_versions_event ON cat_versions(sid, seq)",
    "CREATE INDEX cat_versions_type ON cat_versions(sid, tid)",
)
KEYS_DDL = (
    "CREATE TABLE cat_keys(kid INTEGER PRIMARY KEY, sid INTEGER NOT NULL, tid INTEGER NOT NULL, norm TEXT NOT NULL, "
    "cur INTEGER NOT NULL, closed INTEGER NOT NULL)"
)
KEY_INDEXES = ("CREATE UNIQUE INDEX cat_keys_name ON cat_keys(norm, sid, tid)",)
NAMES_DDL = (
    "CREATE TABLE cat_sessions(sid INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE)",
    "CREATE TABLE cat_types(tid INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE)",
)

# Layout 8: every event that refers to an entity key (asserts, references, invalidates, relates or gives feedback on
# it, whether or not that made a row) as (session id, 64-bit hash of the key, seq): what an erasure reads to know
# whether any other event depends on the keys it touched (erase_local.py). A hash collision only makes an erasure
# take the session re-plan. ``cat_refs_partial``: sessions projected before layout 8, whose earlier events have no
# rows here (their erasures re-plan the session, which writes every row).
REFS_DDL = (
    "CREATE TABLE cat_refs(sid INTEGER NOT NULL, h INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY(sid, h, seq)) "
    "WITHOUT ROWID",
    "CREATE TABLE cat_refs_partial(sid INTEGER PRIMARY KEY)",
)

TABLES = (
    "CREATE TABLE cat_cursors(session TEXT PRIMARY KEY, seq INTEGER NOT NULL, hash TEXT NOT NULL) WITHOUT ROWID",
    *NAMES_DDL,
    KEYS_DDL,
    *KEY_INDEXES,
    VERSIONS_DDL,
    *VERSION_INDEXES,
    EDGES_DDL,
    *EDGE_INDEXES,
    "CREATE TABLE cat_feedback(key TEXT PRIMARY KEY, positive INTEGER NOT NULL, negative INTEGER NOT NULL, "
    "weight REAL NOT NULL, last TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE cat_failures(rid INTEGER PRIMARY KEY, id TEXT, session TEXT, seq INTEGER, event_type TEXT, "
    "reason TEXT)",
    "CREATE TABLE cat_labels(label TEXT PRIMARY KEY) WITHOUT ROWID",
    "CREATE TABLE cat_sources(id TEXT PRIMARY KEY) WITHOUT ROWID",
    "CREATE TABLE cat_failure_counts(session TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE cat_counters(name TEXT PRIMARY KEY, value) WITHOUT ROWID",
    *REFS_DDL,
)
TABLE_NAMES = tuple(statement.split()[2].split("(")[0] for statement in TABLES if statement.startswith("CREATE TABLE"))

# A version row's names come back by joins on small integer keys (``s``: session, ``t``: entity type, ``e``: event
# type) and its identity's key is rebuilt from them: the row shape readers decode is the one earlier layouts stored.
ID_OUT = "lower(hex(v.id))"
NAME_OUT = "coalesce(v.name, k.norm)"  # a version's name is NULL when it is its identity's normalised name
KEY_OUT = "(s.name || char(31) || t.name || char(31) || k.norm)"
NAMES_JOIN = "JOIN cat_sessions s ON s.sid = v.sid JOIN cat_types t ON t.tid = v.tid JOIN cat_types e ON e.tid = v.etid"
_VERSION_COLUMNS = (
    f"{ID_OUT}, {KEY_OUT}, s.name, {NAME_OUT}, t.name, v.body, v.valid_from, v.valid_to, "
    "v.invalidated, v.seq, v.hash, e.name, v.importance, v.source_path, v.asserted"
)
_VERSION_FROM = f"SELECT {_VERSION_COLUMNS} FROM cat_versions v JOIN cat_keys k ON k.kid = v.kid {NAMES_JOIN}"
# Identities named by ``[norm, session, type]`` arrays in one JSON parameter (``j.key``: the position in it).
KEYS_JSON = (
    "json_each(?) j JOIN cat_keys k ON k.norm = j.value ->> 0 "
    "AND k.sid = (SELECT sid FROM cat_sessions WHERE name = j.value ->> 1) "
    "AND k.tid = (SELECT tid FROM cat_types WHERE name = j.value ->> 2)"
)
KEY_WHERE = (  # one identity: norm, session, type as three parameters
    "k.norm = ? AND k.sid = (SELECT sid FROM cat_sessions WHERE name = ?) "
    "AND k.tid = (SELECT tid FROM cat_types WHERE name = ?)"
)
# Version ids in one parameter: their 12-byte forms concatenated (a statement of the same text for any list)
IDS_BLOB = (
    "(WITH RECURSIVE ids(n) AS (SELECT 1 UNION ALL SELECT n + 12 FROM ids WHERE n + 12 <= length(?1)) "
    "SELECT substr(?1, n, 12) FROM ids)"
)
SID_OF = "(SELECT sid FROM cat_sessions WHERE name = {})"  # a session name's id in SQL (NULL: none, matches nothing)
TID_OF = "(SELECT tid FROM cat_types WHERE name = {})"
# A relation's row as layout 3 stored it (what ``_edge`` decodes), read from layout 6 by joins on integer keys
EDGE_SELECT = (
    "SELECT e.id, lower(hex(sv.id)), lower(hex(tv.id)), r.name, s.name, e.inferred, e.confidence, e.method, "
    "e.ev_session, e.ev_seq, e.ev_hash, "
    "CASE e.borrow WHEN 1 THEN tv.valid_from WHEN 2 THEN sv.valid_from ELSE e.valid_from END, e.valid_to, e.seq, "
    "CASE e.borrow WHEN 1 THEN tv.hash WHEN 2 THEN sv.hash ELSE e.hash END FROM cat_edges e "
    "JOIN cat_versions sv ON sv.vid = e.source_vid JOIN cat_versions tv ON tv.vid = e.target_vid "
    "JOIN cat_types r ON r.tid = e.rtid JOIN cat_sessions s ON s.sid = e.sid"
)
EdgeEnd = tuple[int, int, int, str, bytes]  # (vid, kid, seq, valid_from, hash) of a relation's end version


def create_tables(db: sqlite3.Connection) -> None:
    for statement in TABLES:
        db.execute(statement)


def drop_tables(db: sqlite3.Connection) -> None:
    for table in TABLE_NAMES:
        db.execute(f"DROP TABLE IF EXISTS {table}")


TIME_MARK = "\x00"  # in a stored properties JSON: the version's ``valid_from`` as a JSON string (layout 7)


def _pack(summary: str, properties: str, summary_in_log: bool = False, valid_from: str = "") -> bytes:
    """Summary and properties JSON in one blob, zlib-compressed when that pays (summaries of turns and
    commands are up to 600 characters of prose). ``summary_in_log``: the summary is left out (read from the
    event, see :data:`TEXT_FROM_LOG`); the tag is then upper-case. ``valid_from``: its JSON string in the
    properties (a turn's ``occurred_at``) is stored as :data:`TIME_MARK` (the planner's JSON escapes every control
    character, so the mark never stands for anything else; reading puts the string back: an exact inverse)."""
    if valid_from:
        properties = properties.replace(f'"{valid_from}"', TIME_MARK)
    head = b"" if summary_in_log else summary.encode()
    raw = len(head).to_bytes(4, "little") + head + properties.encode()
    tag = b"r"
    if len(raw) > COMPRESS_ABOVE:
        packed = zlib.compress(raw, 1)
        if len(packed) < len(raw):
            tag, raw = b"z", packed
    return (tag.upper() if summary_in_log else tag) + raw


def _raw(body: bytes) -> bytes:
    """The uncompressed ``size + summary + properties`` of a body."""
    return zlib.decompress(body[1:]) if body[:1] in (b"z", b"Z") else body[1:]


def _in_log(body: bytes) -> bool:
    return body[:1] in (b"R", b"Z")


def _unpack(body: bytes, valid_from: str | None = None) -> tuple[str | None, str]:
    """``(summary, properties JSON)``; the summary is ``None`` when it is read from the log. ``valid_from``: the
    version's, put back where the properties hold :data:`TIME_MARK` (``None``: left marked)."""
    raw = _raw(body)
    size = int.from_bytes(raw[:4], "little")
    properties = raw[4 + size :].decode()
    if valid_from is not None and TIME_MARK in properties:
        properties = properties.replace(TIME_MARK, f'"{valid_from}"')
    return (None if _in_log(body) else raw[4 : 4 + size].decode()), properties


def timed(properties: bytes, valid_from: str) -> bytes:
    """Stored properties bytes with :data:`TIME_MARK` replaced by ``valid_from``'s JSON string."""
    return properties.replace(b"\x00", b'"' + valid_from.encode() + b'"') if b"\x00" in properties else properties


def _version(row: tuple[Any, ...], texts: LogTexts | None = None) -> EntityVersion:
    """A version from a ``_VERSION_COLUMNS`` row; ``texts`` reads the summaries the catalog does not keep. (Inlined
    decoding: a checkout decodes hundreds of versions.)"""
    body = row[5]
    tag = body[:1]
    raw = zlib.decompress(body[1:]) if tag == b"z" or tag == b"Z" else body[1:]
    size = int.from_bytes(raw[:4], "little")
    properties = raw[4 + size :]
    if b"\x00" in properties:  # TIME_MARK: the version's valid_from
        properties = properties.replace(b"\x00", b'"' + row[6].encode() + b'"')
    if tag == b"r" or tag == b"z":
        return EntityVersion(
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            raw[4 : 4 + size].decode(),
            properties.decode(),
            row[6],
            row[7],
            bool(row[8]),
            row[9],
            row[10].hex(),
            row[11],
            row[12],
            row[13],
            bool(row[14]),
        )
    if texts is None:
        raise RuntimeError("a version whose summary is in the log was read without access to the log")
    return LoggedVersion(texts, *_fields(row, None, properties.decode()))


def _fields(row: tuple[Any, ...], summary: str | None, properties: str) -> tuple[Any, ...]:
    return (
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        summary,
        properties,
        row[6],
        row[7],
        bool(row[8]),
        row[9],
        row[10].hex(),
        row[11],
        row[12],
        row[13],
        bool(row[14]),
    )


def key_parts(key: str) -> tuple[str, str, str] | None:
    """``(norm, session, entity_type)`` of an identity key (``entity_key``: a normalised name holds no ``\x1f``, it
    is whitespace), ``None`` for a string no identity can have."""
    parts = key.rsplit("\x1f", 2)
    return (parts[2], parts[0], parts[1]) if len(parts) == 3 else None


def vid_bytes(version_id: str) -> bytes:
    """A version id as stored: its 24 hex digits as 12 bytes (``stable_id``); anything else cannot be a stored id
    and maps to a value no row holds."""
    return bytes.fromhex(version_id) if _HEX_ID.fullmatch(version_id) else b"?" + version_id.encode()


def ids_blob(version_ids: Iterable[str]) -> bytes:
    """The :data:`IDS_BLOB` parameter of ``version_ids`` (ids no version can have are left out)."""
    return b"".join(bytes.fromhex(v) for v in version_ids if _HEX_ID.fullmatch(v))


def keys_json(keys: Iterable[str]) -> str:
    """The :data:`KEYS_JSON` parameter of ``keys`` (a string no identity can have gets a name no identity has: a
    normalised name holds no ``\\x1f``)."""
    return json.dumps([key_parts(key) or ("\x1f", "", "") for key in keys])


def _id_in(value: str) -> str | bytes:
    """An edge's id as stored: 24 lower-case hex digits (``stable_id``) as 12 bytes, anything else as given."""
    return bytes.fromhex(value) if _HEX_ID.fullmatch(value) else value


def _id_out(value: str | bytes) -> str:
    return value.hex() if isinstance(value, bytes) else value


def edge_values(row: dict[str, Any], source: EdgeEnd, target: EdgeEnd, rtid: int, sid: int) -> tuple[Any, ...]:
    """A planned relation as the layout-6 ``cat_edges`` columns after ``eid`` (in table order)."""
    session, seq, digest = row["session_id"], int(row["source_event_seq"]), bytes.fromhex(row["source_event_hash"])
    own = (row["evidence_session"], int(row["evidence_seq"]), row["evidence_hash"]) == (
        session,
        seq,
        row["source_event_hash"],
    )
    event = (seq, row["valid_from"], digest)
    borrow = BORROW_TARGET if target[2:] == event else BORROW_SOURCE if source[2:] == event else 0
    return (
        _id_in(row["id"]),
        source[0],
        target[0],
        source[1],
        target[1],
        rtid,
        sid,
        *_inference(row, own),
        borrow,
        None if borrow else row["valid_from"],
        row["valid_to"],
        seq,
        None if borrow else digest,
    )


def _inference(row: dict[str, Any], own: bool) -> tuple[Any, ...]:
    """A planned relation's ``inferred, confidence, method, ev_session, ev_seq, ev_hash`` columns (NULL where they
    repeat the deterministic method or the edge's own event: ``own``)."""
    return (
        int(bool(row["inferred"])),
        float(row["confidence"]),
        None if row["inference_method"] == DETERMINISTIC else row["inference_method"],
        None if own else row["evidence_session"],
        None if own else int(row["evidence_seq"]),
        None if own else bytes.fromhex(row["evidence_hash"]),
    )


def _edge_values(row: dict[str, Any], source_kid: int, target_kid: int) -> tuple[Any, ...]:
    """A planned relation as the layout-3 ``cat_edges`` columns after ``eid`` (in table order): the 2 -> 3
    migration's row."""
    session, seq, digest = row["session_id"], int(row["source_event_seq"]), row["source_event_hash"]
    own = (row["evidence_session"], int(row["evidence_seq"]), row["evidence_hash"]) == (session, seq, digest)
    return (
        _id_in(row["id"]),
        _id_in(row["from"]),
        _id_in(row["to"]),
        source_kid,
        target_kid,
        row["relation_type"],
        session,
        *_inference(row, own),
        row["valid_from"],
        row["valid_to"],
        seq,
        bytes.fromhex(digest),
    )


def _edge(row: tuple[Any, ...]) -> RelationRecord:
    """A relation from an :data:`EDGE_SELECT` row."""
    own = row[8] is None
    return RelationRecord(
        _id_out(row[0]),
        _id_out(row[1]),
        _id_out(row[2]),
        row[3],
        row[4],
        bool(row[5]),
        row[6],
        DETERMINISTIC if row[7] is None else row[7],
        row[4] if own else row[8],
        row[13] if own else row[9],
        (row[14] if own else row[10]).hex(),
        row[11],
        row[12],
        row[13],
        row[14].hex(),
    )


_SESSION_VID = operator.itemgetter(0, 1)  # (session, vid) of a row of SqliteCatalog._recent_across


ANY_TYPE = "*"  # a change of a session's versions whose entity type is not known: moves every typed epoch


def _key_type(key: str) -> str:
    """The entity type an identity's key names (``entity_key``: session, type, normalised name), else
    :data:`ANY_TYPE`."""
    parts = key.split("\x1f")
    return parts[1] if len(parts) == 3 and parts[1] else ANY_TYPE


def _chunks(items: list[str]) -> Iterable[list[str]]:
    for start in range(0, len(items), _IN_CHUNK):
        yield items[start : start + _IN_CHUNK]
