"""Retrieval indexes on their own derived-state store, outside a projector (benchmarks, tests, tools).

In a memory, the projector owns ``derived.sqlite`` and writes every index inside its transactions
(:mod:`zaxy_agents.projection.listeners`). :func:`open_standalone` gives an index set the same life on a store of
its own: tables created (or rebuilt when their schema version changed), each batch one transaction with
``committed`` / ``rolled_back``, erasure followed by the store's scrub (VACUUM, WAL truncated).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import Any, Protocol

from zaxy_agents.storage.derived.store import DerivedStore


class Index(Protocol):
    """What :class:`StandaloneIndexes` drives (the projector's ``DerivedIndex`` protocol)."""

    name: str
    schema_version: int

    def create_schema(self, db: Any) -> None: ...

    def drop_schema(self, db: Any) -> None: ...

    def attach(self, store: Any) -> None: ...

    def apply(self, batch: Any, db: Any, catalog: Any) -> None: ...

    def committed(self) -> None: ...

    def rolled_back(self) -> None: ...

    def erase(self, db: Any, session: str, seqs: Sequence[int], envelopes: Any = None) -> None: ...


class StandaloneIndexes:
    """Indexes on a derived-state store of their own, fed batch by batch (``batch.searchable`` /
    ``batch.entities``)."""

    def __init__(self, folder: str | os.PathLike[str], indexes: Sequence[Index]) -> None:
        self.store = DerivedStore(folder)
        self.indexes = list(indexes)
        for index in self.indexes:
            self.store.ensure_component(f"index:{index.name}", index.schema_version, index.create_schema,
                                        index.drop_schema, getattr(index, "migrate", None))  # fmt: skip
            index.attach(self.store)

    def on_batch(self, batch: Any, catalog: Any = None) -> None:
        try:
            with self.store.write() as db:
                for index in self.indexes:
                    index.apply(batch, db, catalog)
        except BaseException:
            for index in self.indexes:
                index.rolled_back()
            raise
        for index in self.indexes:
            index.committed()

    def erase(self, session: str, seqs: Sequence[int], envelopes: Any = None) -> None:
        """Remove events from every index; no byte of their rows stays in the files afterwards."""
        with self.store.write() as db:
            for index in self.indexes:
                index.erase(db, session, seqs, envelopes)
        for index in self.indexes:
            index.committed()
        self.store.scrub()

    def close(self) -> None:
        for index in self.indexes:
            with contextlib.suppress(Exception):
                getattr(index, "close", lambda: None)()
        self.store.close()


def open_standalone(folder: str | os.PathLike[str], *indexes: Index) -> StandaloneIndexes:
    return StandaloneIndexes(folder, indexes)
