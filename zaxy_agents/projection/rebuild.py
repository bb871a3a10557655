"""Rebuilding derived state and the graph from the log (`zaxy reproject`), moved out of :mod:`.projector`.

Flow: drop every derived table (catalog, indexes, cursors) and reset the graph; read the log session by session
in chunks of ``batch_events`` and commit them through the projector's per-event path (``Projector._commit``),
several chunks per SQLite transaction (:func:`_rebuild_group`), while a graph writer thread writes the committed
batches in large transactions; then (on request) the digest of the graph. Progress is published in a
:class:`~.rebuild_status.RebuildStatus`; a cancel from another thread stops it at the last committed group.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from zaxy_agents.errors import IntegrityError, LockedError
from zaxy_agents.storage.derived.store import CACHE_KIB

from .rebuild_status import RebuildCancelled, RebuildStatus
from .sqlite_catalog import create_tables, drop_tables

if TYPE_CHECKING:
    from .projector import Projector

REBUILD_BATCH_EVENTS = 20_000  # bounded planner memory during a rebuild (rows of this many events at once)
REBUILD_GROUP_EVENTS = 10_000  # rebuild chunks committed together (see _rebuild_group)
# ... and at least this many groups: the graph writer waits for each group's COMMIT (it marks the graph dirty in
# derived.sqlite before writing), so the last group's graph rows are written after the indexing, not beside it
REBUILD_GROUPS_AT_LEAST = 8
REBUILD_CACHE_KIB = 131_072  # the writer's page cache while rebuilding (the store's default is CACHE_KIB)
REBUILD_KEY = "rebuilding"


def rebuild(
    projector: Projector, progress: Callable[[int, int], None] | None = None, *, digest: bool = True
) -> str | None:
    """The body of :meth:`.Projector.rebuild` (its lock held for the whole rebuild)."""
    with projector._lock:
        projector._cancel.clear()
        projector.graph.resume()
        status = projector.rebuild_status = RebuildStatus(uses_graph=projector.use_graph)
        projector._rebuilding = True
        try:
            return _rebuild(projector, status, progress, digest)
        except BaseException as exc:
            if not projector._cancel.is_set():
                raise
            # Its message names the stage it stopped in; an interrupted graph statement is a cancel too.
            cancelled = exc if isinstance(exc, RebuildCancelled) else RebuildCancelled(status)
            status.stage = "cancelled"
            with contextlib.suppress(Exception), projector.derived.write() as db:
                projector.derived.set_meta(db, REBUILD_KEY, None)  # not rebuilding any more: others go on
            if cancelled is exc:
                raise
            raise cancelled from exc
        finally:
            projector._rebuilding = False
            projector._cancel.clear()
            projector.graph.resume()


def cancel_rebuild(projector: Projector) -> None:
    """The body of :meth:`.Projector.cancel_rebuild`."""
    if not projector._rebuilding:
        return
    projector._cancel.set()
    if projector.use_graph:
        projector.graph.cancel()


def _rebuild(
    projector: Projector, status: RebuildStatus, progress: Callable[[int, int], None] | None, digest: bool
) -> str | None:
    summaries = projector.log.sessions()
    total = status.total_events = sum(summary.event_count for summary in summaries)
    store = projector.graph.reset() if projector.use_graph else None
    if projector.use_graph and store is None:
        raise LockedError(
            projector.graph.unavailable or "no graph store is open",
            field="projection",
            remediation="Stop the process that owns the graph database, then run `zaxy reproject` again.",
        )
    projector._check_cancel()
    with projector.derived.write() as db:
        projector.derived.set_meta(db, REBUILD_KEY, str(os.getpid()))  # other processes wait, not interleave
        drop_tables(db)
        create_tables(db)
        db.execute("DELETE FROM lst_cursors")
        for listener in projector._durable:
            listener.drop_schema(db)
            listener.create_schema(db)
        db.execute(f"PRAGMA cache_size=-{REBUILD_CACHE_KIB}")  # a group's dirty pages stay in memory
    for listener in projector._durable:
        listener.committed()
    for listener in projector._memory:
        listener.reset()
    projector._memory_cursors, projector._memory_dirty = {}, True
    projector.catalog.refresh()
    projector._new_planner()
    done = 0
    written_before = projector.graph.written_events
    if projector.use_graph:  # a thread writes the graph in large transactions while the next chunks are planned
        projector.graph.coalesce_events = REBUILD_BATCH_EVENTS
        projector.graph.start_writer()
    try:
        projector.damaged = {}
        with contextlib.ExitStack() as stack:
            groups = _Groups(projector, stack, min(REBUILD_GROUP_EVENTS, total // REBUILD_GROUPS_AT_LEAST))
            for summary in summaries:
                expected: tuple[int, str] | None = None
                chunk: list[tuple[dict[str, Any], Any]] = []
                damage_box: list[IntegrityError] = []
                for envelope in until_damage(projector.log.replay_envelopes(summary.session), damage_box):
                    if projector._cancel.is_set():
                        raise RebuildCancelled(status)
                    chunk.append((envelope, projector.extractors.extract(envelope)))
                    if len(chunk) >= projector.batch_events:
                        expected = groups.project(summary.session, expected, chunk)
                        done += len(chunk)
                        chunk = []
                        status.indexed_events = done
                        status.graph_events = _graph_progress(projector, written_before)
                        if progress:
                            progress(done, total)
                if chunk:  # what was read before any damage is projected
                    groups.project(summary.session, expected, chunk)
                    done += len(chunk)
                    status.indexed_events = done
                if damage_box:
                    projector.damaged[summary.session] = damage_box[0].message
        status.stage = "graph" if projector.use_graph else "digest"
        projector.graph.flush(0)  # ends the writer's coalescing wait: what is queued is the last transaction
        while not projector.graph.wait_idle(0.1):  # the bar follows the rows of the graph's last transactions
            status.graph_events = _graph_progress(projector, written_before)
            projector._check_cancel()
        projector._check_cancel()
        status.graph_events = _graph_progress(projector, written_before)
    finally:
        projector.graph.coalesce_events = 0
        projector.graph.stop_writer()
        with contextlib.suppress(Exception), projector.derived.write() as db:
            db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    if projector.graph.error:
        projector._check_cancel()
        raise RuntimeError(f"the graph could not be rebuilt: {projector.graph.error}")
    with projector.derived.write() as db:
        projector.derived.set_meta(db, REBUILD_KEY, None)
    if progress:
        progress(done, total)
    projector.save_snapshot()
    if not digest:
        status.stage = "done"
        return None
    status.stage = "digest"
    value = graph_digest(projector, status)
    status.stage = "done"
    return value


def _graph_progress(projector: Projector, written_before: int) -> float:
    """Events the graph holds from this rebuild: committed transactions plus the written share of the one in
    progress (rows applied so far / its rows)."""
    events = float(projector.graph.written_events - written_before)
    writing, store = projector.graph.writing, projector.graph.store
    if writing is not None and store is not None and writing.row_count():
        events += writing.event_count * min(1.0, store.rows_applied / writing.row_count())
    return events


def _rebuild_chunk(
    projector: Projector, session: str, expected: tuple[int, str] | None, chunk: list[tuple[dict[str, Any], Any]]
) -> tuple[int, str]:
    batch = projector._commit(session, expected, chunk)
    if batch is None:
        raise LockedError(
            "another process projected this memory during the rebuild",
            field="projection",
            remediation="Stop other `zaxy` processes using this memory, then run `zaxy reproject` again.",
        )
    if projector.use_graph and projector._held is None:  # bounded memory (inside a group: when it commits)
        projector.graph.wait_below(2 * max(1, REBUILD_BATCH_EVENTS // projector.batch_events))
    return batch.cursors[session]


def graph_digest(projector: Projector, status: RebuildStatus | None = None) -> str:
    """The body of :meth:`.Projector.digest`."""
    store = projector.store
    if store is None:
        raise LockedError(
            projector.graph.unavailable or "no graph store", field="projection", remediation="See status."
        )
    digest = hashlib.sha256()
    for count, line in enumerate(store.dump_lines(), 1):
        digest.update(line.encode())
        digest.update(b"\n")
        if status is not None and count % 1000 == 0:
            status.digest_lines = count
            projector._check_cancel()
    return digest.hexdigest()


@contextlib.contextmanager
def _rebuild_group(projector: Projector) -> Iterator[None]:
    """One write transaction around several rebuild chunks (``REBUILD_GROUP_EVENTS``): each COMMIT writes every
    page the chunk dirtied into the WAL (and the checkpointer copies it back), and the chunks of a rebuild
    scatter rows over the same large B-trees (postings, catalog), so a commit per 1,000-event chunk rewrote
    much of the file again and again. The chunks' batches go to the graph and the in-memory listeners only
    once the group is committed; a failure or a cancel rolls the whole group back and forgets what the
    listeners and the planner prepared in it (the rebuild stops at the last committed group)."""
    projector._held = []
    try:
        with projector.derived.write():
            yield
    except BaseException:
        projector._held = None
        projector._new_planner()
        for listener in projector._durable:
            listener.rolled_back()
        for listener in projector._memory:
            listener.reset()
        projector._memory_cursors, projector._memory_dirty = {}, True
        projector.catalog.refresh()
        raise
    held, projector._held = projector._held, None
    for batch in held:
        projector._feed_memory_listeners(batch)
        if projector.use_graph:
            projector.graph.submit(batch)
    if projector.use_graph:  # bounded memory: at most ~2 x REBUILD_BATCH_EVENTS events' rows wait for the graph
        projector.graph.wait_below(max(len(held), 2 * max(1, REBUILD_BATCH_EVENTS // projector.batch_events)))


class _Groups:
    """A rebuild's chunks, committed ``size`` events at a time (:meth:`Projector._rebuild_group` on ``stack``; the
    group still open when the stack closes normally is committed then)."""

    def __init__(self, projector: Projector, stack: contextlib.ExitStack, size: int) -> None:
        self.projector, self.stack, self.size, self.events = projector, stack, size, 0

    def project(
        self, session: str, expected: tuple[int, str] | None, chunk: list[tuple[dict[str, Any], Any]]
    ) -> tuple[int, str]:
        if not self.events:
            self.stack.enter_context(_rebuild_group(self.projector))
        cursor = _rebuild_chunk(self.projector, session, expected, chunk)
        self.events += len(chunk)
        if self.events >= self.size:
            self.stack.close()  # COMMIT
            self.events = 0
        return cursor


def until_damage(envelopes: Iterator[dict[str, Any]], box: list[IntegrityError]) -> Iterator[dict[str, Any]]:
    """``envelopes`` until a line that cannot be read: the error is put in ``box`` instead of escaping, so the
    caller can still commit what came before it."""
    try:
        yield from envelopes
    except IntegrityError as exc:
        box.append(exc)
