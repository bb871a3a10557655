"""Turn (event, extraction) pairs into graph rows: stable ids, versions, supersession, validity windows.

The planner is the only place that decides identity and time, and it is deterministic: replaying the same log
into an empty planner yields byte-identical rows (and so the same graph digest). What it must know — the current
version of every entity key it touches, which sources and typed relation tables exist — is read from where the
projection lies (:class:`PlannerState`: the catalog, or a graph store) for just the keys a chunk of events
refers to (:meth:`ProjectionPlanner.prefetch`), so planning memory is bounded by the chunk, not the history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .model import (
    EntityDraft,
    EntityRef,
    Extraction,
    SearchDoc,
    entity_key,
    normalise_name,
    stable_id,
    typed_label,
)
from .properties_json import properties_json
from .refs import key_hash


def event_node_id(session: str, seq: int) -> str:
    return f"{session}:{seq}"


@dataclass(slots=True)
class KeyState:
    """What the planner must remember about one entity identity."""

    current: str  # id of the latest version
    valid_from: str
    closed: bool = False


@dataclass
class ProjectionBatch:
    """Rows for one flush, in the order a store must write them (all inside one transaction)."""

    sessions: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    has_event: list[dict[str, Any]] = field(default_factory=list)
    next_event: list[dict[str, Any]] = field(default_factory=list)
    previous_event: list[dict[str, Any]] = field(default_factory=list)
    entity_keys: list[dict[str, Any]] = field(default_factory=list)
    entities: list[dict[str, Any]] = field(default_factory=list)
    has_version: list[dict[str, Any]] = field(default_factory=list)
    projected: list[dict[str, Any]] = field(default_factory=list)
    closures: list[dict[str, Any]] = field(default_factory=list)  # updates of versions written earlier
    key_updates: list[dict[str, Any]] = field(default_factory=list)  # updates of keys written earlier
    superseded_by: list[dict[str, Any]] = field(default_factory=list)
    previous_version: list[dict[str, Any]] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    cites_source: list[dict[str, Any]] = field(default_factory=list)
    event_cites_source: list[dict[str, Any]] = field(default_factory=list)  # Event -> Source (seed 002)
    relations: list[dict[str, Any]] = field(default_factory=list)
    projected_relations: list[dict[str, Any]] = field(default_factory=list)  # Event -> relation target
    new_labels: list[str] = field(default_factory=list)
    feedback: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    cursors: dict[str, tuple[int, str]] = field(default_factory=dict)
    searchable: list[SearchDoc] = field(default_factory=list)
    refs: list[tuple[str, int, int]] = field(default_factory=list)  # (session, key_hash(key), seq): event_refs
    event_count: int = 0

    def row_count(self) -> int:
        return sum(
            len(rows)
            for rows in (
                self.sessions,
                self.events,
                self.has_event,
                self.next_event,
                self.previous_event,
                self.entity_keys,
                self.entities,
                self.has_version,
                self.projected,
                self.closures,
                self.key_updates,
                self.superseded_by,
                self.previous_version,
                self.sources,
                self.cites_source,
                self.event_cites_source,
                self.relations,
                self.projected_relations,
                self.feedback,
                self.failures,
            )
        )

    def after(self, session: str, done: int) -> ProjectionBatch:
        """The part of a one-session batch beyond ``done`` (what an index that already holds up to there needs)."""
        if self.cursors[session][0] <= done:
            return ProjectionBatch()
        part = ProjectionBatch(cursors=dict(self.cursors))
        part.event_count = sum(1 for row in self.events if row["seq"] > done)
        part.events = [row for row in self.events if row["seq"] > done]
        part.searchable = [doc for doc in self.searchable if doc.seq > done]
        part.entities = [row for row in self.entities if row["source_event_seq"] > done]
        part.relations = [row for row in self.relations if row["source_event_seq"] > done]
        part.feedback = [row for row in self.feedback if row["seq"] > done]
        part.failures = [row for row in self.failures if row["seq"] > done]
        return part


class PlannerState(Protocol):
    """Where the planner reads the projection's state from (bulk lookups of just what a chunk touches)."""

    def key_states(self, keys: Iterable[str]) -> dict[str, KeyState]: ...

    def sources_present(self, ids: Iterable[str]) -> set[str]: ...


def referenced(envelope: dict[str, Any], extraction: Extraction) -> tuple[set[str], set[str]]:
    """The entity keys and source ids planning this event may read (see :meth:`ProjectionPlanner.prefetch`)."""
    session = envelope["session"]
    keys = {entity_key(session, draft.entity_type, draft.name) for draft in extraction.entities}
    keys.update(entity_key(session, i.target.entity_type, i.target.name) for i in extraction.invalidations)
    for relation in extraction.relations:
        keys.add(entity_key(session, relation.source.entity_type, relation.source.name))
        keys.add(entity_key(session, relation.target.entity_type, relation.target.name))
    sources = {f"{session}\x1f{draft.source_path}" for draft in extraction.entities if draft.source_path}
    return keys, sources


