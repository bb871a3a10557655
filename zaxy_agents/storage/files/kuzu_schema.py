"""Kuzu schema as named, idempotent migrations, recorded in the database with checksum and statement count.

``zaxy schema-plan`` prints :data:`MIGRATIONS` without opening a database. Column order here is also the
order of the Arrow tables the writer COPYs, so tables and writers cannot drift apart.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zaxy_agents.projection.model import RESERVED_RELATION_LABELS, entity_key

# (table, columns) for node tables; the first column is the primary key.
NODE_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "Session": [("id", "STRING"), ("projected_seq", "INT64"), ("projected_hash", "STRING")],
    "Event": [
        ("id", "STRING"),
        ("session_id", "STRING"),
        ("seq", "INT64"),
        ("hash", "STRING"),
        ("prev_hash", "STRING"),
        ("type", "STRING"),
        ("actor", "STRING"),
        ("timestamp", "STRING"),
    ],
    "EntityKey": [
        ("id", "STRING"),
        ("session_id", "STRING"),
        ("name", "STRING"),
        ("norm_name", "STRING"),
        ("entity_type", "STRING"),
        ("current_version", "STRING"),
        ("closed", "BOOLEAN"),
    ],
    "Entity": [
        ("id", "STRING"),
        ("key", "STRING"),
        ("session_id", "STRING"),
        ("name", "STRING"),
        ("entity_type", "STRING"),
        ("summary", "STRING"),
        ("properties", "STRING"),
        ("valid_from", "STRING"),
        ("valid_to", "STRING"),
        ("invalidated", "BOOLEAN"),
        ("source_event_seq", "INT64"),
        ("source_event_hash", "STRING"),
        ("source_event_type", "STRING"),
        ("source_thread", "STRING"),
        ("importance", "DOUBLE"),
        ("source_path", "STRING"),
        ("closed_by_seq", "INT64"),
        ("invalidation_reason", "STRING"),
        ("asserted", "BOOLEAN"),
        ("event_id", "STRING"),  # the Event node that projected this version (seed 002)
    ],
    "Source": [("id", "STRING"), ("session_id", "STRING"), ("path", "STRING")],
    "Feedback": [
        ("id", "STRING"),
        ("session_id", "STRING"),
        ("seq", "INT64"),
        ("entity_key", "STRING"),
        ("signal", "STRING"),
        ("weight", "DOUBLE"),
        ("positive", "BOOLEAN"),
        ("timestamp", "STRING"),
    ],
    "ExtractionFailure": [
        ("id", "STRING"),
        ("session_id", "STRING"),
        ("seq", "INT64"),
        ("event_type", "STRING"),
        ("reason", "STRING"),
    ],
}

# Entity columns Kuzu does not store (migration 0006): a version's text, which its source event in the log holds and
# the catalog (derived.sqlite) serves by version id. The store reads them through ``attach_texts`` (GraphSync attaches
# the catalog); every store still reads and dumps NODE_COLUMNS["Entity"] whole.
ENTITY_TEXT_COLUMNS = ("summary", "properties")
# Hash columns Kuzu does not store (migration 0008), each a copy of an ``Event.hash`` the file already holds: an entity
# version's ``source_event_hash`` is the hash of its ``event_id`` Event, and an event's ``prev_hash`` is, by the log's
# chain (docs/eventloom.md), 64 zeros for seq 1 and the hash of seq - 1 otherwise. Two 64-character columns were 2.2
# of a 10k-event graph's 13.8 MB of column pages and two STRING columns of every commit. Every reader and the dump
# put them back (kuzu_store); an event whose ``prev_hash`` is not the chain's (a damaged tombstone of ``zaxy
# repair``) keeps it in ``prev_hash_unchained``, NULL otherwise. A citation's (``CITES_SOURCE``) is the hash of the
# event ``<its Source's session_id>:<source_event_seq>`` (both of its pairs are written by that event).
DERIVED_HASH_COLUMNS = {"Event": "prev_hash", "Entity": "source_event_hash", "CITES_SOURCE": "source_event_hash"}
UNCHAINED_PREV_HASH = ("prev_hash_unchained", "STRING")

EDGE_AUDIT_COLUMNS: list[tuple[str, str]] = [
    ("id", "STRING"),
    ("relation_type", "STRING"),
    ("session_id", "STRING"),
    ("inferred", "BOOLEAN"),
    ("confidence", "DOUBLE"),
    ("inference_method", "STRING"),
    ("evidence_session", "STRING"),
    ("evidence_seq", "INT64"),
    ("evidence_hash", "STRING"),
    ("valid_from", "STRING"),
    ("valid_to", "STRING"),
    ("source_event_seq", "INT64"),
    ("source_event_hash", "STRING"),
]

CITATION_COLUMNS: list[tuple[str, str]] = [
    ("line_start", "INT64"),
    ("line_end", "INT64"),
    ("checksum", "STRING"),
    ("source_event_seq", "INT64"),
    ("source_event_hash", "STRING"),
]
# The seed's PROJECTED_RELATION provenance edge: the event -> the relation's target, with the relation's endpoints
# (as the extractor named them) and the same audit metadata as RELATES and the typed edge. These are its columns as
# every store reads and dumps them; Kuzu stores only :data:`PROJECTED_RELATION_STORED` (below).
PROJECTED_RELATION_COLUMNS: list[tuple[str, str]] = [("source", "STRING"), ("target", "STRING"), *EDGE_AUDIT_COLUMNS]
# What Kuzu keeps of the two copies of a RELATES row (migration 0005): the typed edge and PROJECTED_RELATION hold
# the RELATES row's ``id`` (PROJECTED_RELATION also the endpoint names and the relation type) and read the audit
# columns from that row (:data:`RELATES_COPIES`), which never changes once written. Three copies of 13 audit
# columns were a third of a 10k-event graph's column pages (docs/graph-schema.md#storage).
TYPED_REL_COLUMNS: list[tuple[str, str]] = [("id", "STRING")]
PROJECTED_RELATION_STORED: list[tuple[str, str]] = [
    ("id", "STRING"),
    ("relation_type", "STRING"),
    ("source", "STRING"),
    ("target", "STRING"),
]

# (table, from, to, property columns)
REL_TABLES: dict[str, tuple[str, str, list[tuple[str, str]]]] = {
    "HAS_EVENT": ("Session", "Event", []),
    "NEXT_EVENT": ("Event", "Event", []),
    "PREVIOUS_EVENT": ("Event", "Event", []),
    "HAS_VERSION": ("EntityKey", "Entity", []),
    "PROJECTED_ENTITY": ("Event", "Entity", []),
    "SUPERSEDED_BY": ("Entity", "Entity", []),
    "PREVIOUS_VERSION": ("Entity", "Entity", []),
    "CITES_SOURCE": ("Entity", "Source", CITATION_COLUMNS),
    "RELATES": ("Entity", "Entity", EDGE_AUDIT_COLUMNS),
    "PROJECTED_RELATION": ("Event", "Entity", PROJECTED_RELATION_COLUMNS),
}
# RELATES evidence column -> the provenance column it repeats for a deterministic edge (whose evidence is the event
# that projected it). Kuzu stores the evidence only when it differs (NULL otherwise: a null mask, no string pages)
# and reads ``coalesce(evidence, provenance)``, so every reader and the dump see the same values as before; the two
# 64-character hash copies of every edge, in both directions, were ~6 % of a 10k-event graph.
RELATES_EVIDENCE_DEFAULTS = {
    "evidence_session": "session_id",
    "evidence_seq": "source_event_seq",
    "evidence_hash": "source_event_hash",
}

# Tables whose rows repeat a RELATES row -> the columns Kuzu stores for them (their other columns, as every store
# reads and dumps them, are the RELATES row's). Typed relation tables (labels not in REL_TABLES) store
# TYPED_REL_COLUMNS. The columns in REL_TABLES stay the schema every backend shares (dump, digest).
RELATES_COPIES: dict[str, list[tuple[str, str]]] = {"PROJECTED_RELATION": PROJECTED_RELATION_STORED}

# RELATES columns Kuzu does not store (migration 0007) -> where every reader and the dump take them from. Each is a
# function of what the edge already holds: an edge joins two versions of the session it was asserted in (its
# ``session_id`` is its source version's), its source event is an Event node (``<session>:<source_event_seq>``, whose
# ``hash`` it is), and the planner never closes an edge (``valid_to`` is always NULL: an edge's validity is its
# versions'). RELATES is stored in both directions, and Kuzu 0.11.3's COMMIT after a COPY rewrites every column of
# the node groups it touched, per direction (~4 ms of CPU per column and direction per commit, measured): these
# three were 2.1 of RELATES' 4.4 MB at 10k events and ~20 % of its commit.
_V7_RELATES_DERIVED = ("session_id", "valid_to", "source_event_hash")
_V7_RELATES_STORED = [column for column in EDGE_AUDIT_COLUMNS if column[0] not in _V7_RELATES_DERIVED]
# Since migration 0009 also ``valid_from``: an edge is valid from its source event's ``timestamp`` (the planner writes
# nothing else), 9.7 of a 100k-event graph's 144 MB (a 32-character string per edge and direction).
RELATES_DERIVED = (*_V7_RELATES_DERIVED, "valid_from")
RELATES_STORED: list[tuple[str, str]] = [column for column in EDGE_AUDIT_COLUMNS if column[0] not in RELATES_DERIVED]
# Seed relationships Kuzu does not store (migration 0007) -> the stored table they mirror: PREVIOUS_EVENT is
# NEXT_EVENT reversed (``(b)<-[:NEXT_EVENT]-(a)`` in Cypher). The dump and the digest still list its rows.
MIRRORED: dict[str, str] = {"PREVIOUS_EVENT": "NEXT_EVENT"}
# Typed relation labels (``CALLS_SYMBOL``...) are not tables since migration 0007: each repeated a RELATES row
# (its id only, since 0005) and cost a table's commit and CSR pages; the label is ``typed_label(r.relation_type)``
# of the RELATES row (``MATCH ()-[r:RELATES {relation_type: 'calls_symbol'}]->()``), and the dump lists it as before.
# Relation tables with a second FROM/TO pair (one label, so the seed's queries match both): (table, from, to).
EXTRA_PAIRS: dict[str, tuple[str, str]] = {"CITES_SOURCE": ("Event", "Source")}
# Relation tables Kuzu stores forward only. By default Kuzu keeps every relationship, with all its properties, twice
# (a forward and a backward adjacency list): these tables are only ever matched from their source side (the spine,
# provenance and version chains, and each typed edge, which repeats a RELATES row), so the backward copy was half of
# their pages. A directed pattern bound on the target side still answers (Kuzu scans forward); an undirected one is
# refused by Kuzu. RELATES and HAS_VERSION are walked both ways by traversals and keep both directions.
_V4_FORWARD_ONLY = (
    "HAS_EVENT",
    "NEXT_EVENT",
    "PREVIOUS_EVENT",
    "PROJECTED_ENTITY",
    "SUPERSEDED_BY",
    "PREVIOUS_VERSION",
    "CITES_SOURCE",
    "PROJECTED_RELATION",
)
# Since 0007 HAS_VERSION too: traversals reach a version's identity through ``Entity.key`` and only walk
# HAS_VERSION from the identity; PREVIOUS_EVENT is no longer stored.
FORWARD_ONLY = (*(table for table in _V4_FORWARD_ONLY if table not in MIRRORED), "HAS_VERSION")
FORWARD_STORAGE = " WITH (storage_direction = 'fwd')"

# table -> the ProjectionBatch field holding its rows (every store writes a batch table by table)
BATCH_ROW_KEYS = {
    "Session": "sessions",
    "Event": "events",
    "EntityKey": "entity_keys",
    "Entity": "entities",
    "Source": "sources",
    "Feedback": "feedback",
    "ExtractionFailure": "failures",
    "HAS_EVENT": "has_event",
    "NEXT_EVENT": "next_event",
    "PREVIOUS_EVENT": "previous_event",
    "HAS_VERSION": "has_version",
    "PROJECTED_ENTITY": "projected",
    "SUPERSEDED_BY": "superseded_by",
    "PREVIOUS_VERSION": "previous_version",
    "CITES_SOURCE": "cites_source",
    "PROJECTED_RELATION": "projected_relations",
}

assert set(REL_TABLES) <= RESERVED_RELATION_LABELS, "spine relation tables must be reserved labels"


def node_ddl(table: str) -> str:
    columns = NODE_COLUMNS[table]
    body = ", ".join(f"{name} {kind}" for name, kind in columns)
    return f"CREATE NODE TABLE IF NOT EXISTS {table}({body}, PRIMARY KEY({columns[0][0]}))"


def rel_ddl(table: str, source: str, target: str, columns: list[tuple[str, str]]) -> str:
    body = "".join(f", {name} {kind}" for name, kind in columns)
    return f"CREATE REL TABLE IF NOT EXISTS `{table}`(FROM {source} TO {target}{body})"


# The primary key of every node table since migration 0010: a 64-bit number made from the node's ``id``
# (:func:`node_key`), which stays a plain column. Kuzu 0.11.3's primary-key hash index over STRING keys costs more than
# over INT64 ones (at 100,000 rows: 12.2 MB for 24-character keys, 13.8 MB for ~55-character ones, 7.3 MB for INT64,
# ``graph_engine_bench.py --key-index``); Event, Entity and EntityKey hold ~400k keys in a 100k-event memory. Two ids
# with the same number cannot both be written (Kuzu refuses a duplicate primary key): a collision is an error,
# never a wrong row, and every lookup checks the ``id`` it gets back.
NODE_KEY = ("pk", "INT64")


def node_key(node_id: str) -> int:
    """The signed 64-bit primary key of the node whose id is ``node_id`` (BLAKE2b of its UTF-8 bytes)."""
    return int.from_bytes(hashlib.blake2b(node_id.encode(), digest_size=8).digest(), "big", signed=True)


def unkeyed_node_columns(table: str) -> list[tuple[str, str]]:
    """The columns Kuzu stored for a node table before 0010 (keyed by its ``id``): the Entity text is read from the
    catalog, the hash copies of :data:`DERIVED_HASH_COLUMNS` from the Event nodes (an event's unchained
    ``prev_hash`` last, as 0008 added it)."""
    skipped = {DERIVED_HASH_COLUMNS.get(table), *(ENTITY_TEXT_COLUMNS if table == "Entity" else ())}
    columns = [column for column in NODE_COLUMNS[table] if column[0] not in skipped]
    return [*columns, UNCHAINED_PREV_HASH] if table == "Event" else columns


def _entity_key(session_id: str, entity_type: str, name: str) -> str:
    return entity_key(session_id, entity_type, name)


def _key_of_identity(session_id: str, entity_type: str, norm_name: str) -> str:
    return f"{session_id}\x1f{entity_type}\x1f{norm_name}"  # model.entity_key of an already normalised name


# Node columns Kuzu does not store since migration 0011 -> (the stored columns of the same node they are made of,
# how). An entity version's ``key`` and its identity's ``id`` are ``model.entity_key(session, type, name)``: the
# planner makes them so (a row that differs is refused); ~11 MB of a 100k-event graph's column pages (two
# ~55-character strings per version and identity). Every read and the dump put them back.
DERIVED_NODE_COLUMNS: dict[str, dict[str, tuple[tuple[str, ...], Callable[..., Any]]]] = {
    "Entity": {"key": (("session_id", "entity_type", "name"), _entity_key)},
    "EntityKey": {"id": (("session_id", "entity_type", "norm_name"), _key_of_identity)},
}


def _v10_node_columns(table: str) -> list[tuple[str, str]]:
    return [NODE_KEY, *unkeyed_node_columns(table)]


def stored_node_columns(table: str) -> list[tuple[str, str]]:
    """The columns Kuzu stores for a node table: :data:`NODE_KEY` (its primary key) first, then
    :func:`unkeyed_node_columns` but those of :data:`DERIVED_NODE_COLUMNS`."""
    derived = DERIVED_NODE_COLUMNS.get(table, {})
    return [column for column in _v10_node_columns(table) if column[0] not in derived]


def stored_columns(table: str) -> list[tuple[str, str]]:
    """The columns Kuzu stores for a relation table (a typed label, or a table of :data:`REL_TABLES`)."""
    if table in RELATES_COPIES:
        return RELATES_COPIES[table]
    if table == "RELATES":
        return RELATES_STORED
    if table in DERIVED_HASH_COLUMNS:
        return [column for column in REL_TABLES[table][2] if column[0] != DERIVED_HASH_COLUMNS[table]]
    return REL_TABLES[table][2] if table in REL_TABLES else TYPED_REL_COLUMNS


def typed_rel_ddl(label: str) -> str:
    """DDL of a typed relation table (``CALLS_SYMBOL``); ``label`` comes only from ``model.typed_label``.
    Stored forward only (see :data:`FORWARD_ONLY`): traversals walk RELATES, which holds the same edge. It keeps
    the RELATES row's id only (:data:`TYPED_REL_COLUMNS`); the audit columns are read from that row."""
    return rel_ddl(label, "Entity", "Entity", TYPED_REL_COLUMNS) + FORWARD_STORAGE


