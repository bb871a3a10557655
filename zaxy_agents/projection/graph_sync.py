"""The graph of record (embedded Kuzu file, or the shared PostgreSQL graph), kept in step off the read path.

Reads (checkout, retrieval, causal...) never touch the graph: they are served from ``derived.sqlite``. The graph
is opened when something needs it — a traversal, a graph keyword search, the rebuild digest, a server that keeps
it current — and then brought up to the catalog's cursors: from batches this process just committed (fast path)
or by re-planning the log from the graph's own cursors (the planner is deterministic, and its state — the
current version of each identity — is read from the graph itself), in large coalesced transactions.

An embedded graph is opened only when ``derived.sqlite`` recorded it clean (the trust protocol and the owner's
file lock: :mod:`.graph_trust`); the catch-up from the log is :mod:`.graph_replay`. This module keeps the graph in
step: opening, the write of each batch (marked dirty around it), syncs, the background writer, reset and close.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zaxy_agents.errors import LockedError
from zaxy_agents.eventloom.protocol import EventLog

from .collector import collector_paused
from .graph_replay import GraphMismatch, batch_starts, merge_batches, replay_into_graph
from .graph_trust import GRAPH_FILE, GraphFileTrust
from .graph_writer import GraphWriter
from .planner import ProjectionBatch
from .protocol import ProjectionStore
from .registry import ExtractorTable
from .store_catchup import catch_up_session

__all__ = ["GRAPH_FILE", "GraphSync", "batch_starts"]  # what the projector imports from here

SYNC_EVENTS = 20_000  # events per graph transaction when catching up from the log (COPY commits are costly)
# Events per store transaction when catching up from the log: the batches of ``batch_events`` it plans are applied
# inside one ``spanning_transaction`` of up to this many events. Kuzu 0.11.3 rewrites every node group a commit
# touches in new pages and cannot reuse the old ones for the larger rewrite of the next commit: a 100k-event graph
# caught up in five transactions was 2.2x its file in one (docs/benchmarks.md, "Graph size"). Planner memory stays
# bounded by ``batch_events`` (the rows are in the store's transaction once applied).
SPAN_EVENTS = 100_000
# A catch-up of fewer events commits batch by batch, as before: small catch-ups leave little free space, and a
# failed write (a full disk) then loses one batch. Kuzu 0.11.3 closing a database after a write failed on a full
# disk was seen spinning forever in ``~Database`` (``NodeTable::rollbackCheckpoint``) after a failed span of a
# 1,600-event catch-up (tests/projection/test_crash_consistency.py, 1 run in 3). A 20,000-event span that ran out of
# space on a real full disk (tmpfs) rolled back and closed at once in 3 runs of 3 (docs/benchmarks.md, "Graph size").
SPAN_MIN_EVENTS = 20_000


class GraphSync:
    """Owns the graph store of one memory: trust, lock, lazy open, background writer, catch-up from the log."""

    def __init__(
        self,
        log: EventLog,
        derived: Any,
        catalog: Any,
        folder: Path,
        store_factory: Callable[[Path], ProjectionStore],
        extractors: ExtractorTable,
        *,
        shared: bool = False,
        name: str = "kuzu",
        batch_events: int = SYNC_EVENTS,
    ) -> None:
        self.log = log
        self.derived = derived
        self.catalog = catalog
        self.folder = Path(folder)
        self.path = self.folder / GRAPH_FILE
        self.trust = GraphFileTrust(self.folder, derived)  # used for a private graph only
        self._factory = store_factory  # from the storage backend (the fabric passes backend.open_graph)
        self.extractors = extractors
        self.name = name
        # A private graph is a local store only this process writes (embedded Kuzu): it gets the trust protocol.
        # A shared one lives on a server that other workers write too (PostgreSQL: Capability.SHARED_GRAPH).
        self.private = not shared
        self.batch_events = batch_events
        self.span_events = SPAN_EVENTS
        self.span_min_events = SPAN_MIN_EVENTS
        self._span_open = False  # inside _spanning(): batches are applied without their own commit
        self.store: Any = None
        self.error: str | None = None  # the last write failure (the graph then lags; reads are unaffected)
        self.unavailable: str | None = None  # why the graph cannot be opened here (held by another process)
        self.mismatches: dict[str, str] = {}
        self._cursors: dict[str, tuple[int, str]] = {}
        self._lock = threading.RLock()  # one writer at a time; readers wait for the sync they asked for
        self.written_events = 0  # events committed to the graph by this process (a rebuild's bar)
        self.writing: ProjectionBatch | None = None  # the batch being written now
        self.writer = GraphWriter(self)  # the background writer: queue, held batches, cancel (graph_writer.py)

    @property
    def backend(self) -> str:
        return self.name

    # ------------------------------------------------------------------ opening
    def open(self) -> Any:
        """The graph store, opened (and made trustworthy) on first use; ``None`` when another process holds it."""
        with self._lock:
            if self.store is not None:
                return self.store
            if self.private and not self.trust.claim_lock():
                self.unavailable = (
                    f"graph unavailable: {self.path} is held by another process (checkout and retrieval read the "
                    "derived state; graph queries wait for it)"
                )
                return None
            try:
                if self.private:
                    self.trust.check()
                self.store = self._open_store()
                if self.private:
                    self._record_clean()
            except LockedError as exc:
                self.trust.release_lock()
                self.unavailable = exc.message
                return None
            self.unavailable = None
            self._cursors = self.store.cursors()
            return self.store

    def _open_store(self) -> ProjectionStore:
        """A store from the backend, reading its entity versions' text from the catalog if it keeps none."""
        store = self._factory(self.path)
        store.attach_texts(self.catalog.texts)
        return store

    def _record_clean(self) -> None:
        if self.private:
            self.trust.mark(True)

    # ------------------------------------------------------------------ writing
    def write(self, batch: ProjectionBatch) -> None:
        """One transaction (rows + cursors); a private graph is marked dirty around it."""
        assert self.store is not None
        self.writing = batch
        try:
            with collector_paused():
                self._write_batch(batch)
        finally:
            self.writing = None
        self.written_events += batch.event_count

    def _write_batch(self, batch: ProjectionBatch) -> None:
        assert self.store is not None
        if self._span_open:  # committed (or rolled back, and the store closed) when the span ends: _spanning()
            self.store.apply(batch)
            self._cursors.update(batch.cursors)
            return
        if self.private:
            self.trust.mark(False)
            try:
                self.store.apply(batch)
                self.store.checkpoint()
            except Exception:
                # The file may be damaged (Kuzu is not crash-safe around a failed bulk write): close it and leave
                # it marked dirty, so the next open deletes and rebuilds it instead of opening it. An interrupted
                # write (Ctrl-C) takes this path too: Kuzu rolls it back, but the file is not trusted on a guess.
                with contextlib.suppress(Exception):
                    self.store.close()
                self.store = None
                raise
            self.trust.mark(True)
            self._cursors.update(batch.cursors)
            return
        outcome = self.store.apply(batch) or {}
        for session, result in sorted(outcome.items()):
            if result == "behind":
                problem = catch_up_session(
                    self.store, self.log, self.extractors, session, batch.cursors[session][0], self.batch_events
                )
                if problem is not None:
                    self.mismatches[session] = problem
        self._cursors = self.store.cursors()

    def invalidate(self) -> None:
        """The graph holds rows the log no longer backs: a private graph is rebuilt on its next use; a shared
        one is reported (its other workers own it too)."""
        with self._lock:
            if not self.private:
                return
            self.writer.forget_held()
            self.trust.mark(False)
            if self.store is not None:
                with contextlib.suppress(Exception):
                    self.store.close()
                self.store = None

    def lines_up(self, batch: ProjectionBatch) -> bool:
        starts = batch_starts(batch)
        return all(self._cursors.get(s, (0, ""))[0] == first - 1 for s, first in starts.items())

    def sync(self) -> None:
        """Bring the graph up to the catalog's cursors now (from the log), in this thread."""
        with self._lock:
            if self.open() is None:
                return
            self._drain_queue()
            self.sync_from_log()

    def _drain_queue(self) -> None:
        batches = self.writer.take_waiting()
        if batches:
            merged = merge_batches(batches)
            if self.lines_up(merged):
                self.write(merged)

    def sync_from_log(self) -> None:
        target = self.catalog.cursors
        if not self.private:
            self._cursors = self.store.cursors()
            for session, (seq, _digest) in sorted(target.items()):
                if self._cursors.get(session, (0, ""))[0] < seq and session not in self.mismatches:
                    problem = catch_up_session(self.store, self.log, self.extractors, session, seq, self.batch_events)
                    if problem is not None:
                        self.mismatches[session] = problem
            self._cursors = self.store.cursors()
            return
        gaps = {
            session: (self._cursors.get(session, (0, ""))[0] + 1, seq)
            for session, (seq, _digest) in sorted(target.items())
            if self._cursors.get(session, (0, ""))[0] < seq
        }
        if not gaps:
            return
        try:
            self._plan_into_graph(gaps)
        except GraphMismatch as exc:
            self.derived.warn(f"{self.path} does not match the log ({exc}); it is rebuilt from the log")
            self._rebuild_private()

    @contextlib.contextmanager
    def spanning(self) -> Any:
        """Batches written inside are one store transaction of up to :attr:`span_events` events (the yielded
        function ends one early), committed at the end, then checkpointed and the file marked clean. If anything
        fails, the transaction rolls back and the store is closed, left marked dirty: the next open rebuilds it, as
        for any failed write."""
        store = self.store
        assert store is not None
        if self.private:
            self.trust.mark(False)
        written = [0]
        try:
            with store.spanning_transaction() as commit:
                self._span_open = True

                def commit_when_full(events: int) -> None:
                    written[0] += events
                    if written[0] >= self.span_events:
                        commit()
                        written[0] = 0

                yield commit_when_full
                self._span_open = False
        except BaseException:
            self._span_open = False
            with contextlib.suppress(Exception):
                store.close()
            self.store = None
            raise
        store.checkpoint()
        if self.private:
            self.trust.mark(True)

    def _plan_into_graph(self, gaps: dict[str, tuple[int, int]]) -> None:
        if sum(last - first + 1 for first, last in gaps.values()) < self.span_min_events:
            self._plan_batches(gaps, lambda _events: None)  # one commit per batch
            return
        with self.spanning() as written:
            self._plan_batches(gaps, written)

    def _plan_batches(self, gaps: dict[str, tuple[int, int]], written: Callable[[int], None]) -> None:
        """Replay ``gaps`` (session -> first, last seq) into the graph, ``batch_events`` at a time (each batch
        written as any other: :meth:`write`); ``written`` is told each batch's events once applied."""
        assert self.store is not None
        replay_into_graph(
            self.store, self.log, self.extractors, self._cursors, gaps, self.batch_events, self.write, written
        )

    def _rebuild_private(self) -> None:
        """Delete the graph file and replay the whole projection into a new one."""
        self.writer.forget_held()
        if self.store is not None:
            self.store.close()
            self.store = None
        self.trust.remove_files()
        self.store = self._open_store()
        self._record_clean()
        self._cursors = {}
        self.sync_from_log()

    def unwinding(self) -> bool:
        """Whether a cancelled write is still being rolled back (the graph file is marked dirty meanwhile)."""
        return self.writing is not None

    def lag_events(self) -> int | None:
        """Events the catalog holds that the graph does not (``None`` when the graph is not open here)."""
        if self.store is None:
            return None
        target = self.catalog.cursors
        return sum(max(0, seq - self._cursors.get(s, (0, ""))[0]) for s, (seq, _h) in target.items())

    @property
    def cursors(self) -> dict[str, tuple[int, str]]:
        return dict(self._cursors)

    # ------------------------------------------------------------------ rebuild and close
    def reset(self, *, new_file: bool = False) -> Any:
        """An empty graph for a rebuild; ``None`` if another process holds it.

        The tables are emptied in place, without letting go of the file (``graph.lock`` stays held too), so no
        other process can take the graph mid-rebuild. ``new_file`` (after an erasure) deletes the file instead:
        Kuzu leaves dropped rows' bytes in its pages.
        """
        self.writer.stop()  # outside the lock: the writer thread takes it to finish its transaction
        self.writer.forget_held()
        with self._lock:
            if self.open() is None:
                return None
            if self.private:
                emptied = False
                if not new_file:
                    self.trust.mark(False)
                    try:
                        self.store.reset()
                        self.store.checkpoint()
                        emptied = True
                    except Exception:  # a store that cannot be emptied in place is re-created
                        emptied = False
                if not emptied:
                    self.store.close()
                    self.store = None
                    self.trust.remove_files()
                    self.store = self._open_store()
                self._record_clean()
            else:
                self.store.reset()
            self._cursors, self.mismatches, self.error = {}, {}, None
            return self.store

    def forget(self) -> bool:
        """After an erasure: a private graph's files are deleted, not rebuilt here (Kuzu leaves deleted rows'
        bytes in its pages, so rows cannot be removed in place). The graph is rebuilt from the scrubbed log on its
        next use (a traversal, ``zaxy memory status``...), or at once in the background when this process follows
        it (servers), so the erase itself does not pay for the whole memory. False for a shared graph (the caller
        removes its rows in place)."""
        if not self.private:
            return False
        following = self.writer.following
        self.writer.stop()  # outside the lock: the writer thread takes it to finish its transaction
        self.writer.forget_held()
        with self._lock:
            if self.store is not None:
                with contextlib.suppress(Exception):
                    self.store.close()
                self.store = None
            if self.trust.files() or self.trust.state() is not None:
                self.trust.remove_files()
            self._cursors, self.mismatches, self.error = {}, {}, None
            self.trust.clean = True
        if following:
            self.writer.follow()
        return True

    def close(self) -> None:
        self.writer.stop()  # outside the lock: the writer thread takes it to finish its transaction
        self.writer.forget_held()
        with self._lock:
            if self.store is not None:
                self.store.close()
                self.store = None
                if self.private and self.trust.clean:
                    with contextlib.suppress(Exception):
                        self.trust.mark(True)  # the file changes on close (Kuzu touches it): record it again
            self.trust.release_lock()
