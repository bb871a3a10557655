"""The column layout of the embedded graph file: which columns it stores and how the others are made from them.

Why a module of its own: the graph store's modules (:mod:`.kuzu_database`, :mod:`.kuzu_migrations`,
:mod:`.kuzu_rows`, :mod:`.kuzu_writes`, :mod:`.kuzu_dump`, :mod:`.kuzu_store`) read ``kuzu_schema``'s tables only
through this module, as ``kuzu_layout.NAME`` at each use (never ``from ... import NAME``; tests/storage/
test_kuzu_layout_reads.py checks it). So the layout an earlier release wrote is one patch away: a test sets
``kuzu_layout.MIGRATIONS``, ``stored_node_columns``, ``RELATES_STORED``... here, and every read and write of the
store follows it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .kuzu_schema import (
    BATCH_ROW_KEYS,
    DERIVED_HASH_COLUMNS,
    DERIVED_NODE_COLUMNS,
    EDGE_AUDIT_COLUMNS,
    ENTITY_TEXT_COLUMNS,
    EXTRA_PAIRS,
    MIGRATION_RECORD_TABLE,
    MIGRATION_TABLE_DDL,
    MIGRATIONS,
    MIRRORED,
    NODE_COLUMNS,
    NODE_KEY,
    REL_TABLES,
    RELATES_EVIDENCE_DEFAULTS,
    RELATES_STORED,
    UNCHAINED_PREV_HASH,
    node_key,
    stored_columns,
    stored_node_columns,
)

__all__ = [
    "BATCH_ROW_KEYS",
    "DERIVED_HASH_COLUMNS",
    "DERIVED_NODE_COLUMNS",
    "EDGE_AUDIT_COLUMNS",
    "ENTITY_TEXT_COLUMNS",
    "EXTRA_PAIRS",
    "MIGRATIONS",
    "MIGRATION_RECORD_TABLE",
    "MIGRATION_TABLE_DDL",
    "MIRRORED",
    "NODE_COLUMNS",
    "NODE_KEY",
    "RELATES_EVIDENCE_DEFAULTS",
    "RELATES_STORED",
    "REL_TABLES",
    "node_key",
    "stored_columns",
    "stored_node_columns",
]

UNCHAINED = UNCHAINED_PREV_HASH[0]  # the Event column of a prev_hash the chain does not give
AUDIT_NAMES = [name for name, _ in EDGE_AUDIT_COLUMNS]


def stored_names(table: str) -> list[str]:
    """The columns of a node table this file stores, its numeric primary key left out (``kuzu_schema.
    stored_node_columns``; read at each use, so a test can write the layout of an earlier release)."""
    return [name for name, _ in stored_node_columns(table) if name != NODE_KEY[0]]


def key_name() -> str:
    """The primary-key column of this file's node tables: ``pk``, a number made from the node's id
    (``kuzu_schema.NODE_KEY``, since migration 0010), or ``id`` (earlier layouts)."""
    return stored_node_columns("Event")[0][0]


def derived_node(table: str) -> dict[str, tuple[tuple[str, ...], Callable[..., Any]]]:
    """The columns of ``kuzu_schema.DERIVED_NODE_COLUMNS`` this file does not store for ``table``."""
    stored = stored_names(table)
    return {name: spec for name, spec in DERIVED_NODE_COLUMNS.get(table, {}).items() if name not in stored}


def completer(table: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A function that adds to a node's stored columns (a dict) the columns the file does not store, made from them
    (built once per read: the layout is looked up here, not per row)."""
    derived = list(derived_node(table).items())

    def complete(fields: dict[str, Any]) -> dict[str, Any]:
        for name, (sources, make) in derived:
            fields[name] = make(*(fields[source] for source in sources))
        return fields

    return complete


def column_exprs(alias: str, table: str, name: str) -> list[str]:
    """What to RETURN for ``alias.name``: the column, or the stored columns it is made from."""
    spec = derived_node(table).get(name)
    return [f"{alias}.{name}"] if spec is None else [f"{alias}.{source}" for source in spec[0]]


def column_maker(table: str, name: str) -> Callable[[Sequence[Any]], Any]:
    """A function giving ``alias.name`` from the values :func:`column_exprs` returned (built once per read)."""
    spec = derived_node(table).get(name)
    if spec is None:
        return lambda values: values[0]
    make = spec[1]
    return lambda values: make(*values)


def keys(ids: Iterable[str]) -> list[Any]:
    """The primary-key values of the nodes whose ids are ``ids`` (in order)."""
    return [node_key(node_id) for node_id in ids] if key_name() == NODE_KEY[0] else list(ids)


def relates_stored() -> list[str]:
    """The RELATES columns this file stores (``kuzu_schema.RELATES_STORED``; read at each use, so a test can write
    the layout of an earlier release)."""
    return [name for name, _ in RELATES_STORED]


def relates_stored_return() -> str:
    return ", ".join(f"r.{name}" for name in relates_stored())


def row_value(row: dict[str, Any], name: str) -> Any:
    """A node or relationship row's value for a stored column: the numeric primary key is made from its ``id``."""
    return node_key(row["id"]) if name == NODE_KEY[0] else row.get(name)


def entity_projection(alias: str) -> str:
    """The Entity columns this file stores, as a RETURN list (the id first)."""
    return ", ".join(f"{alias}.{name}" for name in stored_names("Entity"))
