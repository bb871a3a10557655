"""The graph's background writer: the thread that writes committed batches into the graph off the projecting path.

Why a thread: a Kuzu write costs ~0.2 s of CPU whatever its size, so batches are gathered — for a rebuild up to
``coalesce_events`` (and written inside one spanning transaction), for a server that follows the graph for
``follow_window`` seconds — and written together. Batches committed while nothing writes are *held* (up to
``hold_events``) so the next :meth:`~.graph_sync.GraphSync.sync` writes them as they are instead of replaying the
log. The writing itself (a transaction, trust marks, the catch-up from the log) is the owner's,
:class:`~.graph_sync.GraphSync`; this object owns the queue, the thread, the held batches and the cancel state.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .graph_replay import merge_batches
from .planner import ProjectionBatch

if TYPE_CHECKING:
    from .graph_sync import GraphSync

# Events of committed batches an open graph keeps for its next sync when nothing follows it: that sync writes them
# as they are instead of replaying and re-planning the same events from the log (past this, it replays).
HOLD_EVENTS = 20_000
# How long a following writer (a server keeping the graph current) gathers batches before a transaction. Each graph
# write costs Kuzu ~0.2 s of CPU whatever its size (its COMMIT rewrites every relationship table's touched node
# group), so writing every batch at once cost a server ~2 ms of CPU per event appended one at a time. A reader that
# needs the graph does not wait for the window: the gathered batches wait with the held ones, and
# :meth:`GraphSync.sync` writes them itself.
FOLLOW_WINDOW_SECONDS = 1.0


class GraphWriter:
    """The background writer of one :class:`~.graph_sync.GraphSync` (started by a rebuild or a following server)."""

    def __init__(self, graph: GraphSync) -> None:
        self.graph = graph
        self._queue: queue.Queue[ProjectionBatch | str | None] = queue.Queue()
        self._idle = threading.Event()
        self._idle.set()
        self._thread: threading.Thread | None = None
        # Threads stopped without waiting after a cancel: whatever they still dequeue is dropped, never written. A
        # rebuild resumes writing (clears the cancel) as soon as it returns, possibly before such a thread has read
        # its stop: without this it would then open the graph again — after its owner closed it.
        self._abandoned: set[threading.Thread] = set()
        self.coalesce_events = 0  # > 0: the writer waits for this many events before a transaction (rebuilds)
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
        self._writer_span: contextlib.ExitStack | None = None  # the writer thread's open span (and the graph lock)
        self._writer_written: Callable[[int], None] | None = None

    # ------------------------------------------------------------------ starting and stopping
    def follow(self) -> None:
        """Keep the graph current in a background thread (servers): opened now, synced, then fed each batch."""
        with self.graph._lock:
            self.following = True
            self._start()
            self._idle.clear()
            self._queue.put("sync")

    def start(self) -> None:
        """Start the background writer without a catch-up (a rebuild feeds it every batch itself)."""
        with self.graph._lock:
            self._start()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="zaxy-graph-writer", daemon=True)
            self._thread.start()

    def stop_after_rebuild(self) -> None:
        """Stop the writer a rebuild started; after :meth:`cancel` without waiting for it: the write it is rolling
        back holds the graph lock, and whoever uses the graph next waits for that lock."""
        if not self.following:
            if self._cancelled.is_set() and self._thread is not None:
                self._abandoned.add(self._thread)
            self.stop(wait=not self._cancelled.is_set())

    def stop(self, *, wait: bool = True) -> None:
        """End the thread once it has written what was queued before (call it outside the graph lock: the thread
        takes that lock to finish its transaction)."""
        if self._thread is not None:
            self._queue.put(None)  # FIFO: the writer takes it before anything a new writer is given
            if wait:
                self._thread.join(timeout=300)
            self._thread = None

    # ------------------------------------------------------------------ batches in
    def submit(self, batch: ProjectionBatch) -> None:
        """A batch the catalog just committed: written by the background writer when one runs; else, if the graph
        is open here, kept (up to ``hold_events`` events) for the next :meth:`GraphSync.sync`, which writes it
        without replaying its events from the log. Past the bound everything kept is dropped and that sync
        replays."""
        if self.graph.store is None or self._cancelled.is_set():
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

    def take_held(self) -> list[ProjectionBatch]:
        """The held batches, in order (they are no longer held)."""
        with self._held_lock:
            held, self._held, self._held_events = self._held, [], 0
        return held

    def take_waiting(self) -> list[ProjectionBatch]:
        """Every batch held or queued, in order: a sync in another thread writes them itself."""
        batches = self.take_held()
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, ProjectionBatch):
                batches.append(item)
        return batches

    def forget_held(self) -> None:
        """The graph is emptied, rebuilt or dropped: batches kept for it no longer line up with anything."""
        self.take_held()

    def wait_below(self, queued: int) -> None:
        """Back-pressure: wait while ``queued`` or more batches wait for the writer (bounded memory)."""
        while (
            self._thread is not None
            and self._queue.qsize() >= queued
            and self.graph.error is None
            and not self._cancelled.is_set()
        ):
            time.sleep(0.005)

    # ------------------------------------------------------------------ cancel
    def cancel(self) -> None:
        """From any thread: stop writing now (a rebuild was interrupted). Queued batches are dropped, the write
        in progress is interrupted (rolled back; a private graph is then rebuilt from the log on its next use),
        and nothing is written until :meth:`resume`. The catalog's cursors are untouched: the graph catches up
        from the log the next time it is synced."""
        with self._cancel_lock:
            self._cancelled.set()
            self.forget_held()
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._queue.put(None)  # a stop asked for stays asked for
                    break
            self._queue.put("cancel")  # ends the writer's coalescing wait without writing what it collected
            store = self.graph.store
            if store is not None:
                store.interrupt()

    def resume(self) -> None:
        """Write again after :meth:`cancel` (a new rebuild starts)."""
        with self._cancel_lock:
            self._cancelled.clear()
            store = self.graph.store
            if store is not None:
                store.resume()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    # ------------------------------------------------------------------ waiting for it
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

    # ------------------------------------------------------------------ the thread
    def _run(self) -> None:
        graph = self.graph
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
            abandoned = threading.current_thread() in self._abandoned
            if self._cancelled.is_set() or abandoned:  # dropped: the graph catches up from the log later
                self._end_span(RuntimeError("the graph write was cancelled"))  # rolled back, the file marked dirty
                if self._queue.empty():
                    self._idle.set()
                if stop:
                    self._idle.set()
                    self._abandoned.discard(threading.current_thread())
                    return
                continue
            try:
                with graph._lock:
                    if graph.open() is not None:
                        batches = [*self.take_held(), *(i for i in items if isinstance(i, ProjectionBatch))]
                        merged = merge_batches(batches) if batches else None
                        if merged is not None and graph.lines_up(merged):
                            if self.span_writes:
                                self._span_write(merged)
                            else:
                                graph.write(merged)
                            merged = None
                        if merged is not None or "sync" in items:
                            self._end_span()
                            graph.sync_from_log()
                        graph.error = None
                if any(not isinstance(item, ProjectionBatch) for item in items):  # a flush, a stop: commit now
                    self._end_span()
            except Exception as exc:  # the graph lags (reported); reads are unaffected; the next sync retries
                self._end_span(exc)
                graph.error = f"{type(exc).__name__}: {exc}"
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
        docs/benchmarks.md "Graph size"). The span holds the graph lock from its first batch to its commit, so a
        reader's :meth:`GraphSync.sync` waits for the rebuilt graph instead of taking the lock between two batches
        and then waiting on the store's write lock the span holds (a deadlock)."""
        if self._writer_span is None:
            stack = contextlib.ExitStack()
            stack.enter_context(self.graph._lock)
            try:
                self._writer_written = stack.enter_context(self.graph.spanning())
            except BaseException:
                stack.close()
                raise
            self._writer_span = stack
        self.graph.write(batch)
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
        if self._held_events + sum(item.event_count for item in items) >= self.graph.batch_events:
            return 0.0
        return deadline - time.monotonic()

    def _keep(self, items: list[Any]) -> None:
        """Move the batches among ``items`` to the held ones (in order), so :meth:`GraphSync.sync` can write them."""
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
