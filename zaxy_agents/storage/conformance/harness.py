"""Harnesses: one storage location per test, on each backend, for the conformance kit and the contract tests.

A harness opens the backend object (and plain logs) on its own fresh location, names the environment a child
process or the CLI needs to reach the same location, and — where the engine allows — reads or overwrites the
stored lines behind the log's back (to prove tampering is detected). What a backend cannot do raises
:class:`NotSupported`, which test runners report as a skip with the reason.
"""

from __future__ import annotations

import json
import tempfile
import unittest
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zaxy_agents.config import ZaxySettings
from zaxy_agents.eventloom.protocol import EventLog

from ..protocols import StorageBackend
from .postgres_server import POSTGRES_DSN_ENV, POSTGRES_SKIP_REASON, postgres_dsn

__all__ = [
    "POSTGRES_DSN_ENV",
    "POSTGRES_SKIP_REASON",
    "BackendHarness",
    "FilesHarness",
    "Harness",
    "MemoryHarness",
    "NotSupported",
    "PostgresHarness",
    "postgres_dsn",
    "postgres_schema",
]


class NotSupported(unittest.SkipTest):
    """This backend cannot do what the check needs (pytest and unittest report it as a skip)."""


class BackendHarness:
    """The default harness for any backend object: the kit's checks need only :meth:`backend`."""

    name = "backend"

    def __init__(self, backend: StorageBackend) -> None:
        self._backend = backend

    def backend(self) -> StorageBackend:
        """A backend object on this harness's location (call again for a reopened one)."""
        return self._backend

    def open(self, **kwargs: Any) -> EventLog:
        return self.backend().open_log()

    def env(self) -> dict[str, str]:
        raise NotSupported(f"the {self.name} harness cannot be reached from another process")

    def stored_lines(self, session: str) -> list[bytes]:
        raise NotSupported(f"the {self.name} harness cannot read stored lines behind the log's back")

    def rewrite(self, session: str, lines: list[bytes]) -> None:
        raise NotSupported(f"the {self.name} harness cannot tamper with stored lines")

    def replace_line(self, session: str, seq: int, line: bytes) -> None:
        """Overwrite the stored bytes of event ``seq`` (``line`` without its newline)."""
        lines = self.stored_lines(session)
        lines[seq - 1] = line + b"\n"
        self.rewrite(session, lines)

    def close(self) -> None:
        pass


class FilesHarness(BackendHarness):
    """The files backend: one JSONL file per session under ``root``."""

    name = "jsonl"  # what `zaxy backend status` calls it

    def __init__(self, root: Path) -> None:
        self.root = root

    def settings(self) -> ZaxySettings:
        return ZaxySettings.resolve(self.root, backend="jsonl")

    def backend(self) -> StorageBackend:
        from ..files.backend import FilesBackend

        return FilesBackend(self.settings())

    def open(self, **kwargs: Any) -> EventLog:
        from ..files.jsonl_log import JsonlEventLog

        return JsonlEventLog(self.root, **kwargs)

    def env(self) -> dict[str, str]:
        return {"ZAXY_BACKEND": "jsonl", "ZAXY_EVENTLOOM_PATH": str(self.root)}

    def stored_lines(self, session: str) -> list[bytes]:
        path = self.root / f"{session}.jsonl"
        return path.read_bytes().splitlines(keepends=True) if path.exists() else []

    def rewrite(self, session: str, lines: list[bytes]) -> None:
        """Replace the stored lines (each with its newline) as an attacker with file access would."""
        (self.root / f"{session}.jsonl").write_bytes(b"".join(lines))


JsonlHarness = FilesHarness  # the name the contract tests have always used


class MemoryHarness(BackendHarness):
    """The in-memory backend: one backend object per harness, so every ``open`` sees the same memory."""

    name = "memory"

    def __init__(self, root: Path | None = None) -> None:
        from ..memory.backend import MemoryBackend

        self.root = root or Path(tempfile.gettempdir())
        self._memory = MemoryBackend(ZaxySettings.resolve(self.root, backend="memory://"))

    def backend(self) -> StorageBackend:
        return self._memory

    def open(self, **kwargs: Any) -> EventLog:
        """The harness's one log (so every handle sees the same memory), with the options a handle may set."""
        from ..memory.log import MemoryEventLog

        log = self._memory.open_log()
        options = MemoryEventLog(**kwargs)  # validates them as a fresh log would
        log.durability, log.max_payload_bytes = options.durability, options.max_payload_bytes
        return log

    def env(self) -> dict[str, str]:
        raise NotSupported("memory:// lives in one process: this test needs a second process or the CLI")

    def stored_lines(self, session: str) -> list[bytes]:
        return list(self._memory.open_log().lines.get(session, []))

    def rewrite(self, session: str, lines: list[bytes]) -> None:
        self._memory.open_log().lines[session] = list(lines)

    def close(self) -> None:
        self._memory.close()


