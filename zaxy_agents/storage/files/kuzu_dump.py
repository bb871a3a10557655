"""The embedded graph's canonical dump: every node and edge as sorted JSON lines, the input of the rebuild digest.

Why a module of its own: the dump is the one read that must give, byte for byte, what every other store gives for the
same log (the PostgreSQL and in-memory stores dump the same lines), so it puts back every column this file does not
store (entity text, hash copies, edge audit columns) in ``kuzu_schema.NODE_COLUMNS``'s order, and encodes a column at
a time (several times faster than row by row, with byte-identical output).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from zaxy_agents.eventloom.canonical import GENESIS_HASH
from zaxy_agents.projection.model import typed_label
from zaxy_agents.projection.planner import event_node_id

from . import kuzu_layout as layout
from .kuzu_rows import KuzuRowReads

_json_string = json.encoder.encode_basestring  # C accelerated, like json.dumps(..., ensure_ascii=False)
_JSON_SCALAR = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class KuzuDump(KuzuRowReads):
    """A Kuzu graph file that can list itself canonically (:meth:`dump_lines`)."""

    def dump_lines(self) -> Iterator[str]:
        """Canonical, sorted text of every node and edge (the input of the rebuild digest).

        Each line is ``json.dumps([table, *row], separators=(",", ":"), ensure_ascii=False)``; it is assembled
        column by column (one C-level encoding pass per column, then a join per row), several times faster than
        encoding row by row, with byte-identical output.
        """
        hashes: dict[str, str] = {}  # event id -> hash, for the hash copies the file does not store
        derived = [
            column not in layout.stored_names(t)
            for t, column in layout.DERIVED_HASH_COLUMNS.items()
            if t in layout.NODE_COLUMNS
        ]
        if any(derived) or "source_event_hash" not in dict(layout.stored_columns("CITES_SOURCE")):
            hashes = dict(self._rows("MATCH (e:Event) RETURN e.id, e.hash"))
        for table in layout.NODE_COLUMNS:
            names = layout.stored_names(table)
            query = "MATCH (n:" + table + ") RETURN " + ", ".join(f"n.{c}" for c in names)
            yield from self._canonical(table, query, hashes)
        relations = self._relation_lines()
        for table in sorted(set(layout.REL_TABLES) | set(relations.typed)):
            if table == "RELATES":
                yield from sorted(relations.relates)
            elif table not in layout.REL_TABLES:
                yield from sorted(relations.typed[table])
            elif table == "PROJECTED_RELATION":
                yield from self._projected_relation_lines(relations.audits)
            elif table == "CITES_SOURCE" and "source_event_hash" not in dict(layout.stored_columns(table)):
                yield from self._citation_lines(hashes)
            elif table in layout.MIRRORED:  # the mirrored table's rows, reversed
                lines = self._canonical(
                    table, f"MATCH (a:Event)-[r:`{layout.MIRRORED[table]}`]->(b:Event) RETURN b.id, a.id"
                )
                yield from lines
            else:
                source, target, columns = layout.REL_TABLES[table]
                projection = "".join(f", r.{name}" for name, _ in columns)
                pairs = [(source, target), *([layout.EXTRA_PAIRS[table]] if table in layout.EXTRA_PAIRS else [])]
                lines = [
                    line
                    for start, end in pairs
                    for line in self._canonical(
                        table,
                        f"MATCH (a:{start})-[r:`{table}`]->(b:{end}) RETURN "
                        + ", ".join(layout.column_exprs("a", start, "id") + layout.column_exprs("b", end, "id"))
                        + projection,
                        ends=(start, end),
                    )
                ]
                yield from sorted(lines) if len(pairs) > 1 else lines

    def _relation_lines(self) -> _RelationLines:
        """Every RELATES row as a dump line, the typed label's line beside it, and its audit columns encoded (keyed
        by the relation id, for PROJECTED_RELATION)."""
        self._check_interrupted()
        with self._reading():
            result = self._connection().execute(
                "MATCH (a:Entity)-[r:RELATES]->(b:Entity) RETURN a.id, b.id, a.session_id, "
                + layout.relates_stored_return()
            )
            rows = result.get_all()
            result.close()
        lines = _RelationLines()
        audits = self._relation_audits([(session, stored) for _a, _b, session, *stored in rows])
        for (source, target, *_rest), audit in zip(rows, audits, strict=True):
            encoded = ",".join(_json_value(audit[name]) for name in layout.AUDIT_NAMES)
            lines.audits[audit["id"]] = encoded
            ends = _json_value(source) + "," + _json_value(target) + "," + encoded + "]"
            lines.relates.append('["RELATES",' + ends)
            label = typed_label(audit["relation_type"])
            lines.typed.setdefault(label, []).append("[" + _json_string(label) + "," + ends)
        return lines

    def _citation_lines(self, hashes: dict[str, str]) -> list[str]:
        """CITES_SOURCE's rows of both pairs, each with its source event's hash (read from ``hashes``, event id ->
        hash) in its place."""
        lines = []
        for start in (layout.REL_TABLES["CITES_SOURCE"][0], layout.EXTRA_PAIRS["CITES_SOURCE"][0]):
            rows = self._rows(
                f"MATCH (a:{start})-[r:CITES_SOURCE]->(b:Source) RETURN a.id, b.id, r.line_start, r.line_end, "
                "r.checksum, r.source_event_seq, b.session_id"
            )
            found = self._known_hashes([event_node_id(session, row[-1]) for *row, session in rows], hashes)
            for *values, session in rows:
                values.append(found[event_node_id(session, values[-1])])
                lines.append('["CITES_SOURCE",' + ",".join(_json_value(value) for value in values) + "]")
        return sorted(lines)

    def _known_hashes(self, ids: list[str], hashes: dict[str, str]) -> dict[str, str]:
        """``hashes`` (event id -> hash, read earlier in a dump) with the ids it lacks looked up now: the dump's
        queries are separate reads, and a write may commit between them (a row and its event are always written
        together, so the event is there)."""
        missing = sorted({event_id for event_id in ids if event_id not in hashes})
        if missing:
            hashes.update(self._event_hashes(missing))
        return hashes

    def _derived_hashes(self, table: str, held: dict[str, Any], hashes: dict[str, str]) -> list[str | None]:
        """The hash column of ``kuzu_schema.DERIVED_HASH_COLUMNS`` for a dump's rows (``held``: column -> values):
        an entity version's source event's hash; an event's ``prev_hash``, unless stored as unchained ("" for a
        null one), the chain's."""
        if table == "Entity":
            event_ids = held["event_id"].to_pylist()
            found = self._known_hashes(event_ids, hashes)
            return [found[event_id] for event_id in event_ids]
        sessions, seqs = held["session_id"].to_pylist(), held["seq"].to_pylist()
        unchained = held[layout.UNCHAINED].to_pylist()
        hashes.update(zip(held["id"].to_pylist(), held["hash"].to_pylist(), strict=True))
        chained = [event_node_id(s, q - 1) for s, q, own in zip(sessions, seqs, unchained, strict=True) if own is None]
        found = self._known_hashes([i for i in chained if not i.endswith(":0")], hashes)
        return [
            (own or None) if own is not None else GENESIS_HASH if seq == 1 else found[event_node_id(session, seq - 1)]
            for session, seq, own in zip(sessions, seqs, unchained, strict=True)
        ]

    def _projected_relation_lines(self, audits: dict[str, str]) -> list[str]:
        """PROJECTED_RELATION's rows: its own columns, then the RELATES row's audit columns (joined by id)."""
        query = "MATCH (a:Event)-[c:PROJECTED_RELATION]->(b:Entity) RETURN a.id, b.id, c.source, c.target, c.id"
        rows = self._rows(query)
        lines = []
        for *head_values, relation_id in rows:  # the columns every store dumps: source, target, then the audit
            audit = audits.get(relation_id)
            if audit is None:  # as the join of earlier releases: a provenance edge without its relation is not listed
                continue
            head = ",".join(_json_value(value) for value in head_values)
            lines.append('["PROJECTED_RELATION",' + head + "," + audit + "]")
        return sorted(lines)

    def _canonical(
        self, table: str, query: str, hashes: dict[str, str] | None = None, ends: tuple[str, str] | None = None
    ) -> list[str]:
        """Sorted dump lines of a query's rows; a node table's rows with every column of ``NODE_COLUMNS`` in its
        place, those the file does not store put back (the text from the catalog, the hash copies from ``hashes``,
        event id -> hash)."""
        self._check_interrupted()
        with self._reading():
            result = self._connection().execute(query)
            arrow = result.get_as_arrow()
            result.close()
        if not arrow.num_rows:
            return []
        prefix = "[" + _json_string(table) + ","
        if table not in layout.NODE_COLUMNS:
            listed = [column.to_pylist() for column in arrow.columns]
            if ends is not None:  # a relationship's endpoint ids, made from their parts when not stored
                cut = len(layout.column_exprs("a", ends[0], "id"))
                stop = cut + len(layout.column_exprs("b", ends[1], "id"))
                start_of, finish_of = layout.column_maker(ends[0], "id"), layout.column_maker(ends[1], "id")
                starts = [start_of(parts) for parts in zip(*listed[:cut], strict=True)]
                finishes = [finish_of(parts) for parts in zip(*listed[cut:stop], strict=True)]
                listed = [starts, finishes, *listed[stop:]]
            columns = [[_json_value(value) for value in column] for column in listed]
            return sorted(prefix + ",".join(row) + "]" for row in zip(*columns, strict=True))
        held = dict(zip((name.split(".", 1)[-1] for name in arrow.column_names), arrow.columns, strict=True))
        values: dict[str, list[Any]] = {}
        for name, (sources, make) in layout.derived_node(table).items():  # made from the node's stored columns
            parts = zip(*(held[source].to_pylist() for source in sources), strict=True)
            values[name] = [make(*row) for row in parts]
        if table == "Entity" and not set(held).issuperset(layout.ENTITY_TEXT_COLUMNS):  # the text, from the catalog
            values |= self._text_columns(held["id"].to_pylist())
        derived = layout.DERIVED_HASH_COLUMNS.get(table)
        if derived is not None and derived not in held:
            values[derived] = self._derived_hashes(table, held, {} if hashes is None else hashes)
        columns = [
            [_json_value(value) for value in (values[name] if name in values else held[name].to_pylist())]
            for name, _ in layout.NODE_COLUMNS[table]
        ]
        return sorted(prefix + ",".join(row) + "]" for row in zip(*columns, strict=True))


@dataclass
class _RelationLines:
    relates: list[str] = field(default_factory=list)
    typed: dict[str, list[str]] = field(default_factory=dict)
    audits: dict[str, str] = field(default_factory=dict)  # relation id -> its audit columns, encoded


def _json_value(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, default=str)`` for the scalar types a graph row holds."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value) if math.isfinite(value) else _JSON_SCALAR(value)
    return _json_string(str(value))
