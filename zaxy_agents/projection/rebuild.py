"""Rebuilding derived state and the graph from the log (`zaxy reproject`).

Flow: drop every derived table (catalog, indexes, cursors) and reset the graph; read the log session by session in
chunks of ``batch_events`` and commit them through the projector's per-event path, several chunks per SQLite
transaction (:meth:`Rebuild._group`), while a graph writer thread writes the committed batches in large
transactions; then (on request) the digest of the graph. Progress is published in a
:class:`~.rebuild_status.RebuildStatus`; a stop asked from another thread (:class:`RebuildControl`) ends it at the
last committed group with :class:`~.rebuild_status.RebuildCancelled`.

:class:`Rebuild` is given the projector's collaborators, never the projector: its log, derived store, catalog,
graph sync, extractors and durable indexes, and the parts of the per-event path it drives as functions.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from zaxy_agents.errors import IntegrityError, LockedError
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.storage.derived.store import CACHE_KIB, DerivedStore

from .graph_sync import GraphSync
from .planner import ProjectionBatch
from .rebuild_status import RebuildCancelled, RebuildStatus
from .rebuild_worker import WorkerClient, merge_tables
from .registry import ExtractorTable
from .sqlite_catalog import SqliteCatalog, create_tables, drop_tables

REBUILD_BATCH_EVENTS = 20_000  # bounded planner memory during a rebuild (rows of this many events at once)
REBUILD_GROUP_EVENTS = 10_000  # rebuild chunks committed together (see Rebuild._group)
# ... and at least this many groups: the graph writer waits for each group's COMMIT (it marks the graph dirty in
# derived.sqlite before writing), so the last group's graph rows are written after the indexing, not beside it
REBUILD_GROUPS_AT_LEAST = 8
REBUILD_CACHE_KIB = 131_072  # the writer's page cache while rebuilding (the store's default is CACHE_KIB)
REBUILD_KEY = "rebuilding"
# From this many events a durable index that names a worker module is rebuilt in a second process
# (rebuild_worker.py; starting it costs ~0.5 s of imports, the copy of its tables ~2 % of what it saves).
PARALLEL_MIN_EVENTS = 20_000

Chunk = list[tuple[dict[str, Any], Any]]  # (envelope, extraction) pairs planned and committed together


class RebuildControl:
    """What a rebuild shares beyond its own loop: its counters (read by a bar in another thread), whether one is
    running, and the request to stop it (set from any thread; the per-event commit path checks it between events,
    so a stop rolls back the transaction in progress)."""

    def __init__(self) -> None:
        self.status = RebuildStatus()  # the last (or running) rebuild's counters
        self.running = False
        self.stop = threading.Event()

    def check(self) -> None:
        """Raise :class:`RebuildCancelled` when the running rebuild was asked to stop (never outside a rebuild)."""
        if self.stop.is_set():
            raise RebuildCancelled(self.status)


class Rebuild:
    """One rebuild. The projector's per-event path comes in as functions: ``commit`` plans and writes one chunk
    (``None`` when another process projected the session meanwhile) without handing the batch on; ``hand_on``
    gives a committed batch to the in-memory listeners and the graph; ``start_over`` makes the planner, the
    in-memory listeners and the catalog's cache forget what they hold; ``save_snapshot`` persists the in-memory
    listeners. ``damaged`` is the projector's record of sessions that cannot be read past some event."""

    def __init__(
        self,
        *,
        log: EventLog,
        derived: DerivedStore,
        catalog: SqliteCatalog,
        graph: GraphSync,
        use_graph: bool,
        extractors: ExtractorTable,
        durable: list[Any],
        batch_events: int,
        control: RebuildControl,
        damaged: dict[str, str],
        commit: Callable[[str, tuple[int, str] | None, Chunk], ProjectionBatch | None],
        hand_on: Callable[[ProjectionBatch], None],
        start_over: Callable[[], None],
        save_snapshot: Callable[[], object],
        offloaded: set[str] | None = None,
    ) -> None:
        self.log, self.derived, self.catalog, self.graph, self.use_graph = log, derived, catalog, graph, use_graph
        self.extractors, self.durable, self.batch_events = extractors, durable, batch_events
        self.control, self.damaged = control, damaged
        self.commit, self.hand_on, self.start_over, self.save_snapshot = commit, hand_on, start_over, save_snapshot
        # names of the durable indexes a worker process builds (the per-chunk commit leaves them out while set)
        self.offloaded = offloaded if offloaded is not None else set()
        self.worker: WorkerClient | None = None

    def run(
        self, progress: Callable[[int, int], None] | None, digest: Callable[[RebuildStatus], str] | None
    ) -> str | None:
        """See :meth:`.Projector.rebuild` (which holds its lock around this); ``digest=None``: no digest."""
        control = self.control
        control.stop.clear()
        self.graph.writer.resume()
        status = control.status = RebuildStatus(uses_graph=self.use_graph)
        control.running = True
        try:
            return self._rebuild(status, progress, digest)
        except BaseException as exc:
            if not control.stop.is_set():
                raise
            # Its message names the stage it stopped in; an interrupted graph statement is a cancel too.
            cancelled = exc if isinstance(exc, RebuildCancelled) else RebuildCancelled(status)
            status.stage = "cancelled"
            with contextlib.suppress(Exception), self.derived.write() as db:
                self.derived.set_meta(db, REBUILD_KEY, None)  # not rebuilding any more: others go on
            if cancelled is exc:
                raise
            raise cancelled from exc
        finally:
            control.running = False
            control.stop.clear()
            self.graph.writer.resume()

    def _rebuild(
        self,
        status: RebuildStatus,
        progress: Callable[[int, int], None] | None,
        digest: Callable[[RebuildStatus], str] | None,
    ) -> str | None:
        summaries = self.log.sessions()
        total = status.total_events = sum(summary.event_count for summary in summaries)
        store = self.graph.reset() if self.use_graph else None
        if self.use_graph and store is None:
            raise LockedError(
                self.graph.unavailable or "no graph store is open",
                field="projection",
                remediation="Stop the process that owns the graph database, then run `zaxy reproject` again.",
            )
        self.control.check()
        self._reset_tables()
        offload = next((i for i in self.durable if getattr(i, "rebuild_worker", None)), None)
        if offload is not None and total >= PARALLEL_MIN_EVENTS:
            try:
                self.worker = WorkerClient(offload.rebuild_worker, self.derived.folder)
                self.offloaded.add(offload.name)
            except OSError:  # no interpreter to start (an embedded Python): the serial rebuild indexes it
                self.worker = None
        done = 0
        written_before = self.graph.written_events
        if self.use_graph:  # a thread writes the graph in large transactions while the next chunks are planned
            self.graph.writer.coalesce_events = REBUILD_BATCH_EVENTS
            # one graph transaction per GraphSync.span_events, as a catch-up from the log of that size writes it
            # (its batches gathered REBUILD_BATCH_EVENTS at a time all the same: more, smaller COPYs into one
            # transaction made a larger file, 1.83x the log against 1.64x at 20k events, measured)
            self.graph.writer.span_writes = total >= self.graph.span_min_events
            self.graph.writer.start()
        try:
            self.damaged.clear()
            with contextlib.ExitStack() as stack:
                groups = _Groups(self, stack, min(REBUILD_GROUP_EVENTS, total // REBUILD_GROUPS_AT_LEAST))
                for summary in summaries:
                    expected: tuple[int, str] | None = None
                    chunk: Chunk = []
                    damage_box: list[IntegrityError] = []
                    for envelope in until_damage(self.log.replay_envelopes(summary.session), damage_box):
                        self.control.check()
                        chunk.append((envelope, self.extractors.extract(envelope)))
                        if len(chunk) >= self.batch_events:
                            expected = groups.project(summary.session, expected, chunk)
                            done += len(chunk)
                            chunk = []
                            status.indexed_events = done
                            status.graph_events = self._graph_progress(written_before)
                            if progress:
                                progress(done, total)
                    if chunk:  # what was read before any damage is projected
                        groups.project(summary.session, expected, chunk)
                        done += len(chunk)
                        status.indexed_events = done
                    if damage_box:
                        self.damaged[summary.session] = damage_box[0].message
            status.stage = "graph" if self.use_graph else "digest"
            self.graph.writer.flush(0)  # ends the writer's coalescing wait: what is queued is the last transaction
            if self.worker is not None and offload is not None:  # while the graph writer writes its last rows
                merge_tables(self.derived, self.worker.finish(self.control.check), offload.name)
                offload.tables_replaced()
                self.offloaded.discard(offload.name)
            while not self.graph.writer.wait_idle(0.1):  # the bar follows the rows of the graph's last transactions
                status.graph_events = self._graph_progress(written_before)
                self.control.check()
            self.control.check()
            status.graph_events = self._graph_progress(written_before)
        finally:
            if self.worker is not None:
                self.worker.close()
                self.worker = None
            self.graph.writer.coalesce_events = 0
            self.graph.writer.stop_after_rebuild()
            self.graph.writer.span_writes = False
            with contextlib.suppress(Exception), self.derived.write() as db:
                db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        if self.graph.error:
            self.control.check()
            raise RuntimeError(f"the graph could not be rebuilt: {self.graph.error}")
        with self.derived.write() as db:
            self.derived.set_meta(db, REBUILD_KEY, None)
        if progress:
            progress(done, total)
        self.save_snapshot()
        value = None
        if digest is not None:
            status.stage = "digest"
            value = digest(status)
        status.stage = "done"
        return value

    def _reset_tables(self) -> None:
        """Every derived table empty, the rebuild marked in ``meta`` (other processes wait, not interleave)."""
        with self.derived.write() as db:
            self.derived.set_meta(db, REBUILD_KEY, str(os.getpid()))
            drop_tables(db)
            create_tables(db)
            db.execute("DELETE FROM lst_cursors")
            for listener in self.durable:
                listener.drop_schema(db)
                listener.create_schema(db)
            db.execute(f"PRAGMA cache_size=-{REBUILD_CACHE_KIB}")  # a group's dirty pages stay in memory
        for listener in self.durable:
            listener.committed()
        self.start_over()

    def _graph_progress(self, written_before: int) -> float:
        """Events the graph holds from this rebuild: committed transactions plus the written share of the one in
        progress (rows applied so far / its rows)."""
        events = float(self.graph.written_events - written_before)
        writing, store = self.graph.writing, self.graph.store
        if writing is not None and store is not None and writing.row_count():
            events += writing.event_count * min(1.0, store.rows_applied / writing.row_count())
        return events

    def _chunk(self, session: str, expected: tuple[int, str] | None, chunk: Chunk) -> ProjectionBatch:
        batch = self.commit(session, expected, chunk)
        if batch is None:
            raise LockedError(
                "another process projected this memory during the rebuild",
                field="projection",
                remediation="Stop other `zaxy` processes using this memory, then run `zaxy reproject` again.",
            )
        return batch

    @contextlib.contextmanager
    def _group(self, held: list[ProjectionBatch]) -> Iterator[None]:
        """One write transaction around several rebuild chunks (``REBUILD_GROUP_EVENTS``): each COMMIT writes every
        page the chunk dirtied into the WAL (and the checkpointer copies it back), and the chunks of a rebuild
        scatter rows over the same large B-trees (postings, catalog), so a commit per 1,000-event chunk rewrote
        much of the file again and again. The chunks' batches (``held``) go to the graph and the in-memory
        listeners only once the group is committed; a failure or a cancel rolls the whole group back and forgets
        what the listeners and the planner prepared in it (the rebuild stops at the last committed group)."""
        try:
            with self.derived.write():
                yield
        except BaseException:
            for listener in self.durable:
                listener.rolled_back()
            self.start_over()
            raise
        for batch in held:
            self.hand_on(batch)
        count = len(held)
        held.clear()  # the graph's queue holds them now
        if self.use_graph:  # bounded memory: at most ~2 x REBUILD_BATCH_EVENTS events' rows wait for the graph
            self.graph.writer.wait_below(max(count, 2 * max(1, REBUILD_BATCH_EVENTS // self.batch_events)))


class _Groups:
    """A rebuild's chunks, committed ``size`` events at a time (:meth:`Rebuild._group` on ``stack``; the group still
    open when the stack closes normally is committed then)."""

    def __init__(self, rebuild: Rebuild, stack: contextlib.ExitStack, size: int) -> None:
        self.rebuild, self.stack, self.size, self.events = rebuild, stack, size, 0
        self.held: list[ProjectionBatch] = []

    def project(self, session: str, expected: tuple[int, str] | None, chunk: Chunk) -> tuple[int, str]:
        if not self.events:
            self.held = []
            self.stack.enter_context(self.rebuild._group(self.held))
        batch = self.rebuild._chunk(session, expected, chunk)
        if self.rebuild.worker is not None:
            self.rebuild.worker.send(batch.searchable, batch.cursors)
        self.held.append(batch)
        self.events += len(chunk)
        if self.events >= self.size:
            self.stack.close()  # COMMIT
            self.events = 0
        return batch.cursors[session]


def graph_digest(dump_lines: Iterable[str], status: RebuildStatus | None, check: Callable[[], None]) -> str:
    """SHA-256 over the canonical dump of the graph (same log -> same digest); ``status`` counts the lines and
    ``check`` stops it when a rebuild is cancelled."""
    digest = hashlib.sha256()
    for count, line in enumerate(dump_lines, 1):
        digest.update(line.encode())
        digest.update(b"\n")
        if status is not None and count % 1000 == 0:
            status.digest_lines = count
            check()
    return digest.hexdigest()


def until_damage(envelopes: Iterator[dict[str, Any]], box: list[IntegrityError]) -> Iterator[dict[str, Any]]:
    """``envelopes`` until a line that cannot be read: the error is put in ``box`` instead of escaping, so the
    caller can still commit what came before it."""
    try:
        yield from envelopes
    except IntegrityError as exc:
        box.append(exc)