def _forward_only_ddl(table: str, columns: list[tuple[str, str]] | None = None) -> str:
    """The DDL of a :data:`FORWARD_ONLY` table, every FROM/TO pair included (``columns``: as a migration wrote it)."""
    source, target, current = REL_TABLES[table]
    columns = current if columns is None else columns
    pairs = [(source, target), *([EXTRA_PAIRS[table]] if table in EXTRA_PAIRS else [])]
    body = ", ".join(f"FROM {a} TO {b}" for a, b in pairs) + "".join(f", {name} {kind}" for name, kind in columns)
    return f"CREATE REL TABLE IF NOT EXISTS `{table}`({body}){FORWARD_STORAGE}"


def _keyed_node_ddl(table: str, columns: list[tuple[str, str]]) -> str:
    body = ", ".join(f"{name} {kind}" for name, kind in columns)
    return f"CREATE NODE TABLE IF NOT EXISTS {table}({body}, PRIMARY KEY({columns[0][0]}))"


def _current_rel_ddl(table: str) -> str:
    """The DDL of a relation table of :data:`REL_TABLES` as this release stores it."""
    if table in FORWARD_ONLY:
        return _forward_only_ddl(table, stored_columns(table))
    source, target, _columns = REL_TABLES[table]
    return rel_ddl(table, source, target, stored_columns(table))


