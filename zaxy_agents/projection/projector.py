"""The projector: keeps the catalog, the retrieval indexes and the graph store in step with the log.

Flow per batch: log envelopes -> extractors -> planner -> (catalog + listeners, synchronously) -> graph writer
(a background thread that coalesces queued batches into one transaction). Appends never wait on any of this:
catch-up runs when a reader asks (or in a server's follower loop), and reads never wait on the graph write.

Consistency rules:
- The store commits rows and cursors atomically, so after a crash it sits exactly at some earlier cursor.
- The snapshot of catalog + listener state is saved only when the store has caught up with it, so the snapshot
  is never ahead of the store. On open, a snapshot whose cursors differ from the store's is discarded and the
  in-memory state is rebuilt by replaying the log (deterministic planner, same rows) without rewriting the
  store; the store then catches up from its own cursor.
- When the store is locked by another process (or unavailable) the projector runs in log-only mode: the
  in-memory state is still built from the log, nothing is written, and ``degraded`` says why.
- A session whose log no longer matches the stored cursor (file replaced, chain rewritten) is reported as a
  mismatch and not projected until `zaxy reproject`.
- A *shared* store (PostgreSQL: every worker writes to it) may be ahead of this process: a batch whose events
  another worker already wrote is skipped by the store, and a session whose stored cursor does not line up
  with the batch is continued from the store's own cursor (:mod:`.store_catchup`). A snapshot is then usable
  when the store holds at least what it covers.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import pickle
import queue
import shutil
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from zaxy_agents.errors import LockedError
from zaxy_agents.eventloom.protocol import EventLog

from .catalog import EntityCatalog
from .planner import ProjectionBatch, ProjectionPlanner
from .protocol import ProjectionStore
from .registry import ExtractorTable
from .store_catchup import catch_up_session

SNAPSHOT_FILE = "projection-state.pkl"
GRAPH_FILE = "graph.kuzu"
DEFAULT_BATCH_EVENTS = 2000
# Loading into an empty graph goes in one large batch: COPY into empty tables is cheap, while every COPY into a
# non-empty relation table pays a commit cost (see kuzu_store). Bounded to keep planner memory reasonable.
BULK_BATCH_EVENTS = 200_000
SNAPSHOT_FORMAT = 1
STORE_RETRY_SECONDS = 5.0  # how often a log-only projector retries a graph locked by another process


class ProjectionListener(Protocol):
    """Something kept in step with the projection (retrieval indexes)."""

    name: str

    def on_batch(self, batch: ProjectionBatch, catalog: EntityCatalog) -> None: ...

    def snapshot_state(self) -> Any: ...

    def restore_state(self, state: Any) -> bool: ...

    def reset(self) -> None: ...


class ProjectionMismatch(Exception):
    """The log no longer matches what was projected for a session."""


def _merge(batches: list[ProjectionBatch]) -> ProjectionBatch:
    merged = ProjectionBatch()
    for batch in batches:
        for name, value in vars(batch).items():
            if isinstance(value, list):
                getattr(merged, name).extend(value)
        merged.cursors.update(batch.cursors)
        merged.event_count += batch.event_count
    return merged


class _GraphWriter:
    """Background thread applying batches to the store, coalescing whatever is queued into one transaction.

    On an embedded store the first failure stops writing (the store fell behind; reads keep working). On a
    shared store failures are transient (a server restart): later batches continue from the store's cursor.
    """

    def __init__(self, store: ProjectionStore, write: Callable[[ProjectionBatch], None]) -> None:
        self.store = store
        self._write = write
        self._retry = store.shared
        self.error: str | None = None
        self._queue: queue.Queue[ProjectionBatch | None] = queue.Queue()
        self._idle = threading.Event()
        self._idle.set()
        self._thread = threading.Thread(target=self._run, name="zaxy-graph-writer", daemon=True)
        self._thread.start()

    def submit(self, batch: ProjectionBatch) -> None:
        if self.error is None or self._retry:
            self._idle.clear()
            self._queue.put(batch)

    def flush(self, timeout: float | None = None) -> bool:
        return self._idle.wait(timeout)

    def pending(self) -> int:
        return self._queue.qsize()

    def stop(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=60)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                self._idle.set()
                return
            batches = [item]
            stop = False
            while True:
                try:
                    extra = self._queue.get_nowait()
                except queue.Empty:
                    break
                if extra is None:
                    stop = True
                    break
                batches.append(extra)
            if self.error is None or self._retry:
                try:
                    self._write(batches[0] if len(batches) == 1 else _merge(batches))
                    self.error = None
                except Exception as exc:  # the store fell behind: stop writing (or retry later), reads keep working
                    self.error = f"{type(exc).__name__}: {exc}"
            if self._queue.empty():
                self._idle.set()
            if stop:
                self._idle.set()
                return


class Projector:
    """Owns the planner, the catalog, listeners and (optionally) the graph store for one Eventloom."""

    def __init__(
        self,
        log: EventLog,
        derived_path: Path,
        *,
        extractors: ExtractorTable,
        listeners: list[ProjectionListener] | None = None,
        store_factory: Callable[[Path], ProjectionStore] | None = None,
        use_graph: bool = True,
        batch_events: int = DEFAULT_BATCH_EVENTS,
    ) -> None:
        self.log = log
        self.extractors = extractors
        self.derived_path = Path(derived_path)
        self.listeners = list(listeners or [])
        self.batch_events = batch_events
        self.degraded: str | None = None
        self.mismatches: dict[str, str] = {}
        self._lock = threading.RLock()
        self.store: ProjectionStore | None = None
        self._writer: _GraphWriter | None = None
        self._store_factory = store_factory
        self._last_open_attempt = time.monotonic()
        if use_graph:
            self._open_store(store_factory)
        self.catalog = EntityCatalog()
        self.planner = ProjectionPlanner()
        self._load_snapshot()
        atexit.register(_close_at_exit, weakref.ref(self))

    # ------------------------------------------------------------------ opening
    def _open_store(self, store_factory: Callable[[Path], ProjectionStore] | None) -> None:
        if store_factory is None:
            self.degraded = "log-only: no graph store was given"
            return
        self._store_factory = store_factory
        try:
            self.store = store_factory(self.derived_path / GRAPH_FILE)
        except LockedError as exc:
            self.degraded = f"log-only: {exc.message}"
            return
        self._writer = _GraphWriter(self.store, self._write_batch)

    @property
    def shared_store(self) -> bool:
        """True when other processes write to the same store (PostgreSQL)."""
        return self.store is not None and self.store.shared

    def _store_holds(self, cursors: dict[str, tuple[int, str]], store_cursors: dict[str, tuple[int, str]]) -> bool:
        """Whether the store has everything ``cursors`` covers (exactly those cursors, for a private store)."""
        if not self.shared_store:
            return cursors == store_cursors
        return all(store_cursors.get(session, (0, ""))[0] >= seq for session, (seq, _hash) in cursors.items())

    def _write_batch(self, batch: ProjectionBatch) -> None:
        """Apply ``batch``; sessions a shared store reports as out of line continue from the store's cursor."""
        assert self.store is not None
        outcome = self.store.apply(batch)
        for session, result in sorted((outcome or {}).items()):
            if result == "behind":
                problem = catch_up_session(
                    self.store,
                    self.log,
                    self.extractors,
                    session,
                    batch.cursors[session][0],
                    max(self.batch_events, DEFAULT_BATCH_EVENTS),
                )
                if problem is not None:
                    raise ProjectionMismatch(problem)

    def _load_snapshot(self) -> None:
        state = _read_snapshot(self.derived_path / SNAPSHOT_FILE)
        store_cursors = self.store.cursors() if self.store is not None else None
        usable = state is not None and (store_cursors is None or self._store_holds(state["cursors"], store_cursors))
        if usable and state is not None:
            catalog = EntityCatalog.from_state(state["catalog"])
            restored = catalog is not None and all(
                listener.restore_state(state["listeners"].get(listener.name)) for listener in self.listeners
            )
            if restored and catalog is not None:
                self.catalog = catalog
                self.planner.restore(*catalog.planner_state())
                return
        for listener in self.listeners:
            listener.reset()
        if store_cursors:
            # The store is ahead of (or unrelated to) the snapshot: rebuild memory by replaying up to the store's
            # cursors without rewriting the store, then let catch-up continue past them.
            self._replay_into_memory(store_cursors)

    def _locked_out(self) -> bool:
        return self.store is None and bool(self.degraded) and self.degraded.startswith("log-only")

    def _attach_store(self) -> None:
        """Retry a graph that was locked by another process; on success, re-base memory on the store's cursors.

        The planner can only continue the store from the state it had at the store's cursor, so memory is
        rebuilt by replaying the log up to those cursors (the planner is deterministic), and the next catch-up
        writes the rest. Rare (a lock held by a short-lived process), and never loses an event.
        """
        self._last_open_attempt = time.monotonic()
        self._open_store(self._store_factory)
        if self.store is None:
            return
        self.degraded = None
        store_cursors = self.store.cursors()
        if store_cursors != self.catalog.cursors:
            self.catalog, self.planner, self.mismatches = EntityCatalog(), ProjectionPlanner(), {}
            for listener in self.listeners:
                listener.reset()
            if store_cursors:
                self._replay_into_memory(store_cursors)

    def _replay_into_memory(self, cursors: dict[str, tuple[int, str]]) -> None:
        for session, (seq, digest) in sorted(cursors.items()):
            if not self._cursor_matches(session, seq, digest):
                continue
            self._plan_session(session, 1, seq, BULK_BATCH_EVENTS, write_store=False)
        self._dispatch(write_store=False)

    # ------------------------------------------------------------------ catch-up
    def catch_up(self, sessions: list[str] | None = None) -> int:
        """Project everything appended since the last call; returns the number of events projected."""
        with self._lock:
            if self._locked_out() and time.monotonic() - self._last_open_attempt >= STORE_RETRY_SECONDS:
                self._attach_store()
            names = sessions if sessions is not None else [s.session for s in self.log.sessions()]
            batch_events = BULK_BATCH_EVENTS if not self.catalog.cursors else self.batch_events
            projected = 0
            for session in names:
                if session in self.mismatches:
                    continue
                cursor = self.catalog.cursors.get(session)
                if cursor is not None and not self._cursor_matches(session, *cursor):
                    continue
                head = self.log.head(session)
                if head is None or (cursor is not None and head.seq <= cursor[0]):
                    continue
                projected += self._plan_session(session, (cursor[0] if cursor else 0) + 1, None, batch_events)
            self._dispatch(write_store=True)
            return projected

    def _cursor_matches(self, session: str, seq: int, digest: str) -> bool:
        for envelope in self.log.replay_envelopes(session, seq, seq):
            if envelope["hash"] == digest:
                return True
            self.mismatches[session] = f"event {seq} hash {envelope['hash'][:12]} != projected {digest[:12]}"
            return False
        self.mismatches[session] = f"log has fewer than {seq} events (projected up to {seq})"
        return False

    def _plan_session(
        self, session: str, from_seq: int, to_seq: int | None, batch_events: int, *, write_store: bool = True
    ) -> int:
        """Plan one session's events; hands over a batch every ``batch_events`` events (the caller flushes)."""
        count = 0
        for envelope in self.log.replay_envelopes(session, from_seq, to_seq):
            self.planner.add(envelope, self.extractors.extract(envelope))
            count += 1
            if self.planner.pending_events() >= batch_events:
                self._dispatch(write_store)
        return count

    def _dispatch(self, write_store: bool) -> None:
        batch = self.planner.take_batch()
        if not batch.event_count:
            return
        self.catalog.apply(batch)
        for listener in self.listeners:
            listener.on_batch(batch, self.catalog)
        if write_store and self._writer is not None:
            self._writer.submit(batch)

    # ------------------------------------------------------------------ lifecycle
    def flush(self, timeout: float | None = 120.0) -> bool:
        """Wait for the graph writer to drain; True when the store has every planned batch."""
        return True if self._writer is None else self._writer.flush(timeout)

    def lag(self) -> int:
        """Batches planned but not yet written to the graph."""
        return 0 if self._writer is None else self._writer.pending()

    def save_snapshot(self) -> bool:
        """Persist catalog + listener state, only when the store holds exactly the same cursors."""
        with self._lock:
            if self.store is None or self._writer is None or self._writer.error or not self.flush():
                return False
            if not self._store_holds(self.catalog.cursors, self.store.cursors()):
                return False
            state = {
                "format": SNAPSHOT_FORMAT,
                "cursors": dict(self.catalog.cursors),
                "catalog": self.catalog.to_state(),
                "listeners": {listener.name: listener.snapshot_state() for listener in self.listeners},
            }
            _write_snapshot(self.derived_path / SNAPSHOT_FILE, state)
            return True

    def close(self) -> None:
        with self._lock:
            if self._writer is not None:
                self.save_snapshot()
                self._writer.stop()
                self._writer = None
            if self.store is not None:
                self.store.close()
                self.store = None

    def writer_error(self) -> str | None:
        return None if self._writer is None else self._writer.error

    # ------------------------------------------------------------------ rebuild
    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> str:
        """Throw the projection away and rebuild it from the log; returns the graph digest."""
        with self._lock:
            if self.store is None:
                raise LockedError(
                    self.degraded or "no graph store is open",
                    field="projection",
                    remediation="Stop the process that owns the graph database, then run `zaxy reproject` again.",
                )
            if self._writer is not None:
                self._writer.stop()
            (self.derived_path / SNAPSHOT_FILE).unlink(missing_ok=True)
            if self.shared_store:
                self.store.reset()
            else:
                factory = self._store_factory or type(self.store)
                self.store.close()
                _remove_graph(self.derived_path)
                self.store = factory(self.derived_path / GRAPH_FILE)
            self._writer = None  # rebuild writes synchronously, in large batches
            self.catalog, self.planner, self.mismatches = EntityCatalog(), ProjectionPlanner(), {}
            for listener in self.listeners:
                listener.reset()
            summaries = self.log.sessions()
            total = sum(s.event_count for s in summaries)
            done = 0
            for summary in summaries:
                for envelope in self.log.replay_envelopes(summary.session):
                    self.planner.add(envelope, self.extractors.extract(envelope))
                    done += 1
                    if done % 1000 == 0 and progress:
                        progress(done, total)
                    if self.planner.pending_events() >= BULK_BATCH_EVENTS:
                        self._apply_now()
            self._apply_now()
            if progress:
                progress(done, total)
            self._writer = _GraphWriter(self.store, self._write_batch)
            self.save_snapshot()
            return self.digest()

    def _apply_now(self) -> None:
        batch = self.planner.take_batch()
        if not batch.event_count:
            return
        self.catalog.apply(batch)
        for listener in self.listeners:
            listener.on_batch(batch, self.catalog)
        self._write_batch(batch)

    def digest(self) -> str:
        """SHA-256 over the canonical dump of the graph (same log -> same digest)."""
        if self.store is None:
            raise LockedError(self.degraded or "no graph store", field="projection", remediation="See status.")
        self.flush()
        digest = hashlib.sha256()
        for line in self.store.dump_lines():
            digest.update(line.encode())
            digest.update(b"\n")
        return digest.hexdigest()


def _close_at_exit(ref: weakref.ReferenceType[Projector]) -> None:
    """Stop the writer thread and close the graph before interpreter teardown (Kuzu aborts otherwise)."""
    projector = ref()
    if projector is not None:
        with contextlib.suppress(Exception):
            projector.close()


def _read_snapshot(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            state = pickle.load(handle)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError, ImportError):
        return None
    return state if isinstance(state, dict) and state.get("format") == SNAPSHOT_FORMAT else None


def _write_snapshot(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    with open(temporary, "wb") as handle:
        pickle.dump(state, handle, protocol=pickle.HIGHEST_PROTOCOL)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def _remove_graph(derived_path: Path) -> None:
    for candidate in derived_path.glob(f"{GRAPH_FILE}*"):
        if candidate.is_dir():
            shutil.rmtree(candidate)
        else:
            candidate.unlink()
