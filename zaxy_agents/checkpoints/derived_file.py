"""A checkpoint-wide SQLite file of derived state, opened on first use (a saver that never needs it writes none)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.storage.derived_sqlite import DerivedDatabase


class LazyDerivedFile:
    """``path`` as a :class:`DerivedDatabase` of ``kind`` / ``format_version`` / ``schema``, tied to ``prefix``
    and the deployment ``identity``; a file of another kind, format or log is rebuilt empty."""

    kind: str
    format_version: int
    schema: Sequence[str]

    def __init__(self, log: EventLog, path: Path, *, prefix: str, identity: str) -> None:
        self.log = log
        self.prefix = prefix
        self.path, self.identity = path, identity
        self._db: DerivedDatabase | None = None

    @property
    def db(self) -> DerivedDatabase:
        if self._db is None:
            self._db = DerivedDatabase(
                self.path, kind=self.kind, format_version=self.format_version, session=self.prefix,
                identity=self.identity, schema=self.schema,
            )  # fmt: skip
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
