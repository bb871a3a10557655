"""What the embedded graph's rows need from elsewhere to be whole: entity text from the catalog, event hashes and
timestamps from the graph's Event nodes.

Why a module of its own: the file stores no entity text (``kuzu_schema.ENTITY_TEXT_COLUMNS``) and no copy of an
event's hash or timestamp where the Event node holds it (``DERIVED_HASH_COLUMNS``, ``RELATES_DERIVED``); the writes,
the reads and the dump all put those back the same way, through :class:`KuzuRowReads`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from zaxy_agents.projection.planner import event_node_id
from zaxy_agents.projection.protocol import EntityWords
from zaxy_agents.projection.records import EntityVersion

from . import kuzu_layout as layout
from .kuzu_database import KuzuDatabase

LOOKUP_CHUNK = 2000  # identities looked up per query when the planner continues from the graph
TEXT_CHUNK = 2000  # version ids whose text is asked for at once (dump, keyword search)
Texts = Callable[[Sequence[str]], dict[str, tuple[str, str]]]  # version ids -> (summary, properties JSON)


class KuzuRowReads(KuzuDatabase):
    """A Kuzu graph file whose rows are completed on reading: entity text from the attached catalog, event hashes
    and timestamps from the Event nodes."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self._texts: Texts | None = None
        self._entity_words: EntityWords | None = None

    def attach_texts(self, texts: Texts) -> None:
        """Where entity versions' text comes from (the catalog, attached by GraphSync): this file holds none."""
        self._texts = texts

    def attach_entity_words(self, words: EntityWords) -> None:
        """Which versions may hold a word (the catalog's entity keyword index): :meth:`search_entities` reads only
        their text."""
        self._entity_words = words

    def _texts_of(self, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        if self._texts is None:
            raise RuntimeError(
                f"{self.path}: entity text is read from the catalog and none is attached; open the graph through "
                "MemoryFabric (projector.store), which attaches it"
            )
        found = looked_up(ids, TEXT_CHUNK, self._texts)
        problem = "entity versions of the graph are not in the catalog"
        return every_one(self.path, ids, found, problem, "the derived state does not match the graph")

    def _text_columns(self, ids: list[str]) -> dict[str, list[str]]:
        texts = self._texts_of(ids)
        return {
            "summary": [texts[version_id][0] for version_id in ids],
            "properties": [texts[version_id][1] for version_id in ids],
        }

    def _entity_versions(self, rows: list[list[Any]]) -> list[EntityVersion]:
        """Entity versions from rows of :func:`.kuzu_layout.entity_projection`, their text from the catalog."""
        if not rows:
            return []
        texts = self._texts_of(list(dict.fromkeys(row[0] for row in rows)))
        stored = layout.stored_names("Entity")
        derived = layout.DERIVED_HASH_COLUMNS["Entity"] not in stored
        at = stored.index("event_id")
        hashes = self._event_hashes(sorted({row[at] for row in rows})) if derived else {}
        versions = []
        complete = layout.completer("Entity")
        for row in rows:
            fields = complete(dict(zip(stored, row, strict=True)))
            fields["summary"], fields["properties"] = texts[row[0]]
            if derived:  # the hash of the event that projected the version (kuzu_schema.DERIVED_HASH_COLUMNS)
                fields["source_event_hash"] = hashes[row[at]]
            versions.append(EntityVersion.from_row(fields))
        return versions

    def _relation_audits(self, edges: list[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
        """RELATES rows as every store reads them, from (the edge's session, its :data:`RELATES_STORED` values): the
        columns Kuzu does not store (``kuzu_schema.RELATES_DERIVED``) put back, evidence equal to the edge's own
        provenance filled in (``RELATES_EVIDENCE_DEFAULTS``)."""
        names = layout.relates_stored()
        seq_at = names.index("source_event_seq")
        events = self._event_facts(sorted({event_node_id(session, stored[seq_at]) for session, stored in edges}))
        audits = []
        for session, stored in edges:
            audit = dict(zip(names, stored, strict=True))
            audit["session_id"], audit["valid_to"] = session, None
            event_hash, timestamp = events[event_node_id(session, audit["source_event_seq"])]
            audit["source_event_hash"] = event_hash
            if "valid_from" not in names:  # since 0009: the source event's timestamp
                audit["valid_from"] = timestamp
            for evidence, own in layout.RELATES_EVIDENCE_DEFAULTS.items():
                if audit[evidence] is None:
                    audit[evidence] = audit[own]
            audits.append({name: audit[name] for name in layout.AUDIT_NAMES})
        return audits

    def _event_hashes(self, ids: list[str]) -> dict[str, str]:
        """Event id -> its Eventloom hash (primary-key lookups); every id must be in the graph."""
        found = looked_up(ids, LOOKUP_CHUNK, self._event_hashes_found)
        problem = "rows name a source event the graph does not hold"
        return every_one(self.path, ids, found, problem, "the graph is damaged")

    def _event_facts(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        """Event id -> (hash, timestamp) (primary-key lookups); every id must be in the graph."""
        query = f"UNWIND $ids AS i MATCH (e:Event {{{layout.key_name()}: i}}) RETURN e.id, e.hash, e.timestamp"
        fetch = lambda chunk: {i: (h, t) for i, h, t in self._rows(query, {"ids": layout.keys(chunk)})}  # noqa: E731
        found = looked_up(ids, LOOKUP_CHUNK, fetch)
        return every_one(
            self.path, ids, found, "relations name a source event the graph does not hold", "the graph is damaged"
        )

    def _event_hashes_found(self, ids: Sequence[str]) -> dict[str, str]:
        """Event id -> hash of the ids the graph holds (one query)."""
        query = f"UNWIND $ids AS i MATCH (e:Event {{{layout.key_name()}: i}}) RETURN e.id, e.hash"
        return dict(self._rows(query, {"ids": layout.keys(ids)}))


def looked_up(ids: Sequence[str], chunk: int, fetch: Callable[[Sequence[str]], dict[str, Any]]) -> dict[str, Any]:
    """``fetch`` of ``ids``, ``chunk`` at a time, merged."""
    found: dict[str, Any] = {}
    for start in range(0, len(ids), chunk):
        found.update(fetch(ids[start : start + chunk]))
    return found


def every_one(path: Path, ids: Sequence[str], found: dict[str, Any], problem: str, meaning: str) -> dict[str, Any]:
    """``found`` when it holds every id; otherwise an error that says what is missing and how to repair it."""
    missing = [item for item in ids if item not in found]
    if missing:
        raise RuntimeError(f"{path}: {len(missing)} {problem} (first: {missing[0]}); {meaning}: run `zaxy reproject`")
    return found