def search_doc(envelope: dict[str, Any], extraction: Extraction) -> SearchDoc | None:
    """What the retrieval indexes index for one event (``None`` when it has no searchable text)."""
    if not extraction.searchable_text:
        return None
    return SearchDoc(
        envelope["session"],
        envelope["seq"],
        envelope["hash"],
        envelope["type"],
        extraction.searchable_text,
        extraction.speaker,
        extraction.caption,
        extraction.segment,
        extraction.occurred_at or envelope["timestamp"],
    )


def _plans_rows(extraction: Extraction) -> bool:
    """Whether an extraction yields rows beyond the event's own (an empty one: bookkeeping types, erased events)."""
    return bool(
        extraction.entities
        or extraction.invalidations
        or extraction.relations
        or extraction.feedback
        or extraction.failures
    )


class ProjectionPlanner:
    """Stateful, deterministic planner shared by incremental catch-up and full rebuilds."""

    def __init__(self) -> None:
        self.keys: dict[str, KeyState] = {}
        self.labels: set[str] = set()
        self.sessions: set[str] = set()
        self.sources: set[str] = set()
        self._batch = ProjectionBatch()
        self._pending_entities: dict[str, dict[str, Any]] = {}
        self._pending_keys: dict[str, dict[str, Any]] = {}
        self._looked_up: set[str] = set()
        # Per session, the seq of the last event planned (or known present): an event whose predecessor was
        # skipped (edited or unreadable, see the read-side checks) gets no NEXT/PREVIOUS edge to a missing node.
        self._last_seq: dict[str, int] = {}
        self._refs: set[str] = set()  # the keys the event being planned refers to (event_refs, for cat_refs)

    def restore(self, keys: dict[str, KeyState], labels: set[str], sessions: set[str], sources: set[str]) -> None:
        """Resume from a store's persisted state (current versions, typed tables, sessions, sources)."""
        self.keys, self.labels, self.sessions, self.sources = keys, labels, sessions, sources

    def prefetch(self, items: Iterable[tuple[dict[str, Any], Extraction]], state: PlannerState) -> None:
        """Load the state of every key and source ``items`` refer to that this planner has not seen yet.

        Keys planned since the last :meth:`forget` are already here (and newer than the state's copy, which
        only holds committed batches), so only the others are read.
        """
        keys: set[str] = set()
        sources: set[str] = set()
        for envelope, extraction in items:
            if not _plans_rows(extraction):  # (most of a LangGraph turn: checkpoints, checkout records)
                continue
            more_keys, more_sources = referenced(envelope, extraction)
            keys |= more_keys
            sources |= more_sources
        missing = [key for key in keys if key not in self.keys and key not in self._looked_up]
        if missing:
            self.keys.update(state.key_states(missing))
            self._looked_up.update(missing)
        unknown = [source for source in sources if source not in self.sources and source not in self._looked_up]
        if unknown:
            self.sources |= state.sources_present(unknown)
            self._looked_up.update(unknown)

    def mark_present(self, session: str, seq: int) -> None:
        """The event ``seq`` of ``session`` is in the graph already (the next one planned may link to it)."""
        self._last_seq[session] = seq

    def forget(self) -> None:
        """Drop the key and source states read or planned so far (after their batch committed)."""
        self.keys.clear()
        self.sources.clear()
        self._looked_up.clear()

    # ------------------------------------------------------------------ planning
    def add(self, envelope: dict[str, Any], extraction: Extraction) -> None:
        """Plan the rows of one event (events must arrive in seq order per session)."""
        batch = self._batch
        session, seq, event_hash = envelope["session"], envelope["seq"], envelope["hash"]
        event_id = event_node_id(session, seq)
        if session not in self.sessions:
            self.sessions.add(session)
            batch.sessions.append({"id": session})
        batch.events.append(
            {
                "id": event_id,
                "session_id": session,
                "seq": seq,
                "hash": event_hash,
                "prev_hash": envelope["prev_hash"],
                "type": envelope["type"],
                "actor": envelope["actor"],
                "timestamp": envelope["timestamp"],
            }
        )
        batch.has_event.append({"from": session, "to": event_id})
        known = self._last_seq.get(session)
        self._last_seq[session] = seq
        if seq > 1 and (known is None or known >= seq - 1):  # no gap since the last one
            previous_id = event_node_id(session, seq - 1)
            batch.next_event.append({"from": previous_id, "to": event_id})
            batch.previous_event.append({"from": event_id, "to": previous_id})
        if _plans_rows(extraction):
            self._refs.clear()
            self._plan_extraction(envelope, extraction, event_id)
            batch.refs.extend((session, key_hash(key), seq) for key in self._refs)
        doc = search_doc(envelope, extraction)
        if doc is not None:
            batch.searchable.append(doc)
        batch.cursors[session] = (seq, event_hash)
        batch.event_count += 1

    def _plan_extraction(self, envelope: dict[str, Any], extraction: Extraction, event_id: str) -> None:
        """The rows of what one event's extraction asserts, closes, relates, reinforces or failed at."""
        batch = self._batch
        session, seq, event_hash = envelope["session"], envelope["seq"], envelope["hash"]
        provenance = {"session": session, "seq": seq, "hash": event_hash, "type": envelope["type"]}
        citations_before = len(batch.cites_source)
        for draft in extraction.entities:
            self._plan_entity(draft, provenance, event_id, envelope["timestamp"])
        for invalidation in extraction.invalidations:
            closed_at = invalidation.at or envelope["timestamp"]
            self._close(invalidation.target, session, provenance, closed_at, invalidation.reason)
        for index, relation in enumerate(extraction.relations):
            self._plan_relation(relation, index, provenance, envelope["timestamp"])
        self._plan_event_citations(batch.cites_source[citations_before:], event_id)
        for index, signal in enumerate(extraction.feedback):
            target = entity_key(session, signal.target.entity_type, signal.target.name)
            self._refs.add(target)
            batch.feedback.append(
                {
                    "id": f"{event_id}:{index}",
                    "session_id": session,
                    "seq": seq,
                    "entity_key": target,
                    "signal": signal.signal,
                    "weight": signal.weight,
                    "positive": signal.positive,
                    "timestamp": envelope["timestamp"],
                }
            )
        for index, reason in enumerate(extraction.failures):
            batch.failures.append(
                {
                    "id": f"{event_id}:{index}",
                    "session_id": session,
                    "seq": seq,
                    "event_type": envelope["type"],
                    "reason": reason[:1000],
                }
            )

    def pending_events(self) -> int:
        return self._batch.event_count

    def take_batch(self) -> ProjectionBatch:
        """Hand over the planned rows and start a new batch."""
        batch, self._batch = self._batch, ProjectionBatch()
        self._pending_entities.clear()
        self._pending_keys.clear()
        return batch

    # ------------------------------------------------------------------ internals
    def _plan_entity(self, draft: EntityDraft, provenance: dict[str, Any], event_id: str, timestamp: str) -> None:
        session = provenance["session"]
        key = entity_key(session, draft.entity_type, draft.name)
        self._refs.add(key)
        state = self.keys.get(key)
        if draft.mode == "reference" and state is not None:
            return
        valid_from = draft.valid_from or timestamp
        version_id = stable_id(key, valid_from, provenance["seq"])
        row = {
            "id": version_id,
            "key": key,
            "session_id": session,
            "name": draft.name,
            "entity_type": draft.entity_type,
            "summary": draft.summary,
            "properties": properties_json(draft.properties),
            "valid_from": valid_from,
            "valid_to": None,
            "invalidated": False,
            "source_event_seq": provenance["seq"],
            "source_event_hash": provenance["hash"],
            "source_event_type": provenance["type"],
            "source_thread": session,
            "importance": draft.importance,
            "source_path": draft.source_path,
            "asserted": draft.mode == "assert",
            "event_id": event_id,
        }
        batch = self._batch
        batch.entities.append(row)
        self._pending_entities[version_id] = row
        batch.projected.append({"from": event_id, "to": version_id})
        batch.has_version.append({"from": key, "to": version_id})
        if state is None:
            key_row = {
                "id": key,
                "session_id": session,
                "name": draft.name,
                "norm_name": normalise_name(draft.name),
                "entity_type": draft.entity_type,
                "current_version": version_id,
                "closed": False,
            }
            batch.entity_keys.append(key_row)
            self._pending_keys[key] = key_row
        else:
            if not state.closed:
                self._set_valid_to(state.current, valid_from, provenance["seq"], invalidated=False, reason="")
            batch.superseded_by.append({"from": state.current, "to": version_id})
            batch.previous_version.append({"from": version_id, "to": state.current})
            self._update_key(key, version_id, closed=False)
        self.keys[key] = KeyState(version_id, valid_from)
        if draft.source_path:
            source_id = f"{session}\x1f{draft.source_path}"
            if source_id not in self.sources:
                self.sources.add(source_id)
                batch.sources.append({"id": source_id, "session_id": session, "path": draft.source_path})
            batch.cites_source.append(
                {
                    "from": version_id,
                    "to": source_id,
                    "line_start": draft.line_start,
                    "line_end": draft.line_end,
                    "checksum": draft.checksum,
                    "source_event_seq": provenance["seq"],
                    "source_event_hash": provenance["hash"],
                }
            )

    def _plan_event_citations(self, citations: list[dict[str, Any]], event_id: str) -> None:
        """The event cites every source its entities cite: one edge per source, spanning their line ranges."""
        by_source: dict[str, list[dict[str, Any]]] = {}
        for row in citations:
            by_source.setdefault(row["to"], []).append(row)
        for source_id, rows in by_source.items():
            starts = [r["line_start"] for r in rows if r["line_start"] is not None]
            ends = [r["line_end"] for r in rows if r["line_end"] is not None]
            checksums = [r["checksum"] for r in rows if r["checksum"] is not None]
            self._batch.event_cites_source.append(
                {
                    "from": event_id,
                    "to": source_id,
                    "line_start": min(starts) if starts else None,
                    "line_end": max(ends) if ends else None,
                    "checksum": min(checksums) if checksums else None,
                    "source_event_seq": rows[0]["source_event_seq"],
                    "source_event_hash": rows[0]["source_event_hash"],
                }
            )

    def _close(self, target: EntityRef, session: str, provenance: dict[str, Any], timestamp: str, reason: str) -> None:
        key = entity_key(session, target.entity_type, target.name)
        self._refs.add(key)
        state = self.keys.get(key)
        if state is None or state.closed:
            self._batch.failures.append(
                {
                    "id": f"{event_node_id(session, provenance['seq'])}:invalidate:{stable_id(key, length=8)}",
                    "session_id": session,
                    "seq": provenance["seq"],
                    "event_type": provenance["type"],
                    "reason": f"nothing current to invalidate for {target.entity_type} {target.name!r}",
                }
            )
            return
        # A window never closes before it opened: an invalid_at earlier than the version's start closes it there.
        valid_to = max(timestamp, state.valid_from)
        self._set_valid_to(state.current, valid_to, provenance["seq"], invalidated=True, reason=reason)
        state.closed = True
        self._update_key(key, state.current, closed=True)

    def _set_valid_to(self, version_id: str, valid_to: str, closed_by: int, *, invalidated: bool, reason: str) -> None:
        pending = self._pending_entities.get(version_id)
        if pending is not None:  # created in this batch: close it in place, with the same audit fields
            pending["valid_to"], pending["invalidated"] = valid_to, invalidated
            pending["closed_by_seq"], pending["invalidation_reason"] = closed_by, reason
            return
        self._batch.closures.append(
            {
                "id": version_id,
                "valid_to": valid_to,
                "invalidated": invalidated,
                "closed_by_seq": closed_by,
                "reason": reason,
            }
        )

    def _update_key(self, key: str, version_id: str, *, closed: bool) -> None:
        pending = self._pending_keys.get(key)
        if pending is not None:
            pending["current_version"], pending["closed"] = version_id, closed
            return
        self._batch.key_updates.append({"id": key, "current_version": version_id, "closed": closed})

    def _plan_relation(self, relation: Any, index: int, provenance: dict[str, Any], timestamp: str) -> None:
        session = provenance["session"]
        label = typed_label(relation.relation_type)
        endpoints = []
        for ref in (relation.source, relation.target):
            key = entity_key(session, ref.entity_type, ref.name)
            self._refs.add(key)
            if key not in self.keys:  # an edge to something never seen: create it as a reference
                self._plan_entity(
                    EntityDraft(ref.name, ref.entity_type, mode="reference"),
                    provenance,
                    event_node_id(session, provenance["seq"]),
                    timestamp,
                )
            endpoints.append(self.keys[key].current)
        if label not in self.labels:
            self.labels.add(label)
            self._batch.new_labels.append(label)
        row = {
            "id": stable_id(session, provenance["seq"], index, relation.relation_type),
            "from": endpoints[0],
            "to": endpoints[1],
            "label": label,
            "relation_type": relation.relation_type,
            "session_id": session,
            "inferred": relation.inferred,
            "confidence": float(relation.confidence),
            "inference_method": relation.inference_method,
            "evidence_session": relation.evidence_session or session,
            "evidence_seq": relation.evidence_seq if relation.evidence_seq is not None else provenance["seq"],
            "evidence_hash": relation.evidence_hash if relation.evidence_hash is not None else provenance["hash"],
            "valid_from": timestamp,
            "valid_to": None,
            "source_event_seq": provenance["seq"],
            "source_event_hash": provenance["hash"],
        }
        self._batch.relations.append(row)
        projected = row.copy()  # the row without "from" and "label", then these three (the same key order)
        del projected["from"], projected["label"]
        projected["from"] = event_node_id(session, provenance["seq"])
        projected["source"] = relation.source.name
        projected["target"] = relation.target.name
        self._batch.projected_relations.append(projected)
