"""``from_conn_string`` and ``setup()`` the way LangGraph's savers and stores spell them.

A migration from ``SqliteSaver.from_conn_string("checkpoints.db")`` or ``PostgresSaver.from_conn_string(DSN)``
is a one-line change: the connection string is an Eventloom folder, a ``postgresql://`` DSN, or ``":memory:"``
(a temporary folder removed on close, as SQLite's in-memory database disappears with its connection).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from zaxy_agents.config import BACKEND_JSONL
from zaxy_agents.errors import InvalidRequestError, SchemaMismatchError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.fabric.location import memory_in_folder

MEMORY = ":memory:"


def open_fabric(
    conn_string: str | os.PathLike[str], eventloom_path: str | os.PathLike[str] | None, settings: dict[str, Any]
) -> tuple[MemoryFabric, str | None]:
    """The fabric a connection string names, and a temporary folder to remove on close (``":memory:"``)."""
    if "backend" in settings:
        raise InvalidRequestError(
            "from_conn_string takes the backend from the connection string",
            field="backend",
            remediation="Pass a folder, ':memory:' or a postgresql:// DSN as the connection string.",
        )
    text = os.fspath(conn_string)
    if not isinstance(text, str) or not text.strip():
        raise InvalidRequestError(
            "the connection string is empty",
            field="conn_string",
            remediation="Pass an Eventloom folder (e.g. '.eventloom'), ':memory:' or a postgresql:// DSN.",
        )
    if "://" in text:  # a backend URI (postgresql://, memory://, ...): the storage registry says which
        return MemoryFabric.from_path(eventloom_path, backend=text, **settings), None
    if eventloom_path is not None:
        raise InvalidRequestError(
            "eventloom_path only applies to a PostgreSQL connection string",
            field="eventloom_path",
            remediation="The folder is the connection string itself: drop eventloom_path.",
        )
    temporary = tempfile.mkdtemp(prefix="zaxy-memory-") if text == MEMORY else None
    return MemoryFabric.from_path(temporary or text, backend=BACKEND_JSONL, **settings), temporary


def remove_temporary(folder: str | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def setup_backend(fabric: MemoryFabric) -> None:
    """Make sure the backend is ready to hold memory: the folder exists, or the PostgreSQL schema is current.

    Opening already creates both on first use (an embedded folder on the first write, the PostgreSQL schema in
    ``auto`` mode), so this is idempotent and cheap; it exists so ``saver.setup()`` keeps working after a
    migration, and it fails loudly when a PostgreSQL schema needs ``zaxy backend migrate``.
    """
    settings = fabric.settings
    if not memory_in_folder(settings):
        problems = fabric.backend_status().problems
        if problems:
            raise SchemaMismatchError(
                "; ".join(problems), field="backend", remediation="Run `zaxy backend migrate` against this server."
            )
        return
    os.makedirs(settings.eventloom_path, exist_ok=True)