def _whole_schema(node_columns: Callable[[str], list[tuple[str, str]]]) -> tuple[str, ...]:
    """Every table's DDL, node tables with ``node_columns`` (a migration that re-creates every table)."""
    return tuple(_keyed_node_ddl(table, node_columns(table)) for table in NODE_COLUMNS) + tuple(
        _current_rel_ddl(table) for table in REL_TABLES if table not in MIRRORED
    )


@dataclass(frozen=True)
class Migration:
    name: str
    statements: tuple[str, ...]
    rebuild: bool = False  # applied to a store that holds data: the data predates it, re-project from the log
    # every table (but the migration records) is dropped before the statements, which create the whole schema:
    # a primary key cannot be changed in place, and a file of an earlier release may hold tables no list names
    recreates: bool = False

    @property
    def checksum(self) -> str:
        return hashlib.sha256("\n;\n".join(self.statements).encode()).hexdigest()


MIGRATION_TABLE_DDL = (
    "CREATE NODE TABLE IF NOT EXISTS Migration(name STRING, checksum STRING, statement_count INT64, "
    "applied_at STRING, PRIMARY KEY(name))"
)
# Applied migrations are recorded in the graph file's catalog, as a JSON list in the ``Migration`` table's comment
# (``CALL SHOW_TABLES()`` shows it), not as rows: Kuzu 0.11 gives every non-empty node table a primary-key hash
# index of 256 pages (1.07 MB), which four one-line records would cost. Files written before 0005 keep their rows,
# read alongside.
MIGRATION_RECORD_TABLE = "Migration"

