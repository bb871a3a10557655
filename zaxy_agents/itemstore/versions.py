"""Which events of the store's session name a key: the index a delete uses to find every version it must erase.

A LangGraph ``delete`` is real (``EraseService.erase_store_items``): every ``store.item.*`` event that names the key
(each put, chunk, TTL touch and the delete itself) is erased. Finding them by replaying the session costs its whole
history at every delete (~2.5 s for 20,000 puts on the slow VM of docs/benchmarks.md). This table lists, for every
``(namespace, key)``, the seqs of the events naming it that are not erased yet, so a delete reads only those lines.

It is derived state like the items (same file, same transaction, rebuilt with them from the log) and is only ever
a *locator*: the eraser re-reads every listed line and keeps those that really name the key, and replays the log's
tail past the file's position (events appended since, by any process), so a stale or lagging table can neither
erase another event nor leave a version unerased. A row is written for every ``store.item.*`` event whose payload
names a namespace of string labels -- what the replay it replaces matched, malformed events included -- and rows of
erased events go when the file meets the erasure record (or with the rebuild it triggers).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from .state import ns_text

SCHEMA = (
    "CREATE TABLE versions (ns TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (ns, key, seq))"
    " WITHOUT ROWID",
    "CREATE INDEX versions_seq ON versions (seq)",
)
ITEM_PREFIX = "store.item."


def named_key(payload: Any) -> tuple[str, str] | None:
    """``(namespace text, key)`` a store event's payload names, or ``None`` (not a namespace of string labels).

    The key is ``str(payload["key"])``, as the eraser compares it. Dotted namespace text may name two namespaces
    (a label holding a dot, which LangGraph forbids but a foreign writer could log): the eraser's re-check of
    each line keeps only the real matches, so the ambiguity only widens the candidates."""
    if not isinstance(payload, dict):
        return None
    namespace = payload.get("namespace")
    if not isinstance(namespace, list) or not all(isinstance(label, str) for label in namespace):
        return None
    return ns_text(tuple(namespace)), str(payload.get("key"))


def record(conn: sqlite3.Connection, seq: int, event_type: str, payload: Any) -> None:
    """Index one applied event (inside the follower's transaction)."""
    if event_type.startswith(ITEM_PREFIX):
        named = named_key(payload)
        if named is not None:
            conn.execute("INSERT OR IGNORE INTO versions VALUES (?, ?, ?)", (*named, seq))


def forget(conn: sqlite3.Connection, record_payload: Any) -> None:
    """Drop the rows of the events an ``eventloom.erased`` record's payload lists (its inclusive seq ranges)."""
    ranges = record_payload.get("ranges") if isinstance(record_payload, dict) else None
    pairs = [
        (item["from_seq"], item["to_seq"])
        for item in (ranges if isinstance(ranges, list) else [])
        if isinstance(item, dict) and isinstance(item.get("from_seq"), int) and isinstance(item.get("to_seq"), int)
    ]
    conn.executemany("DELETE FROM versions WHERE seq BETWEEN ? AND ?", pairs)


def clear(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM versions")


def seqs_of(conn: sqlite3.Connection, keys: Iterable[tuple[tuple[str, ...], str]]) -> list[int]:
    """The indexed seqs of events naming any of ``keys`` (``(namespace, key)``), ascending."""
    found: set[int] = set()
    for namespace, key in keys:
        rows = conn.execute("SELECT seq FROM versions WHERE ns = ? AND key = ?", (ns_text(namespace), key))
        found.update(seq for (seq,) in rows)
    return sorted(found)
