"""The projector: keeps the catalog and the retrieval indexes (``derived.sqlite``) in step with the log.

Flow: log envelopes -> extractors -> planner -> one SQLite transaction per chunk of events holding the catalog
rows, every derived index's rows and the per-session cursors they cover. Appends never wait on any of this:
catch-up runs when a reader asks (or in a server's warm-up). The graph of record (Kuzu / PostgreSQL) is not on
this path at all: :class:`~.graph_sync.GraphSync` brings it up to the catalog's cursors when something needs
the graph, or continuously in a server. This module decides what to project (which sessions, from which cursor,
when a session is reset or erased); :mod:`.chunk_commit` writes each chunk, :mod:`.derived_open` opens the tables.

Consistency rules:
- Progress is committed with the rows it covers: after a crash (SIGKILL, full disk) every table sits exactly at
  an earlier cursor, and catch-up replays the gap. Nothing is saved at close and nothing is loaded at open.
- Several processes may project the same memory: the write transaction re-reads the session's cursor, and a
  chunk another process already projected is dropped, not written twice.
- A session whose log no longer continues the projected cursor (file replaced, chain rewritten) is a mismatch
  and is not projected until `zaxy reproject`.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from zaxy_agents.errors import IntegrityError, LockedError
from zaxy_agents.eventloom.erasure import is_erased
from zaxy_agents.eventloom.models import SessionSummary
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.storage.derived.store import DerivedStore, DerivedStoreBusy, is_damage

from .chunk_commit import ChunkCommitter
from .derived_open import open_components, remove_leftovers
from .graph_sync import GRAPH_FILE, GraphSync, batch_starts
from .listeners import MemoryListeners, catch_up_listeners, is_derived_index
from .logged_text import LogTexts
from .planner import ProjectionBatch
from .protocol import ProjectionStore
from .rebuild import Rebuild, RebuildControl, graph_digest, until_damage
from .rebuild_status import RebuildCancelled, RebuildStatus
from .registry import ExtractorTable
from .sqlite_catalog import SqliteCatalog
from .state_codec import StateClasses

DEFAULT_BATCH_EVENTS = 2000
ERASURE_EVENT = "eventloom.erased"

__all__ = ["DEFAULT_BATCH_EVENTS", "GRAPH_FILE", "ProjectionMismatch", "Projector", "RebuildCancelled", "RebuildStatus"]


class ProjectionMismatch(Exception):
    """The log no longer matches what was projected for a session."""


class Projector:
    """Owns the derived store, the catalog, the chunk committer (and its planner), the listeners and the graph sync for
    one Eventloom."""

    def __init__(
        self,
        log: EventLog,
        derived_path: Path,
        *,
        extractors: ExtractorTable,
        store_factory: Callable[[Path], ProjectionStore],
        listeners: list[Any] | None = None,
        shared_graph: bool = False,
        graph_name: str = "kuzu",
        state_classes: StateClasses | None = None,
        use_graph: bool = True,
        batch_events: int = DEFAULT_BATCH_EVENTS,
    ) -> None:
        self.log = log
        self.extractors = extractors
        self.state_classes = state_classes or {}  # classes the in-memory listeners' saved state may hold
        self.derived_path = Path(derived_path)
        self.listeners = list(listeners or [])
        self.batch_events = batch_events
        self.use_graph = use_graph
        self.problem: str | None = None  # why the last catch-up could not commit (busy, disk full...)
        self.damaged: dict[str, str] = {}  # sessions that cannot be read past some event (see _contained)
        self._notices_taken = 0
        self._lock = threading.RLock()
        self._rebuild_control = RebuildControl()  # a rebuild's counters and stop request (read from other threads)
        # durable indexes a running rebuild has handed to a worker process (rebuild_worker.py): not written here
        self._offloaded: set[str] = set()
        self._lagging = False  # a rebuild stopped while an index was offloaded: catch_up replays it first
        self.derived = DerivedStore(self.derived_path)
        remove_leftovers(self.derived, self.derived_path)
        self.catalog = self._new_catalog()
        self._durable = [listener for listener in self.listeners if is_derived_index(listener)]
        # the write half: plans and commits chunks (chunk_commit.py); owns the planner
        self.commits = ChunkCommitter(
            self.derived, self.catalog, self._durable, self._offloaded, self._rebuild_control, self._hand_on
        )
        memory = [listener for listener in self.listeners if not is_derived_index(listener)]
        self._memory = MemoryListeners(memory, self.derived_path, self.state_classes)
        self._open_components()
        self.graph = GraphSync(
            log,
            self.derived,
            self.catalog,
            self.derived_path,
            store_factory,
            extractors,
            shared=shared_graph,
            name=graph_name,
        )
        atexit.register(_close_at_exit, weakref.ref(self))

    # ------------------------------------------------------------------ opening
    def _new_catalog(self) -> SqliteCatalog:
        """The catalog over ``self.derived``, reading raw-text summaries from this log (logged_text.py)."""
        return SqliteCatalog(self.derived, LogTexts(self.log.lines_at, self.extractors.extract))

    def _open_components(self) -> None:
        """Create or check every component's tables (derived_open.py); reset ones are rebuilt from the log (never
        re-planned)."""
        open_components(self.derived, self._durable, self._memory)
        self._catch_up_listeners()

    def _catch_up_listeners(self) -> None:
        catch_up_listeners(self.log, self.derived, self.catalog, self.extractors, self._durable, self._memory)

    # ------------------------------------------------------------------ state for readers
    @property
    def degraded(self) -> str | None:
        return self.problem or self.graph.unavailable

    @property
    def store(self) -> Any:
        """The graph store, opened and brought up to date on first use (``None`` when unavailable here)."""
        if not self.use_graph:
            return None
        if self.graph.open() is None:
            return None
        try:
            self.graph.sync()
        except Exception as exc:  # the graph lags (reported as writer_error); it is never left half-written
            self.graph.error = f"{type(exc).__name__}: {exc}"
        return self.graph.store

    def graph_exists(self) -> bool:
        """Whether the graph of record is materialised (an embedded graph is created on first graph use)."""
        return self.use_graph and (not self.graph.private or self.graph.path.exists())

    @property
    def mismatches(self) -> dict[str, str]:
        """Sessions a shared graph store holds differently from the log (derived state itself never keeps a
        mismatch: it rebuilds the session)."""
        return self.graph.mismatches

    @property
    def graph_backend(self) -> str | None:
        return self.graph.backend if self.use_graph else None

    def writer_error(self) -> str | None:
        return self.graph.error

    def take_notices(self) -> list[str]:
        """What opening or maintaining derived state discarded since the last call (each reported once)."""
        notices, self._notices_taken = self.derived.notices[self._notices_taken :], len(self.derived.notices)
        return notices

    # ------------------------------------------------------------------ catch-up
    def catch_up(self, sessions: list[str] | None = None, listed: Sequence[SessionSummary] | None = None) -> int:
        """Project everything appended since the last call; returns the number of events projected here.
        ``listed``: the log's session listing the caller just read (``sessions=None`` only: a whole-memory checkout
        lists the log for its lag, and listing it again stats every session file a second time)."""
        with self._lock:
            try:
                projected = self._catch_up(sessions, listed)
            except DerivedStoreBusy as exc:
                self.problem = f"projection paused: {exc}; reads serve the last projected state"
                return 0
            except sqlite3.DatabaseError as exc:
                if is_damage(exc):
                    self._recover_damage(exc)
                    return self._catch_up(sessions)
                self.problem = f"projection paused: {exc}; reads serve the last projected state"
                return 0
            self.problem = None
            return projected

    def _catch_up(self, sessions: list[str] | None, listing: Sequence[SessionSummary] | None = None) -> int:
        if self.catalog.refresh():
            self.commits.new_planner()
        if self._lagging:
            self._catch_up_listeners()
            self._lagging = False
        listed: dict[str, tuple[int, str | None]] = {}
        if sessions is not None:
            names = sessions
        else:  # every session of the log, and every session derived state holds (its log may be gone)
            summaries = self.log.sessions() if listing is None else listing
            listed = {s.session: (s.event_count, s.head_hash) for s in summaries if s.damaged is None}
            names = sorted(set(listed) | set(self.catalog.cursors))
        projected = 0
        cursors = self.catalog.cursors
        for session in names:
            if session in listed and listed[session] == cursors.get(session):  # listed at its projected head
                self.damaged.pop(session, None)  # (what _contained does when nothing failed)
                continue
            with self._contained(session):
                projected += self._catch_up_session(session)
        return projected

    def _catch_up_session(self, session: str) -> int:
        head = self.log.head(session)
        cursor = self.catalog.cursors.get(session)
        if head is None:
            if cursor is not None:
                self._reset_session(session, f"its log is gone (projected up to {cursor[0]})", replay=False)
            return 0
        if cursor is not None and head.seq <= cursor[0]:
            if head.seq < cursor[0]:
                return self._reset_session(session, f"the log has {head.seq} events, {cursor[0]} projected")
            if head.hash != cursor[1]:
                return self._reset_session(
                    session, f"event {head.seq} hash {head.hash[:12]} != projected {cursor[1][:12]}"
                )
            return 0
        return self._project_session(session, cursor)

    @contextlib.contextmanager
    def _contained(self, session: str) -> Iterator[None]:
        """One damaged session never takes the others down: its failure is recorded in :attr:`damaged` (the
        events before the damage stay projected; ``zaxy repair`` makes the rest readable)."""
        try:
            yield
            self.damaged.pop(session, None)
        except IntegrityError as exc:
            self.damaged[session] = exc.message

    def _reset_session(self, session: str, reason: str, *, replay: bool = True) -> int:
        """Derived state of ``session`` does not match its log (replaced, rewritten, gone): drop every row derived
        from it — with a warning — and, when the log is there, project it again from scratch."""
        self.derived.warn(
            f"{self.derived.path}: the derived state of session {session!r} did not match the log ({reason}); "
            + ("it was rebuilt from the log" if replay else "it was removed")
        )
        old = self.catalog.cursors.get(session)
        with self.derived.write() as db:
            self.catalog.delete_session(db, session)
            for listener in self._durable:
                listener.erase(db, session, list(range(1, old[0] + 1)) if old else [], None)
            db.execute("DELETE FROM lst_cursors WHERE session = ?", (session,))
        self.commits.new_planner()
        self._memory.reset()
        self._catch_up_listeners()
        if self.use_graph:
            self.graph.invalidate()
        return self._project_session(session, None) if replay else 0

    def _project_session(self, session: str, cursor: tuple[int, str] | None) -> int:
        """Plan and commit the session's new events, chunk by chunk."""
        projected = 0
        chunk: list[tuple[dict[str, Any], Any]] = []
        expected = cursor
        erased: list[int] = []  # erasure records met: the events they name must leave derived state too
        damage_box: list[IntegrityError] = []
        envelopes = self.log.replay_envelopes(session, (cursor[0] if cursor else 0) + 1)
        for envelope in until_damage(envelopes, damage_box):
            if not chunk and expected is not None and envelope["prev_hash"] != expected[1]:
                return projected + self._reset_session(
                    session, f"event {envelope['seq']} does not continue projected event {expected[0]}"
                )
            chunk.append((envelope, self.extractors.extract(envelope)))
            if envelope["type"] == ERASURE_EVENT:
                erased += _erased_seqs(envelope)
            if len(chunk) >= self.batch_events or (erased and chunk):
                batch = self.commits.commit(session, expected, chunk)
                if batch is None:
                    return projected  # another process projected these: the next call continues from there
                projected += len(chunk)
                expected, chunk = batch.cursors[session], []
                if erased and self._erasure_pending(session, expected[0]):
                    self.erase(session, erased, None)
                    return projected
                erased = []
        if chunk and self.commits.commit(session, expected, chunk) is not None:
            projected += len(chunk)
        if damage_box:  # the events read before the damage are committed above; report the damage
            raise damage_box[0]
        return projected

    def _erasure_pending(self, session: str, record_seq: int) -> bool:
        """Whether an erasure record at ``record_seq`` still has to be applied here (not by ``erase`` already)."""
        return int(self.derived.meta(f"erased:{session}") or 0) < record_seq

    def _hand_on(self, batch: ProjectionBatch) -> None:
        """A committed batch to the in-memory listeners and the graph writer."""
        self._feed_memory_listeners(batch)
        if self.use_graph:
            self.graph.writer.submit(batch)

    def _start_over(self) -> None:
        """The planner, the in-memory listeners and the catalog's cache forget what they hold (a rolled-back
        rebuild group, emptied tables)."""
        self.commits.new_planner()
        self._memory.reset()
        self.catalog.refresh()

    def _feed_memory_listeners(self, batch: ProjectionBatch) -> None:
        if not self._memory.listeners:
            return
        if not self._memory.follows(batch_starts(batch)):
            self._catch_up_listeners()  # another process committed in between: replay what we did not see
            return
        self._memory.feed(batch, self.catalog)

    def _recover_damage(self, exc: BaseException) -> None:
        """The derived file turned out damaged while in use: recreate it and rebuild from the log."""
        self.derived.discard(f"{self.derived.path} is damaged ({exc}); it was deleted and is rebuilt from the log")
        notices = self.derived.notices
        self.derived = DerivedStore(self.derived_path)
        self.derived.notices[:0] = notices
        self.catalog = self._new_catalog()
        self.graph.derived, self.graph.catalog = self.derived, self.catalog
        self.commits.retarget(self.derived, self.catalog)
        self._memory.reset()
        self._open_components()

    # ------------------------------------------------------------------ graph
    def follow_graph(self, *, create: bool = False) -> bool:
        """Keep the graph of record current in the background (servers that own the memory).

        An embedded graph is materialised on first use (a traversal, a graph search, status, the digest): a server
        follows one that exists but does not create it unless ``create``, so a memory used only through checkout
        and hooks never pays for a graph (disk, memory, writes). A shared graph (PostgreSQL) is always followed.
        """
        if not self.use_graph or (self.graph.private and not create and not self.graph.path.exists()):
            return False
        self.graph.writer.follow()
        return True

    def flush(self, timeout: float | None = 120.0) -> bool:
        """Wait for the background graph writer to drain; True when it has nothing queued."""
        return self.graph.writer.flush(timeout)

    def lag(self) -> int:
        """Batches queued for the graph writer."""
        return self.graph.writer.pending()

    # ------------------------------------------------------------------ lifecycle
    def save_snapshot(self) -> bool:
        """Persist the state of memory listeners (only they need it; everything else is committed already)."""
        with self._lock:
            return self._memory.save()

    def close(self) -> None:
        with self._lock:
            with contextlib.suppress(Exception):
                self.save_snapshot()
            self.graph.close()
            self.derived.close()

    # ------------------------------------------------------------------ rebuild (zaxy reproject: rebuild.py)
    def rebuild(self, progress: Callable[[int, int], None] | None = None, *, digest: bool = True) -> str | None:
        """Throw every derived table and the graph away and rebuild them from the log; returns the digest, or None
        with ``digest=False``.

        The digest reads the whole graph back (a canonical dump: ~8 % of a 100k-event rebuild) only to print it;
        nothing checks or stores it — the graph's trust marker (:mod:`.graph_sync`) and the derived tables' cursors
        are what a later open relies on — so ``zaxy reproject`` computes it only when asked (``--digest``).

        ``progress(indexed, total)`` is called after every committed chunk; :attr:`rebuild_status` tells the whole
        story (graph writes, digest) to a reader in another thread, and :meth:`cancel_rebuild` (any thread) stops
        the rebuild within about a second with :class:`RebuildCancelled`.
        """
        with self._lock:
            try:
                return self._rebuild(progress, digest)
            finally:
                if self._offloaded:  # stopped before the worker's tables were copied: those indexes lag the catalog,
                    self._offloaded.clear()  # replayed by the next catch-up (not here: a Ctrl-C exits at once)
                    self._lagging = True

    def _rebuild(self, progress: Callable[[int, int], None] | None, digest: bool) -> str | None:
        return Rebuild(
            log=self.log,
            derived=self.derived,
            catalog=self.catalog,
            graph=self.graph,
            use_graph=self.use_graph,
            extractors=self.extractors,
            durable=self._durable,
            batch_events=self.batch_events,
            control=self._rebuild_control,
            damaged=self.damaged,
            commit=functools.partial(self.commits.commit, hand_on=False),
            hand_on=self._hand_on,
            start_over=self._start_over,
            save_snapshot=self.save_snapshot,
            offloaded=self._offloaded,
        ).run(progress, self.digest if digest else None)

    @property
    def rebuild_status(self) -> RebuildStatus:
        """The last (or running) rebuild's counters, for a bar in another thread."""
        return self._rebuild_control.status

    def cancel_rebuild(self) -> None:
        """From any thread: stop a running :meth:`rebuild` soon (the catalog stops at its last committed chunk,
        the graph write in progress is interrupted and rolled back). A no-op when nothing is rebuilding."""
        if not self._rebuild_control.running:
            return
        self._rebuild_control.stop.set()
        if self.use_graph:
            self.graph.writer.cancel()

    def digest(self, status: RebuildStatus | None = None) -> str:
        """SHA-256 over the canonical dump of the graph (same log -> same digest); ``status`` counts the lines."""
        store = self.store
        if store is None:
            raise LockedError(self.graph.unavailable or "no graph store", field="projection", remediation="See status.")
        return graph_digest(store.dump_lines(), status, self._rebuild_control.check)

    def rebuild_unwinding(self) -> bool:
        """After a cancelled rebuild: the graph write it interrupted is still being rolled back. The graph file is
        marked dirty until that ends, so a process may exit without waiting: the next open deletes the file and
        rebuilds it from the log (the trust protocol of :mod:`.graph_sync`)."""
        return self.use_graph and self.graph.unwinding()

    # ------------------------------------------------------------------ erasure
    def erase(self, session: str, seqs: list[int], envelopes: dict[int, Any] | None = None) -> None:
        """Remove every derived row the events ``seqs`` of ``session`` made (catalog, indexes); no byte of the
        removed rows stays in the files (``secure_delete`` zeroes them, the WAL is folded), and an embedded graph
        file is dropped to be rebuilt on its next use (``GraphSync.forget``).

        The cost follows the erased events: when no other event depends on the keys they changed (a store item's
        puts and delete, a chat turn), their catalog rows are deleted and nothing is re-planned (:mod:`.erase_local`,
        given ``envelopes``, their content before the erasure). Otherwise (a fact a later event superseded, a
        session projected before the catalog's layout 8, ``envelopes`` unknown: a record met by catch-up) the
        session's rows are deleted and the session is re-planned from the scrubbed log."""
        with self._lock:
            head = self.log.head(session)
            local = False
            with self.derived.write() as db:
                cursor = db.execute("SELECT seq FROM cat_cursors WHERE session = ?", (session,)).fetchone()
                known = _known(envelopes, seqs, int(cursor[0]) if cursor else 0)
                if known is not None:
                    extractions = {seq: self.extractors.extract(envelope) for seq, envelope in known.items()}
                    local = self.catalog.erase_events(db, session, known, extractions)
                if not local:
                    self.catalog.delete_session(db, session)
                # Indexes remove the erased events' rows themselves and keep their cursor: a re-plan below re-plans
                # the catalog only (see chunk_commit.py), so nothing is indexed twice.
                for listener in self._durable:
                    listener.erase(db, session, seqs, envelopes)
                # Every erasure record up to the head is covered by this erasure (or the replay of the scrubbed log).
                self.derived.set_meta(db, f"erased:{session}", str(head.seq if head else 0))
            self.commits.new_planner()
            if not local or self._memory.listeners:
                self._memory.reset()  # in-memory listeners cannot drop one session's rows: they start over
            self._catch_up([session])
            self._catch_up_listeners()
            self.derived.scrub()
            if self.use_graph and not self.graph.forget():
                self.graph.reset(new_file=True)
                self.graph.sync()


