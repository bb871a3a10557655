"""Factories for LangGraph's Agent Server (``langgraph dev``, ``langgraph up`` and deployments).

``langgraph.json`` takes a custom checkpointer and store, each an async context manager::

    {
      "graphs": {"agent": "./agent.py:graph"},
      "checkpointer": {"path": "zaxy_agents.langgraph.server.checkpointer"},
      "store": {"path": "zaxy_agents.langgraph.server.store"}
    }

Both open the Eventloom the environment names (``ZAXY_EVENTLOOM_PATH``, else ``./.eventloom``; ``ZAXY_BACKEND``
for PostgreSQL, as every Zaxy entry point) and share one :class:`MemoryFabric` per process, so the server's
threads, checkpoints, store items and transcripts land in one memory that ``zaxy`` and Memory Checkout read.
The store takes ``index`` and ``ttl`` from the ``store`` section of ``langgraph.json`` (the server passes that
section in ``LANGGRAPH_STORE``). The yielded objects are the ``Async*`` classes: every async method runs its
file or database work in a worker thread, so the server's event loop never blocks (``langgraph dev`` refuses
blocking calls on it).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from zaxy_agents.fabric import MemoryFabric

from .checkpointer import AsyncZaxyCheckpointer
from .store import AsyncZaxyStore

STORE_CONFIG_ENV = "LANGGRAPH_STORE"

_lock = threading.Lock()
_shared: dict[str, Any] = {"fabric": None, "users": 0}


def _acquire() -> MemoryFabric:
    with _lock:
        if _shared["fabric"] is None:
            _shared["fabric"] = MemoryFabric.from_path()
        _shared["users"] += 1
        return _shared["fabric"]


def _release() -> None:
    with _lock:
        _shared["users"] -= 1
        if _shared["users"] == 0 and _shared["fabric"] is not None:
            _shared["fabric"].close()
            _shared["fabric"] = None


@asynccontextmanager
async def checkpointer() -> AsyncIterator[AsyncZaxyCheckpointer]:
    """The Agent Server's checkpointer: every thread a session ``langgraph.<thread_id>`` of the Eventloom."""
    fabric = _acquire()
    try:
        with AsyncZaxyCheckpointer(fabric) as saver:
            yield saver
    finally:
        _release()


@asynccontextmanager
async def store() -> AsyncIterator[AsyncZaxyStore]:
    """The Agent Server's long-term store (session ``langgraph-store``), with ``index`` / ``ttl`` from
    ``langgraph.json``."""
    settings = _store_settings()
    fabric = _acquire()
    try:
        with AsyncZaxyStore(fabric, index=settings.get("index"), ttl=settings.get("ttl")) as items:
            yield items
    finally:
        _release()


def _store_settings() -> dict[str, Any]:
    raw = os.environ.get(STORE_CONFIG_ENV)
    if not raw:
        return {}
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
