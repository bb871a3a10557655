"""A backend-neutral view of the projected graph: the canonical dump (`dump_lines`) parsed back into tables.

Both stores produce the same dump for the same log, so tests that read the graph through this view run
unchanged on Kuzu and on PostgreSQL.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.storage.files.kuzu_schema import EDGE_AUDIT_COLUMNS, NODE_COLUMNS, REL_TABLES


def graph_tables(fabric: MemoryFabric) -> dict[str, list[dict[str, Any]]]:
    """Every node and edge of the durable graph, as dicts keyed by column (edges also by ``from``/``to``)."""
    fabric.project()
    assert fabric.projector.flush()
    tables: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in fabric.projector.store.dump_lines():
        table, *values = json.loads(line)
        if table in NODE_COLUMNS:
            names = [name for name, _ in NODE_COLUMNS[table]]
        else:
            columns = REL_TABLES[table][2] if table in REL_TABLES else EDGE_AUDIT_COLUMNS
            names = ["from", "to", *(name for name, _ in columns)]
        tables[table].append(dict(zip(names, values, strict=True)))
    return tables


def by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in rows}
