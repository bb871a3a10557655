"""Test harnesses that let one contract suite run against every Eventloom backend.

A harness opens logs on its storage, names the environment a child process or the CLI needs to reach the
same storage, and can read or overwrite the stored lines behind the log's back (to simulate tampering).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from zaxy_agents.eventloom.protocol import EventLog

POSTGRES_DSN_ENV = "ZAXY_TEST_POSTGRES_DSN"
POSTGRES_SKIP_REASON = (
    "PostgreSQL backend not configured: export ZAXY_TEST_POSTGRES_DSN=postgresql://user:pass@127.0.0.1/db "
    "(.ci/run starts a local server and sets it)"
)


def postgres_dsn() -> str | None:
    return os.environ.get(POSTGRES_DSN_ENV) or None


@contextmanager
def postgres_schema(monkeypatch: pytest.MonkeyPatch, *, select_backend: bool = False) -> Iterator[str]:
    """The test server's DSN, with a fresh schema selected in the environment and dropped afterwards.

    Skips the test when no server is configured. ``select_backend`` also points ``ZAXY_BACKEND`` at the server,
    for code that picks its backend from the environment (``ZaxyStore.from_path``, the CLI, child processes).
    """
    dsn = postgres_dsn()
    if dsn is None:
        pytest.skip(POSTGRES_SKIP_REASON)
    harness = PostgresHarness(dsn)
    env = harness.env() if select_backend else {"ZAXY_POSTGRES_SCHEMA": harness.schema}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    try:
        yield dsn
    finally:
        harness.close()


class JsonlHarness:
    """The embedded backend: one JSONL file per session under ``root``."""

    name = "jsonl"

    def __init__(self, root: Path) -> None:
        self.root = root

    def open(self, **kwargs: Any) -> EventLog:
        from zaxy_agents.storage.files.jsonl_log import JsonlEventLog

        return JsonlEventLog(self.root, **kwargs)

    def env(self) -> dict[str, str]:
        return {"ZAXY_BACKEND": "jsonl", "ZAXY_EVENTLOOM_PATH": str(self.root)}

    def stored_lines(self, session: str) -> list[bytes]:
        path = self.root / f"{session}.jsonl"
        return path.read_bytes().splitlines(keepends=True) if path.exists() else []

    def rewrite(self, session: str, lines: list[bytes]) -> None:
        """Replace the stored lines (each with its newline) as an attacker with file access would."""
        (self.root / f"{session}.jsonl").write_bytes(b"".join(lines))

    def replace_line(self, session: str, seq: int, line: bytes) -> None:
        """Overwrite the stored bytes of event ``seq`` (``line`` without its newline)."""
        lines = self.stored_lines(session)
        lines[seq - 1] = line + b"\n"
        self.rewrite(session, lines)

    def close(self) -> None:
        pass


class PostgresHarness:
    """The PostgreSQL backend in a fresh schema of the test server (dropped afterwards)."""

    name = "postgresql"

    def __init__(self, dsn: str, schema: str | None = None) -> None:
        import psycopg

        self.dsn = dsn
        self.schema = schema or f"zaxy_test_{uuid.uuid4().hex[:12]}"
        self._conn = psycopg.connect(dsn, autocommit=True)
        self._conn.execute("SET synchronous_commit = off")  # tampering needs no durability, tests need speed

    def open(self, **kwargs: Any) -> EventLog:
        from zaxy_agents.storage.postgres.log import PostgresEventLog

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


Harness = JsonlHarness | PostgresHarness
