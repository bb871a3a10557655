"""One chunk of events planned and committed in one SQLite transaction: catalog rows, every derived index's rows
and the cursors they cover.

Why its own object: this is the write half of the projector (:class:`~.projector.Projector` decides *what* to
project — which sessions, from which cursor, when to reset or erase — and this writes it). It owns the planner,
whose overlay holds what the open transaction planned, so the planner's life follows the transactions: a rollback
or a reset makes a new one. The projector's catch-up and a rebuild (:mod:`.rebuild`) both commit through
:meth:`ChunkCommitter.commit`; it is paid once per chunk on the one-event path, so it stays one call deep.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from typing import Any

from zaxy_agents.sharing.election import pid_alive
from zaxy_agents.storage.derived.store import DerivedStore, DerivedStoreBusy

from .collector import collector_paused
from .listeners import write_listener_cursors
from .planner import ProjectionBatch, ProjectionPlanner
from .rebuild import REBUILD_KEY, Chunk, RebuildControl
from .sqlite_catalog import SqliteCatalog


class _CatalogState:
    """The planner's view of the catalog inside a write transaction."""

    def __init__(self, catalog: SqliteCatalog, db: sqlite3.Connection) -> None:
        self.catalog, self.db = catalog, db

    def key_states(self, keys: Any) -> Any:
        return self.catalog.key_states(keys, self.db)

    def sources_present(self, ids: Any) -> set[str]:
        return self.catalog.sources_present(ids, self.db)


class ChunkCommitter:
    """Plans chunks on the committed state and writes them, for one projector.

    ``durable`` (the derived indexes) and ``offloaded`` (indexes a rebuild's worker process builds: left out here)
    are the projector's own collections, shared, not copied. ``hand_on`` gives a committed batch to the in-memory
    listeners and the graph. After damage recovery the projector points :attr:`derived` and :attr:`catalog` at the
    new ones (:meth:`retarget`)."""

    def __init__(
        self,
        derived: DerivedStore,
        catalog: SqliteCatalog,
        durable: list[Any],
        offloaded: set[str],
        control: RebuildControl,
        hand_on: Callable[[ProjectionBatch], None],
    ) -> None:
        self.derived, self.catalog = derived, catalog
        self.durable, self.offloaded, self.control, self.hand_on = durable, offloaded, control, hand_on
        self.new_planner()

    def new_planner(self) -> None:
        """Forget what the planner holds (its overlay held uncommitted state, or the tables changed under it)."""
        self.planner = ProjectionPlanner()
        self.planner_fresh = True

    def retarget(self, derived: DerivedStore, catalog: SqliteCatalog) -> None:
        """Write into a recreated derived store and its catalog (the old file was damaged), with a new planner."""
        self.derived, self.catalog = derived, catalog
        self.new_planner()

    def commit(
        self, session: str, expected: tuple[int, str] | None, chunk: Chunk, hand_on: bool = True
    ) -> ProjectionBatch | None:
        """One transaction: plan ``chunk`` on the committed state, write catalog + indexes + cursors; then (with
        ``hand_on``) give the batch to the in-memory listeners and the graph.

        Returns the committed batch, or ``None`` when another process
        projected the session meanwhile. The cyclic garbage collector is paused meanwhile (``collector.py``: it
        walked every live object and freed nothing).
        """
        with collector_paused():
            return self._commit_chunk(session, expected, chunk, hand_on)

    def _commit_chunk(
        self,
        session: str,
        expected: tuple[int, str] | None,
        chunk: Chunk,
        hand_on: bool,
    ) -> ProjectionBatch | None:
        try:
            with self.derived.write() as db:
                rebuilding, row, done, generation = self._positions(db, session)
                if rebuilding and rebuilding != str(os.getpid()) and pid_alive(int(rebuilding)):
                    raise DerivedStoreBusy(f"`zaxy reproject` (pid {rebuilding}) is rebuilding this memory")
                if row != (tuple(expected) if expected else None):
                    self.catalog.refresh()
                    return None
                if self.planner_fresh:
                    self.planner.labels = {r[0] for r in db.execute("SELECT label FROM cat_labels")}
                    self.planner_fresh = False
                if row is None:
                    self.planner.sessions.discard(session)
                else:
                    self.planner.sessions.add(session)
                self.planner.prefetch(chunk, _CatalogState(self.catalog, db))
                for position, (envelope, extraction) in enumerate(chunk):
                    if position % 100 == 0:
                        self.control.check()  # a rebuild's Ctrl-C: this transaction is rolled back
                    self.planner.add(envelope, extraction)
                batch = self.planner.take_batch()
                self.control.check()
                self.catalog.apply(db, batch, generation)
                advanced: list[tuple[str, Any]] = []
                base = expected[0] if expected else 0  # an index at the catalog's cursor takes the whole batch
                for listener in self.durable:
                    self.control.check()
                    if listener.name in self.offloaded:
                        continue
                    seq = done.get(listener.name)
                    part = batch if seq is None or seq == base else batch.after(session, seq)
                    if part.event_count:
                        listener.apply(part, db, self.catalog)
                        advanced.append((listener.name, part.cursors))
                write_listener_cursors(db, advanced)
        except BaseException:
            self.new_planner()  # its overlay held uncommitted state
            for listener in self.durable:
                listener.rolled_back()
            raise
        self.planner.forget()
        for listener in self.durable:
            listener.committed()
        if hand_on:  # (a rebuild hands a group's batches on once the group commits)
            self.hand_on(batch)
        return batch

    def _positions(
        self, db: sqlite3.Connection, session: str
    ) -> tuple[str | None, tuple[int, str] | None, dict[str, int], int]:
        """In one statement (this is paid by every one-event catch-up): the pid of a running `zaxy reproject`, the
        catalog's cursor of ``session``, the seq each derived index holds of it (read once: applying the catalog
        or one index never moves another index's cursor) and ``PRAGMA data_version`` inside this transaction (the
        catalog drops its remembered ids when another connection committed: catalog_ids.py)."""
        names = [listener.name for listener in self.durable]
        marks = ",".join("?" * len(names))
        rows = db.execute(
            "SELECT 0, value, NULL FROM meta WHERE key = ? UNION ALL "
            "SELECT 1, hash, seq FROM cat_cursors WHERE session = ? UNION ALL "
            f"SELECT 2, listener, seq FROM lst_cursors WHERE listener IN ({marks}) AND session = ? UNION ALL "
            "SELECT 3, NULL, data_version FROM pragma_data_version",
            (REBUILD_KEY, session, *names, session),
        ).fetchall()
        rebuilding: str | None = None
        cursor: tuple[int, str] | None = None
        done: dict[str, int] = {}
        generation = -1
        for kind, text, seq in rows:
            if kind == 0:
                rebuilding = str(text)
            elif kind == 1:
                cursor = (int(seq), str(text))
            elif kind == 2:
                done[str(text)] = int(seq)
            else:
                generation = int(seq)
        return rebuilding, cursor, done, generation