# Migrations are immutable once released (their checksums are recorded): 0001 keeps the original columns and
# tables, and later ones arrive through their own migrations.
_V1_ENTITY_COLUMNS = [column for column in NODE_COLUMNS["Entity"] if column[0] not in ("asserted", "event_id")]
_V1_REL_TABLES: dict[str, tuple[str, str, list[tuple[str, str]]]] = {
    **{name: spec for name, spec in REL_TABLES.items() if name != "PROJECTED_RELATION"},
    "CITES_SOURCE": ("Entity", "Source", CITATION_COLUMNS[:3]),
}


def _v1_node_ddl(table: str) -> str:
    columns = _V1_ENTITY_COLUMNS if table == "Entity" else NODE_COLUMNS[table]
    body = ", ".join(f"{name} {kind}" for name, kind in columns)
    return f"CREATE NODE TABLE IF NOT EXISTS {table}({body}, PRIMARY KEY({columns[0][0]}))"


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0001_provenance_spine_and_entities",
        tuple(_v1_node_ddl(table) for table in NODE_COLUMNS)
        + tuple(rel_ddl(name, src, dst, cols) for name, (src, dst, cols) in _V1_REL_TABLES.items()),
    ),
    # Versions created by reference (a speaker, the task a command mentions) are not assertions: an event is only
    # as current as what it asserted, so the read side must tell the two apart.
    Migration("0002_entity_asserted_flag", ("ALTER TABLE Entity ADD asserted BOOLEAN DEFAULT true",)),
    # The seed's provenance backbone (seed 002): Entity.event_id, Event -[:CITES_SOURCE]-> Source, source-event
    # provenance on citations, Event -[:PROJECTED_RELATION]-> Entity. Existing rows cannot be completed in place,
    # so a store that already holds data starts over and is re-projected from the log (``rebuild``).
    Migration(
        "0003_seed_provenance_backbone",
        (
            "ALTER TABLE Entity ADD event_id STRING",
            "ALTER TABLE CITES_SOURCE ADD FROM Event TO Source",
            "ALTER TABLE CITES_SOURCE ADD source_event_seq INT64",
            "ALTER TABLE CITES_SOURCE ADD source_event_hash STRING",
            rel_ddl("PROJECTED_RELATION", "Event", "Entity", PROJECTED_RELATION_COLUMNS),
        ),
        rebuild=True,
    ),
    # Forward-only storage for the relation tables read from their source side (:data:`FORWARD_ONLY`): Kuzu cannot
    # change a table's storage in place, so they are dropped and re-created, and a store holding data is re-projected
    # from the log (typed tables are re-created with the new DDL as the projection meets them).
    Migration(
        "0004_forward_only_spine_edges",
        tuple(f"DROP TABLE `{table}`" for table in _V4_FORWARD_ONLY)
        + tuple(_forward_only_ddl(t) for t in _V4_FORWARD_ONLY),
        rebuild=True,
    ),
    # One copy of each relation's audit columns (:data:`RELATES_COPIES`): PROJECTED_RELATION keeps the RELATES row's
    # id, type and endpoint names, typed tables the id only (re-created with :func:`typed_rel_ddl` when the graph
    # is re-projected from the log, which this migration asks for).
    Migration(
        "0005_one_copy_of_edge_audit",
        ("DROP TABLE `PROJECTED_RELATION`", _forward_only_ddl("PROJECTED_RELATION", PROJECTED_RELATION_STORED)),
        rebuild=True,
    ),
    # No copy of the log's text in the graph (:data:`ENTITY_TEXT_COLUMNS`): an entity's summary and properties were
    # a fifth of a 10k-event graph. Re-projected into a new file (a dropped column keeps its pages in the old one).
    Migration(
        "0006_entity_text_from_the_catalog",
        tuple(f"ALTER TABLE Entity DROP {column}" for column in ENTITY_TEXT_COLUMNS),
        rebuild=True,
    ),
    # Fewer relationship tables and columns per write (issue 23: Kuzu's COMMIT after a COPY costs ~15 ms of CPU per
    # relationship table and direction written, plus ~4 ms per column): no typed relation tables and no
    # PREVIOUS_EVENT (each repeated another table's rows, see :data:`MIRRORED`), RELATES without the columns it can
    # read elsewhere (:data:`RELATES_DERIVED`), HAS_VERSION forward only.
    Migration(
        "0007_lean_relationship_tables",
        (
            "DROP TABLE `PREVIOUS_EVENT`",
            "DROP TABLE `HAS_VERSION`",
            _forward_only_ddl("HAS_VERSION", []),
            "DROP TABLE `RELATES`",
            rel_ddl("RELATES", "Entity", "Entity", _V7_RELATES_STORED),
        ),
        rebuild=True,
    ),
    # No copy of an event's hash outside its Event node (:data:`DERIVED_HASH_COLUMNS`): versions read their source
    # event's hash through ``event_id``, citations through their seq, events their ``prev_hash`` from the chain.
    # Re-projected into a new file.
    Migration(
        "0008_hashes_from_the_event_nodes",
        (
            "ALTER TABLE Entity DROP source_event_hash",
            "ALTER TABLE CITES_SOURCE DROP source_event_hash",
            "ALTER TABLE Event DROP prev_hash",
            f"ALTER TABLE Event ADD {' '.join(UNCHAINED_PREV_HASH)}",
        ),
        rebuild=True,
    ),
    # No copy of an event's timestamp on its edges (:data:`RELATES_DERIVED`): a RELATES edge is valid from its
    # source event's ``timestamp``. Re-projected into a new file; the table is re-created (Kuzu 0.11.3 crashed in a
    # COPY into this two-way table after ``ALTER TABLE RELATES DROP valid_from``, a column in the middle: measured).
    Migration(
        "0009_edge_validity_from_the_event",
        ("DROP TABLE `RELATES`", rel_ddl("RELATES", "Entity", "Entity", RELATES_STORED)),
        rebuild=True,
    ),
    # Node tables keyed by a 64-bit number made from their id (:data:`NODE_KEY`): smaller primary-key indexes. Every
    # table is re-created (``recreates``) and the graph re-projected from the log into a new file.
    Migration("0010_integer_node_keys", _whole_schema(_v10_node_columns), rebuild=True, recreates=True),
    # No string identity stored twice (:data:`DERIVED_NODE_COLUMNS`): an entity version's ``key`` and its identity's
    # ``id`` are made from the node's session, type and name. Every table re-created, the graph re-projected.
    Migration("0011_identities_from_their_parts", _whole_schema(stored_node_columns), rebuild=True, recreates=True),
)


def schema_plan() -> list[dict[str, object]]:
    """The migration plan as data (for ``zaxy schema-plan``): no database is opened."""
    return [
        {"name": m.name, "checksum": m.checksum, "statement_count": len(m.statements), "statements": list(m.statements)}
        for m in MIGRATIONS
    ]
