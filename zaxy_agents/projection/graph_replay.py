"""Catching a graph up from the log: the events it lacks replayed through a planner into batches it applies.

Why a module of its own: the planner is deterministic and its state (each identity's current version) is read from
the graph itself, so a catch-up needs nothing of :class:`~.graph_sync.GraphSync` but the store, the log, the
extractors and a way to write a batch; the batch helpers here serve the writer's coalescing too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zaxy_agents.eventloom.protocol import EventLog

from .collector import collector_paused
from .planner import ProjectionBatch, ProjectionPlanner
from .protocol import ProjectionStore
from .registry import ExtractorTable

PREFETCH_EVENTS = 1000  # events whose identities are looked up in the graph at once


class GraphMismatch(Exception):
    """The graph does not line up with the log (rebuilt for a private graph, reported for a shared one)."""


def merge_batches(batches: list[ProjectionBatch]) -> ProjectionBatch:
    merged = ProjectionBatch()
    for batch in batches:
        for name, value in vars(batch).items():
            if isinstance(value, list):
                getattr(merged, name).extend(value)
        merged.cursors.update(batch.cursors)
        merged.event_count += batch.event_count
    return merged


def batch_starts(batch: ProjectionBatch) -> dict[str, int]:
    """First seq of each session in a batch."""
    starts: dict[str, int] = {}
    for row in batch.events:
        session, seq = row["session_id"], row["seq"]
        if seq < starts.get(session, seq + 1):
            starts[session] = seq
    return starts


def replay_into_graph(
    store: ProjectionStore,
    log: EventLog,
    extractors: ExtractorTable,
    cursors: dict[str, tuple[int, str]],
    gaps: dict[str, tuple[int, int]],
    batch_events: int,
    write: Callable[[ProjectionBatch], None],
    written: Callable[[int], None],
) -> None:
    """Replay ``gaps`` (session -> first, last seq) through a planner into the graph, ``batch_events`` at a
    time: ``write`` applies each batch, ``written`` is told its events once applied. ``cursors`` (the graph's,
    session -> seq, hash) must chain to each gap's first event, or :class:`GraphMismatch` is raised."""
    planner = ProjectionPlanner()
    planner.restore({}, set(store.typed_labels()), set(cursors), set())
    chunk: list[tuple[dict[str, Any], Any]] = []

    def apply(batch: ProjectionBatch) -> None:
        write(batch)
        planner.forget()
        written(batch.event_count)

    def plan_chunk() -> None:
        with collector_paused():  # see collector.py
            planner.prefetch(chunk, store)
            for envelope, extraction in chunk:
                planner.add(envelope, extraction)
        chunk.clear()
        if planner.pending_events() >= batch_events:
            apply(planner.take_batch())

    for session, (first, last) in gaps.items():
        expected = cursors.get(session, (0, None))[1]
        planner.mark_present(session, first - 1)
        for envelope in log.replay_envelopes(session, first, last):
            if expected is not None and envelope["seq"] == first and envelope["prev_hash"] != expected:
                raise GraphMismatch(f"session {session!r} changed after seq {first - 1}")
            chunk.append((envelope, extractors.extract(envelope)))
            if len(chunk) >= PREFETCH_EVENTS:
                plan_chunk()
        if chunk:
            plan_chunk()
    if planner.pending_events():
        apply(planner.take_batch())
