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
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zaxy_agents.errors import LockedError
from zaxy_agents.eventloom.protocol import EventLog

from .collector import collector_paused
from .graph_replay import GraphMismatch, batch_starts, merge_batches, replay_into_graph
from .graph_trust import GRAPH_FILE, GraphFileTrust
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
# Events of committed batches an open graph keeps for its next sync when nothing follows it: that sync writes them
# as they are instead of replaying and re-planning the same events from the log (past this, it replays).
HOLD_EVENTS = SYNC_EVENTS
# How long a following writer (a server keeping the graph current) gathers batches before a transaction. Each graph
# write costs Kuzu ~0.2 s of CPU whatever its size (its COMMIT rewrites every relationship table's touched node
# group), so writing every batch at once cost a server ~2 ms of CPU per event appended one at a time. A reader that
# needs the graph does not wait for the window: the gathered batches wait with the held ones, and
# :meth:`GraphSync.sync` writes them itself.
FOLLOW_WINDOW_SECONDS = 1.0


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
        self._queue: queue.Queue[ProjectionBatch | str | None] = queue.Queue()
        self._idle = threading.Event()
        self._idle.set()
        self._thread: threading.Thread | None = None
        self.coalesce_events = 0  # > 0: the writer waits for this many events before a transaction (rebuilds)
        self.written_events = 0  # events committed to the graph by this process (a rebuild's bar)
        self.writing: ProjectionBatch | None = None  # the batch being written now
        self._cancelled = threading.Event()  # a rebuild was stopped: queued batches are dropped, not written
        self._cancel_lock = threading.Lock()
        self.following = False
        self.hold_events = HOLD_EVENTS
        self.follow_window = FOLLOW_WINDOW_SECONDS
        self._held: list[ProjectionBatch] = []  # committed batches for the next sync (open graph, no writer thread)
        self._held_events = 0
        self._held_lock = threading.Lock()
        # A rebuild's writer applies its batches inside one spanning transaction per ``span_events`` (set by the
        # rebuild for ``span_min_events`` or more events): see :meth:`_span_write`.
        self.span_writes = False
        self._writer_span: contextlib.ExitStack | None = None  # the writer thread's open span (and self._lock)
        self._writer_written: Callable[[int], None] | None = None

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
    def _write(self, batch: ProjectionBatch) -> None:
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
            self._forget_held()
            self.trust.mark(False)
            if self.store is not None:
                with contextlib.suppress(Exception):
                    self.store.close()
                self.store = None

    def _lines_up(self, batch: ProjectionBatch) -> bool:
        starts = batch_starts(batch)
        return all(self._cursors.get(s, (0, ""))[0] == first - 1 for s, first in starts.items())

    def sync(self) -> None:
        """Bring the graph up to the catalog's cursors now (from the log), in this thread."""
        with self._lock:
            if self.open() is None:
                return
            self._drain_queue()
            self._sync_from_log()

    def _take_held(self) -> list[ProjectionBatch]:
        with self._held_lock:
            held, self._held, self._held_events = self._held, [], 0
        return held

    def _drain_queue(self) -> None:
        batches = self._take_held()
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, ProjectionBatch):
                batches.append(item)
        if batches:
            merged = merge_batches(batches)
            if self._lines_up(merged):
                self._write(merged)

    def _sync_from_log(self) -> None:
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
    def _spanning(self) -> Any:
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
        with self._spanning() as written:
            self._plan_batches(gaps, written)

    def _plan_batches(self, gaps: dict[str, tuple[int, int]], written: Callable[[int], None]) -> None:
        """Replay ``gaps`` (session -> first, last seq) into the graph, ``batch_events`` at a time (each batch
        written as any other: :meth:`_write`); ``written`` is told each batch's events once applied."""
        assert self.store is not None
        replay_into_graph(
            self.store, self.log, self.extractors, self._cursors, gaps, self.batch_events, self._write, written
        )

    def _rebuild_private(self) -> None:
        """Delete the graph file and replay the whole projection into a new one."""
        self._forget_held()
        if self.store is not None:
            self.store.close()
            self.store = None
        self.trust.remove_files()
        self.store = self._open_store()
        self._record_clean()
        self._cursors = {}
        self._sync_from_log()

    # ------------------------------------------------------------------ background writer (owners)
    def follow(self) -> None:
        """Keep the graph current in a background thread (servers): opened now, synced, then fed each batch."""
        with self._lock:
            self.following = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="zaxy-graph-writer", daemon=True)
                self._thread.start()
            self._idle.clear()
            self._queue.put("sync")

    def start_writer(self) -> None:
        """Start the background writer without a catch-up (a rebuild feeds it every batch itself)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="zaxy-graph-writer", daemon=True)
                self._thread.start()

    def stop_writer(self) -> None:
        """Stop the writer a rebuild started; after :meth:`cancel` without waiting for it: the write it is rolling
        back holds the graph lock, and whoever uses the graph next waits for that lock."""
        if not self.following:
            self._stop_thread(wait=not self._cancelled.is_set())

    def unwinding(self) -> bool:
        """Whether a cancelled write is still being rolled back (the graph file is marked dirty meanwhile)."""
        return self.writing is not None

    def wait_below(self, queued: int) -> None:
        """Back-pressure: wait while ``queued`` or more batches wait for the writer (bounded memory)."""
        while (
            self._thread is not None
            and self._queue.qsize() >= queued
            and self.error is None
            and not self._cancelled.is_set()
        ):
            time.sleep(0.005)

    def cancel(self) -> None:
        """From any thread: stop writing now (a rebuild was interrupted). Queued batches are dropped, the write
        in progress is interrupted (rolled back; a private graph is then rebuilt from the log on its next use),
        and nothing is written until :meth:`resume`. The catalog's cursors are untouched: the graph catches up
        from the log the next time it is synced."""
        with self._cancel_lock:
            self._cancel_now()

    def _cancel_now(self) -> None:
        self._cancelled.set()
        self._forget_held()
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                self._queue.put(None)  # a stop asked for stays asked for
                break
        self._queue.put("cancel")  # ends the writer's coalescing wait without writing what it collected
        store = self.store
        if store is not None:
            store.interrupt()

    def resume(self) -> None:
        """Write again after :meth:`cancel` (a new rebuild starts)."""
        with self._cancel_lock:
            self._cancelled.clear()
            store = self.store
            if store is not None:
                store.resume()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def submit(self, batch: ProjectionBatch) -> None:
        """A batch the catalog just committed: written by the background writer when one runs; else, if the graph
        is open here, kept (up to ``hold_events`` events) for the next :meth:`sync`, which writes it without
        replaying its events from the log. Past the bound everything kept is dropped and that sync replays."""
        if self.store is None or self._cancelled.is_set():
            return
        if self._thread is not None:
            self._idle.clear()
            self._queue.put(batch)
            return
        with self._held_lock:
            self._held.append(batch)
            self._held_events += batch.event_count
            if self._held_events > self.hold_events:
                self._held, self._held_events = [], 0

    def _forget_held(self) -> None:
        """The graph is emptied, rebuilt or dropped: batches kept for it no longer line up with anything."""
        self._take_held()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            items = [item]
            deadline = time.monotonic() + self.follow_window if self.following else None
            while True:
                try:
                    items.append(self._queue.get_nowait())
                    continue
                except queue.Empty:
                    pass
                if not self._complete(items):
                    items.append(self._queue.get())  # coalescing: wait for more before writing
                    continue
                wait = self._window_left(items, deadline)
                if wait <= 0:
                    break
                self._keep(items)  # gathered batches wait where a sync() can take them
                try:
                    items.append(self._queue.get(timeout=wait))  # following: gather for the window
                except queue.Empty:
                    break
            stop = None in items
            if self._cancelled.is_set():  # what was collected is dropped: the graph catches up from the log later
                self._end_span(RuntimeError("the graph write was cancelled"))  # rolled back, the file marked dirty
                if self._queue.empty():
                    self._idle.set()
                if stop:
                    self._idle.set()
                    return
                continue
            try:
                with self._lock:
                    if self.open() is not None:
                        batches = [*self._take_held(), *(i for i in items if isinstance(i, ProjectionBatch))]
                        merged = merge_batches(batches) if batches else None
                        if merged is not None and self._lines_up(merged):
                            if self.span_writes:
                                self._span_write(merged)
                            else:
                                self._write(merged)
                            merged = None
                        if merged is not None or "sync" in items:
                            self._end_span()
                            self._sync_from_log()
                        self.error = None
                if any(not isinstance(item, ProjectionBatch) for item in items):  # a flush, a stop: commit now
                    self._end_span()
            except Exception as exc:  # the graph lags (reported); reads are unaffected; the next sync retries
                self._end_span(exc)
                self.error = f"{type(exc).__name__}: {exc}"
            if self._queue.empty():
                self._idle.set()
            if stop:
                self._idle.set()
                return

    def _span_write(self, batch: ProjectionBatch) -> None:
        """Write ``batch`` inside the writer thread's spanning transaction, opened by the first batch and committed
        (then checkpointed, the file marked clean) by :meth:`_end_span` when a flush or a stop arrives, or every
        ``span_events`` events. Why: a rebuild's graph committed every 20,000 events kept the free pages of each
        commit's rewrites (a reprojected 100k graph was ~2.2x the size of one caught up in one transaction,
        docs/benchmarks.md "Graph size"). The span holds ``self._lock`` from its first batch to its commit, so a
        reader's :meth:`sync` waits for the rebuilt graph instead of taking the lock between two batches and then
        waiting on the store's write lock the span holds (a deadlock)."""
        if self._writer_span is None:
            stack = contextlib.ExitStack()
            stack.enter_context(self._lock)
            try:
                self._writer_written = stack.enter_context(self._spanning())
            except BaseException:
                stack.close()
                raise
            self._writer_span = stack
        self._write(batch)
        assert self._writer_written is not None
        self._writer_written(batch.event_count)

    def _end_span(self, failure: BaseException | None = None) -> None:
        """Commit the writer thread's open span (``failure``: roll it back; the store is closed and the file left
        marked dirty, so its next use rebuilds it from the log). Nothing when no span is open."""
        stack, self._writer_span, self._writer_written = self._writer_span, None, None
        if stack is None:
            return
        if failure is None:
            stack.close()
            return
        with contextlib.suppress(BaseException):
            stack.__exit__(type(failure), failure, failure.__traceback__)

    def _window_left(self, items: list[Any], deadline: float | None) -> float:
        """Seconds a following writer still gathers batches: none once anything but a batch was asked (a sync, a
        flush, a stop, a cancel) or a transaction's worth of events (``batch_events``) is there."""
        if deadline is None or any(not isinstance(item, ProjectionBatch) for item in items):
            return 0.0
        if self._held_events + sum(item.event_count for item in items) >= self.batch_events:
            return 0.0
        return deadline - time.monotonic()

    def _keep(self, items: list[Any]) -> None:
        """Move the batches among ``items`` to the held ones (in order), so :meth:`sync` can write them."""
        batches = [item for item in items if isinstance(item, ProjectionBatch)]
        items[:] = [item for item in items if not isinstance(item, ProjectionBatch)]
        with self._held_lock:
            self._held.extend(batches)
            self._held_events += sum(batch.event_count for batch in batches)

    def _complete(self, items: list[Any]) -> bool:
        """Whether the collected items make a transaction (enough events, or a sync / flush / stop asked)."""
        if self.coalesce_events <= 0 or any(not isinstance(item, ProjectionBatch) for item in items):
            return True
        return self._held_events + sum(item.event_count for item in items) >= self.coalesce_events

    def flush(self, timeout: float | None = 120.0) -> bool:
        """Wait until the background writer has nothing queued (True) or ``timeout`` passed."""
        if self._thread is not None and (not self._idle.is_set() or self._writer_span is not None):
            self._idle.clear()  # set again once the writer has committed (a span it holds open included)
            self._queue.put("flush")  # ends a coalescing wait, and commits the writer's span
        return self._idle.wait(timeout)

    def wait_idle(self, timeout: float | None) -> bool:
        """Wait (without asking for a flush) until the writer has nothing queued; True when it has not."""
        return self._thread is None or self._idle.wait(timeout)

    def pending(self) -> int:
        return self._queue.qsize()

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
        self._stop_thread()  # outside the lock: the writer thread takes it to finish its transaction
        self._forget_held()
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
        following = self.following
        self._stop_thread()  # outside the lock: the writer thread takes it to finish its transaction
        self._forget_held()
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
            self.follow()
        return True

    def _stop_thread(self, *, wait: bool = True) -> None:
        if self._thread is not None:
            self._queue.put(None)  # FIFO: the writer takes it before anything a new writer is given
            if wait:
                self._thread.join(timeout=300)
            self._thread = None

    def close(self) -> None:
        self._stop_thread()  # outside the lock: the writer thread takes it to finish its transaction
        self._forget_held()
        with self._lock:
            if self.store is not None:
                self.store.close()
                self.store = None
                if self.private and self.trust.clean:
                    with contextlib.suppress(Exception):
                        self.trust.mark(True)  # the file changes on close (Kuzu touches it): record it again
            self.trust.release_lock()