@contextmanager
def postgres_schema(monkeypatch: Any, *, select_backend: bool = False) -> Iterator[str]:
    """The test server's DSN, with a fresh schema selected in the environment and dropped afterwards.

    Skips when no server can be had. ``select_backend`` also points ``ZAXY_BACKEND`` at the server, for code
    that picks its backend from the environment (``ZaxyStore.from_path``, the CLI, child processes).
    """
    dsn = postgres_dsn()
    if dsn is None:
        raise NotSupported(POSTGRES_SKIP_REASON)
    harness = PostgresHarness(dsn)
    env = harness.env() if select_backend else {"ZAXY_POSTGRES_SCHEMA": harness.schema}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    try:
        yield dsn
    finally:
        harness.close()


class PostgresHarness(BackendHarness):
    """The PostgreSQL backend in a fresh schema of the test server (dropped afterwards)."""

    name = "postgresql"

    def __init__(self, dsn: str, schema: str | None = None, root: Path | None = None) -> None:
        import psycopg

        self.dsn = dsn
        self.schema = schema or f"zaxy_test_{uuid.uuid4().hex[:12]}"
        self.root = root or Path(tempfile.gettempdir()) / self.schema
        self._conn = psycopg.connect(dsn, autocommit=True)
        self._conn.execute("SET synchronous_commit = off")  # tampering needs no durability, tests need speed

    def backend(self) -> StorageBackend:
        from ..postgres.backend import PostgresBackend

        return PostgresBackend(ZaxySettings.resolve(self.root, backend=self.dsn), schema=self.schema)

    def open(self, **kwargs: Any) -> EventLog:
        from ..postgres.log import PostgresEventLog

        return PostgresEventLog(self.dsn, schema=self.schema, **kwargs)

    def env(self) -> dict[str, str]:
        return {"ZAXY_BACKEND": self.dsn, "ZAXY_POSTGRES_SCHEMA": self.schema}

    def execute(self, query: str, params: tuple[Any, ...] | None = None) -> list[tuple[Any, ...]]:
        """Run SQL with ``{schema}`` replaced by this harness's schema (for tampering and inspection)."""
        cursor = self._conn.execute(query.replace("{schema}", f'"{self.schema}"'), params)  # type: ignore[arg-type]
        return cursor.fetchall() if cursor.description else []

    def stored_lines(self, session: str) -> list[bytes]:
        rows = self.execute("SELECT line FROM {schema}.eventloom_events WHERE session = %s ORDER BY seq", (session,))
        return [bytes(row[0]) + b"\n" for row in rows]

    def rewrite(self, session: str, lines: list[bytes]) -> None:
        """Make row n hold the n-th line and DELETE rows past the end, as an attacker with SQL access would."""
        for seq, line in enumerate(lines, start=1):
            self.replace_line(session, seq, line[:-1] if line.endswith(b"\n") else line)
        self.execute("DELETE FROM {schema}.eventloom_events WHERE session = %s AND seq > %s", (session, len(lines)))

    def replace_line(self, session: str, seq: int, line: bytes) -> None:
        """UPDATE the stored bytes of event ``seq`` (``line`` without its newline).

        A careful attacker also makes the queryable columns agree with the new line when it still parses, so
        the test exercises the hash chain itself rather than the column cross-check.
        """
        try:
            envelope = json.loads(line)
            columns = (envelope["hash"], envelope["prev_hash"], envelope["id"], envelope["type"], envelope["actor"])
            if not all(isinstance(value, str) for value in columns):
                raise TypeError
        except (ValueError, TypeError, KeyError):
            self.execute(
                "UPDATE {schema}.eventloom_events SET line = %s WHERE session = %s AND seq = %s", (line, session, seq)
            )
            return
        self.execute(
            "UPDATE {schema}.eventloom_events SET line = %s, hash = %s, prev_hash = %s, event_id = %s, type = %s, "
            "actor = %s WHERE session = %s AND seq = %s",
            (line, *columns, session, seq),
        )

    def close(self) -> None:
        self.execute("DROP SCHEMA IF EXISTS {schema} CASCADE")
        self._conn.close()


Harness = FilesHarness | PostgresHarness | MemoryHarness


@contextmanager
def harness_for(name: str, root: Path) -> Iterator[BackendHarness]:
    """A fresh harness of the built-in backend ``name`` (``jsonl``/``files``, ``postgresql``, ``memory``) under
    ``root``; raises :class:`NotSupported` when PostgreSQL cannot be had."""
    if name == "postgresql":
        dsn = postgres_dsn()
        if dsn is None:
            raise NotSupported(POSTGRES_SKIP_REASON)
        harness: BackendHarness = PostgresHarness(dsn, root=root)
    elif name == "memory":
        harness = MemoryHarness(root)
    else:
        harness = FilesHarness(root / "eventloom")
    try:
        yield harness
    finally:
        harness.close()