def _known(envelopes: dict[int, Any] | None, seqs: list[int], projected: int) -> dict[int, dict[str, Any]] | None:
    """The pre-erasure envelopes of the erased events the catalog holds (seq <= ``projected``), or None when one is
    missing or already scrubbed (its content, which the targeted erasure re-extracts, is then unknown)."""
    if envelopes is None:
        return None
    known: dict[int, dict[str, Any]] = {}
    for seq in seqs:
        if seq > projected:
            continue  # not projected yet: catch-up meets it scrubbed
        envelope = envelopes.get(seq)
        if not isinstance(envelope, dict) or is_erased(envelope) or envelope.get("seq") != seq:
            return None
        known[seq] = envelope
    return known


def _erased_seqs(envelope: dict[str, Any]) -> list[int]:
    """The seqs an ``eventloom.erased`` record names (its ranges; never content)."""
    seqs: list[int] = []
    ranges = envelope.get("payload", {}).get("ranges", [])
    for item in ranges if isinstance(ranges, list) else []:
        if isinstance(item, dict) and isinstance(item.get("from_seq"), int) and isinstance(item.get("to_seq"), int):
            seqs.extend(range(item["from_seq"], item["to_seq"] + 1))
    return seqs


def _close_at_exit(ref: weakref.ReferenceType[Projector]) -> None:
    """Stop the writer thread and close the graph before interpreter teardown (Kuzu aborts otherwise)."""
    projector = ref()
    if projector is not None:
        with contextlib.suppress(Exception):
            projector.close()
