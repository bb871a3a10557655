"""Projection listeners (the retrieval indexes) and how they are kept in step with the catalog.

Two kinds:

* **Derived indexes** (:class:`DerivedIndex`) keep their rows in ``derived.sqlite`` and write them inside the
  projector's transaction, so they are always exactly at the catalog's cursors. Their tables carry a schema
  version; a reset index is rebuilt from the log alone (:func:`replay_batches`), without re-planning the catalog.
* **Memory listeners** (the older protocol: ``on_batch`` / ``snapshot_state`` / ``restore_state`` /
  ``reset``) live in memory. Their state is saved in a data-only file (:mod:`.state_codec`) with the cursors it
  covers, only when it changed; on open the gap up to the catalog's cursors is replayed from the log.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from zaxy_agents.storage.derived.store import DerivedStore

from .planner import ProjectionBatch, search_doc
from .registry import ExtractorTable
from .state_codec import StateClasses, StateFileError, dumps, loads, write_atomically

MEMORY_STATE_FILE = "listeners.state"
MEMORY_STATE_FORMAT = 1
REPLAY_CHUNK = 2000

Cursors = dict[str, tuple[int, str]]


@runtime_checkable
class DerivedIndex(Protocol):
    """A retrieval index whose rows live in ``derived.sqlite`` (agreed with the retrieval indexes)."""

    name: str
    schema_version: int

    def create_schema(self, db: sqlite3.Connection) -> None: ...

    def drop_schema(self, db: sqlite3.Connection) -> None: ...

    def attach(self, store: Any) -> None: ...

    def apply(self, batch: ProjectionBatch, db: sqlite3.Connection, catalog: Any) -> None: ...

    def committed(self) -> None: ...

    def rolled_back(self) -> None: ...

    def erase(
        self, db: sqlite3.Connection, session: str, seqs: list[int], envelopes: dict[int, Any] | None
    ) -> None: ...


class MemoryListener(Protocol):
    """A listener kept in memory (older protocol)."""

    name: str

    def on_batch(self, batch: ProjectionBatch, catalog: Any) -> None: ...

    def snapshot_state(self) -> Any: ...

    def restore_state(self, state: Any) -> bool: ...

    def reset(self) -> None: ...


def is_derived_index(listener: Any) -> bool:
    return callable(getattr(type(listener), "create_schema", None))


LISTENER_CURSOR_DDL = (
    "CREATE TABLE IF NOT EXISTS lst_cursors(listener TEXT NOT NULL, session TEXT NOT NULL, seq INTEGER NOT NULL, "
    "PRIMARY KEY(listener, session)) WITHOUT ROWID"
)


def write_listener_cursors(db: sqlite3.Connection, advanced: list[tuple[str, Cursors]]) -> None:
    """Record how far each listener got: ``advanced`` holds ``(listener name, its cursors)`` pairs, written in one
    statement."""
    rows = [(name, session, seq) for name, cursors in advanced for session, (seq, _hash) in sorted(cursors.items())]
    if rows:
        db.executemany("INSERT OR REPLACE INTO lst_cursors(listener, session, seq) VALUES (?, ?, ?)", rows)


def listener_cursors(db: sqlite3.Connection, name: str) -> dict[str, int]:
    return dict(db.execute("SELECT session, seq FROM lst_cursors WHERE listener = ?", (name,)).fetchall())


# ---------------------------------------------------------------------- replay for a lagging listener
def replay_batches(
    log: Any, catalog: Any, gaps: dict[str, tuple[int, int]], extractors: ExtractorTable
) -> Iterator[ProjectionBatch]:
    """Batches carrying what listeners read (``searchable`` docs and ``entities`` rows) for the events in
    ``gaps`` (``session -> (first seq, last seq)``), rebuilt from the log and the catalog — no planning."""
    for session, (first, last) in sorted(gaps.items()):
        start = first
        while start <= last:
            stop = min(last, start + REPLAY_CHUNK - 1)
            batch = ProjectionBatch()
            for envelope in log.replay_envelopes(session, start, stop):
                doc = search_doc(envelope, extractors.extract(envelope))
                if doc is not None:
                    batch.searchable.append(doc)
                batch.cursors[session] = (envelope["seq"], envelope["hash"])
                batch.event_count += 1
            batch.entities = catalog.entity_rows(session, start, stop)
            if batch.event_count:
                yield batch
            start = stop + 1


# ---------------------------------------------------------------------- memory listeners' state file
def load_memory_state(folder: Path, listeners: list[Any], warn: Any, classes: StateClasses) -> Cursors | None:
    """Restore memory listeners from their data-only state file; returns the cursors it covers, or ``None``
    (missing, unreadable — warned — or not matching these listeners) after resetting them all."""
    path = folder / MEMORY_STATE_FILE
    if not listeners:
        if path.exists():  # written by a version whose indexes lived in memory: never read any more
            warn(f"{path} was ignored (the retrieval indexes live in derived.sqlite now) and deleted")
            path.unlink(missing_ok=True)
        return {}
    state = None
    if path.exists():
        try:
            state = loads(path.read_bytes(), classes)
        except (OSError, StateFileError) as exc:
            warn(f"{path} could not be read ({exc}); the retrieval indexes are rebuilt from the log")
            state = None
        if state is not None and (not isinstance(state, dict) or state.get("format") != MEMORY_STATE_FORMAT):
            warn(f"{path} has another format; the retrieval indexes are rebuilt from the log")
            state = None
    if state is not None:
        try:
            saved = state["listeners"]
            restored = all(listener.restore_state(saved.get(listener.name)) for listener in listeners)
            cursors = {str(s): (int(q), str(h)) for s, (q, h) in state["cursors"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            warn(f"{path} does not fit these indexes ({type(exc).__name__}); they are rebuilt from the log")
            restored, cursors = False, {}
        if restored:
            return cursors
    for listener in listeners:
        listener.reset()
    return None


def save_memory_state(folder: Path, listeners: list[Any], cursors: Cursors, classes: StateClasses) -> None:
    state = {
        "format": MEMORY_STATE_FORMAT,
        "cursors": {session: [seq, digest] for session, (seq, digest) in cursors.items()},
        "listeners": {listener.name: listener.snapshot_state() for listener in listeners},
    }
    write_atomically(folder / MEMORY_STATE_FILE, dumps(state, classes))


class MemoryListeners:
    """The projector's memory listeners and the cursors their state covers; ``dirty`` while that state differs from
    what the state file holds (saved only then)."""

    def __init__(self, listeners: list[Any], folder: Path, classes: StateClasses) -> None:
        self.listeners, self.folder, self.classes = listeners, folder, classes
        self.cursors: Cursors = {}
        self.dirty = False

    def restore(self, warn: Any) -> None:
        """Load the state file (see :func:`load_memory_state`): what it covers, or nothing and ``dirty``."""
        restored = load_memory_state(self.folder, self.listeners, warn, self.classes)
        self.cursors = restored or {}
        self.dirty = restored is None and bool(self.listeners)

    def reset(self) -> None:
        """Start over (they cannot drop rows of one session or of a rolled-back transaction)."""
        for listener in self.listeners:
            listener.reset()
        self.cursors, self.dirty = {}, True

    def follows(self, starts: dict[str, int]) -> bool:
        """Whether a batch whose sessions start at ``starts`` (first seqs) continues exactly what they hold."""
        return all(self.cursors.get(s, (0, ""))[0] == first - 1 for s, first in starts.items())

    def feed(self, batch: ProjectionBatch, catalog: Any) -> None:
        for listener in self.listeners:
            listener.on_batch(batch, catalog)
        self.cursors.update(batch.cursors)
        self.dirty = True

    def gaps(self, cursors: Cursors) -> dict[str, tuple[int, int]]:
        """What to replay to reach ``cursors`` (the catalog's), ``session -> (first seq, last seq)``. A state that
        covers events the catalog lost starts over from the first event."""
        ahead = [s for s, (seq, _h) in self.cursors.items() if seq > cursors.get(s, (0, ""))[0]]
        if ahead:
            for listener in self.listeners:
                listener.reset()
            self.cursors = {}
        held = {s: seq for s, (seq, _h) in self.cursors.items()}
        return {s: (held.get(s, 0) + 1, seq) for s, (seq, _h) in cursors.items() if held.get(s, 0) < seq}

    def save(self) -> bool:
        """Write the state file when the state changed since it was last written; True when written."""
        if not self.listeners or not self.dirty:
            return False
        save_memory_state(self.folder, self.listeners, self.cursors, self.classes)
        self.dirty = False
        return True


# ---------------------------------------------------------------------- opening and catching up
def open_indexes(derived: DerivedStore, durable: list[Any], catalog_reset: bool) -> None:
    """Create or check the cursor table and every derived index's tables (a reset index loses its cursors: it is
    replayed from the log by :func:`catch_up_listeners`, never re-planned); with a reset catalog every index starts
    over too (indexes never hold more than the catalog)."""
    with derived.write() as db:
        db.execute(LISTENER_CURSOR_DDL)
        if catalog_reset:
            db.execute("DELETE FROM lst_cursors")
            for listener in durable:
                if derived.meta(f"schema:index:{listener.name}") is not None:
                    listener.drop_schema(db)
                    listener.create_schema(db)
    for listener in durable:
        name = listener.name
        migrate = getattr(listener, "migrate", None)  # an in-place upgrade of an older layout, when one is exact
        if derived.ensure_component(
            f"index:{name}", listener.schema_version, listener.create_schema, listener.drop_schema, migrate
        ):
            with derived.write() as db:
                db.execute("DELETE FROM lst_cursors WHERE listener = ?", (name,))
        listener.attach(derived)


def catch_up_listeners(
    log: Any,
    derived: DerivedStore,
    catalog: Any,
    extractors: ExtractorTable,
    durable: list[Any],
    memory: MemoryListeners,
) -> None:
    """Replay into each listener whatever the catalog holds that the listener does not (rare: a reset index,
    memory listeners restored from an older state file, another process's commit a memory listener did not see)."""
    cursors = catalog.cursors
    for listener in durable:
        done = listener_cursors(derived.reader(), listener.name)
        gaps = {s: (done.get(s, 0) + 1, seq) for s, (seq, _h) in cursors.items() if done.get(s, 0) < seq}
        for batch in replay_batches(log, catalog, gaps, extractors):
            with derived.write() as db:
                listener.apply(batch, db, catalog)
                write_listener_cursors(db, [(listener.name, batch.cursors)])
            listener.committed()
    if memory.listeners:
        for batch in replay_batches(log, catalog, memory.gaps(cursors), extractors):
            memory.feed(batch, catalog)
