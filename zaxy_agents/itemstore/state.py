"""Live items, ordered and indexed, in an SQLite file: the state that ``store.item.*`` events materialise into.

Opening reads nothing but the file's header, whatever the store's history; a get is one indexed lookup. The
file is derived state (see :mod:`zaxy_agents.storage.derived_sqlite`): rebuilt from the log when missing,
damaged, of another format, or built from a log that no longer matches.

Ordering follows InMemoryStore: namespaces in the order they (re)appeared, items in the order their key was
first put (an update keeps its place; a delete and re-put moves it to the end). Namespaces that lose their
last item disappear (InMemoryStore keeps empty ones around and lists them; we do not). Values are kept as
JSON text in the caller's key order.

Filters run where the items lie: each top-level equality or range condition on a field becomes a condition
on ``json_extract`` over an expression index created the first time the field is filtered on (at most
``MAX_FIELD_INDEXES`` fields), which selects a superset of the matches; :func:`~.filters.matches` then decides
exactly, so the semantics are the documented ones whatever SQLite's typing would say.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, Literal

from .filters import RANGE_OPERATORS, is_number, matches
from .records import ItemRecord

FORMAT_VERSION = 2  # 2: the versions table (:mod:`.versions`), items_seq; a file of format 1 is rebuilt from the log
MAX_FIELD_INDEXES = 16
_EXACT_INT = 2**53  # numbers beyond this are compared in Python only (SQLite would round them)
_MAX_IN = 500  # more matching namespaces than this: a range condition on the dotted name instead
_SAFE_FIELD = re.compile(r"^[A-Za-z0-9_\- ]{1,100}$")
_SQL_OPERATORS = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
_COLUMNS = (
    "uid, ns, key, value, idx, created_at, updated_at, ns_birth, birth, seq, ttl, expires_at, persisted_expires_at"
)

SCHEMA = (
    "CREATE TABLE namespaces (ns TEXT PRIMARY KEY, birth INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE items ("
    " uid INTEGER PRIMARY KEY, ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, idx TEXT,"
    " created_at TEXT NOT NULL, updated_at TEXT NOT NULL, ns_birth INTEGER NOT NULL, birth INTEGER NOT NULL,"
    " seq INTEGER NOT NULL, ttl REAL, expires_at REAL, persisted_expires_at REAL, UNIQUE (ns, key))",
    "CREATE INDEX items_order ON items (ns_birth, birth)",
    "CREATE INDEX items_expiry ON items (expires_at) WHERE expires_at IS NOT NULL",
    "CREATE INDEX items_seq ON items (seq)",  # derives_from: one lookup per erased range, not a scan (format 2)
    "CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
    "INSERT INTO counters VALUES ('birth', 0)",
)


def ns_text(namespace: tuple[str, ...]) -> str:
    """LangGraph forbids ``.`` in namespace labels, so the dotted form is unambiguous (as in SqliteStore)."""
    return ".".join(namespace)


def ns_tuple(text: str) -> tuple[str, ...]:
    return tuple(text.split(".")) if text else ()


class ItemState:
    """Reads and writes of the items table. The caller holds the store's lock; writes run inside the
    follower's transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._indexed_fields: set[str] | None = None
        # Positions carried over a rebuild (see clear): namespace -> birth, (namespace, key) -> birth.
        self._carried_ns: dict[str, int] = {}
        self._carried_items: dict[tuple[str, str], int] = {}

    def __len__(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM items").fetchone()[0])

    def clear(self) -> None:
        """Empty the tables for a rebuild from the log, remembering where the live namespaces and items stood.

        An erasure rebuilds the items from the scrubbed log, and the erased events are gone from it: a namespace
        first created by an item that was later deleted (and erased) would otherwise move behind namespaces
        created after it, though it never became empty (InMemoryStore keeps its place). So the rebuild gives each
        namespace and item that was live before it the position it had (until :meth:`settle`); the counter
        keeps counting, so anything new still comes after them. Only live names are remembered, in memory."""
        self._carried_ns = dict(self.conn.execute("SELECT ns, birth FROM namespaces").fetchall())
        self._carried_items = {
            (ns, key): birth for ns, key, birth in self.conn.execute("SELECT ns, key, birth FROM items")
        }
        for table in ("items", "namespaces"):
            self.conn.execute(f"DELETE FROM {table}")

    def settle(self) -> None:
        """The rebuild is over: forget the carried positions."""
        self._carried_ns, self._carried_items = {}, {}

    # ------------------------------------------------------------------ mutation (inside a transaction)
    def get(self, namespace: tuple[str, ...], key: str) -> ItemRecord | None:
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM items WHERE ns = ? AND key = ?", (ns_text(namespace), key)
        ).fetchone()
        return None if row is None else _record(row)

    def upsert(
        self,
        namespace: tuple[str, ...],
        key: str,
        value_json: str,
        at: str,
        *,
        index: Literal[False] | list[str] | None,
        seq: int,
        ttl_minutes: float | None,
        expires_at: float | None,
    ) -> int:
        """Insert or update; an update keeps ``created_at``, uid and position. Returns the uid."""
        ns = ns_text(namespace)
        idx = json.dumps(index)
        updated = self.conn.execute(
            "UPDATE items SET value = ?, idx = ?, updated_at = ?, seq = ?, ttl = ?, expires_at = ?,"
            " persisted_expires_at = ? WHERE ns = ? AND key = ? RETURNING uid",
            (value_json, idx, at, seq, ttl_minutes, expires_at, expires_at, ns, key),
        ).fetchone()
        if updated is not None:
            return int(updated[0])
        birth = self.conn.execute("SELECT birth FROM namespaces WHERE ns = ?", (ns,)).fetchone()
        if birth is None:
            ns_birth = self._carried_ns.get(ns) or self._next_birth()
            self.conn.execute("INSERT INTO namespaces VALUES (?, ?)", (ns, ns_birth))
        else:
            ns_birth = int(birth[0])
        item_birth = self._carried_items.get((ns, key)) or self._next_birth()
        row = self.conn.execute(
            "INSERT INTO items (ns, key, value, idx, created_at, updated_at, ns_birth, birth, seq, ttl, expires_at,"
            " persisted_expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING uid",
            (ns, key, value_json, idx, at, at, ns_birth, item_birth, seq, ttl_minutes, expires_at, expires_at),
        ).fetchone()
        return int(row[0])

    def _next_birth(self) -> int:
        return int(
            self.conn.execute("UPDATE counters SET value = value + 1 WHERE name = 'birth' RETURNING value").fetchone()[
                0
            ]
        )

    def remove(self, namespace: tuple[str, ...], key: str) -> int | None:
        """Delete an item (and its namespace when it was the last); returns its uid."""
        ns = ns_text(namespace)
        row = self.conn.execute("DELETE FROM items WHERE ns = ? AND key = ? RETURNING uid", (ns, key)).fetchone()
        if row is None:
            return None
        if self.conn.execute("SELECT 1 FROM items WHERE ns = ? LIMIT 1", (ns,)).fetchone() is None:
            self.conn.execute("DELETE FROM namespaces WHERE ns = ?", (ns,))
        return int(row[0])

    def touch(self, namespace: tuple[str, ...], key: str, expires_at: float) -> None:
        """A persisted TTL refresh: the expiry only moves forward."""
        self.conn.execute(
            "UPDATE items SET persisted_expires_at = ?,"
            " expires_at = CASE WHEN expires_at IS NULL OR expires_at < ? THEN ? ELSE expires_at END"
            " WHERE ns = ? AND key = ?",
            (expires_at, expires_at, expires_at, ns_text(namespace), key),
        )

    def refresh(self, record: ItemRecord) -> None:
        """A read refreshed the expiry (kept in the derived state; the log gets coalesced touches)."""
        self.conn.execute("UPDATE items SET expires_at = ? WHERE uid = ?", (record.expires_at, record.uid))

    # ------------------------------------------------------------------ reading
    def by_uids(self, uids: list[int]) -> dict[int, ItemRecord]:
        found: dict[int, ItemRecord] = {}
        for start in range(0, len(uids), 500):
            batch = uids[start : start + 500]
            marks = ",".join("?" * len(batch))
            for row in self.conn.execute(f"SELECT {_COLUMNS} FROM items WHERE uid IN ({marks})", batch):
                record = _record(row)
                found[record.uid] = record
        return found

    def all_records(self) -> Iterator[ItemRecord]:
        for row in self.conn.execute(f"SELECT {_COLUMNS} FROM items ORDER BY ns_birth, birth"):
            yield _record(row)

    def expired(self, now: float) -> list[tuple[tuple[str, ...], str]]:
        rows = self.conn.execute("SELECT ns, key FROM items WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,))
        return [(ns_tuple(ns), key) for ns, key in rows]

    def namespaces(self, live_at: float | None = None) -> list[tuple[str, ...]]:
        """Namespaces holding items (with ``live_at``: an item not expired at that time)."""
        if live_at is None:
            rows = self.conn.execute("SELECT ns FROM namespaces")
        else:
            rows = self.conn.execute(
                "SELECT DISTINCT ns FROM items WHERE expires_at IS NULL OR expires_at > ?", (live_at,)
            )
        return [ns_tuple(row[0]) for row in rows]

    def namespace_births(self, prefix: tuple[str, ...]) -> list[int]:
        where, params = _prefix_condition(prefix)
        return [int(row[0]) for row in self.conn.execute(f"SELECT birth FROM namespaces WHERE {where}", params)]

    def _prefix(self, prefix: tuple[str, ...]) -> tuple[str, list[Any]] | None:
        """The prefix as ``ns_birth IN (...)`` (so SQLite walks the order index and stops early), or ``None``
        when no namespace matches."""
        if not prefix:
            return "1", []
        births = self.namespace_births(prefix)
        if not births:
            return None
        if len(births) > _MAX_IN:
            return _prefix_condition(prefix)
        return f"ns_birth IN ({','.join('?' * len(births))})", births

    def scan(self, prefix: tuple[str, ...]) -> Iterator[ItemRecord]:
        """Every item under ``prefix`` in order."""
        chosen = self._prefix(prefix)
        if chosen is None:
            return
        where, params = chosen
        for row in self.conn.execute(f"SELECT {_COLUMNS} FROM items WHERE {where} ORDER BY ns_birth, birth", params):
            yield _record(row)

    def select(
        self,
        prefix: tuple[str, ...],
        filter: Mapping[str, Any] | None,
        *,
        stop: int | None = None,
        keep: Callable[[ItemRecord], bool] | None = None,
    ) -> list[ItemRecord]:
        """Items under ``prefix`` matching ``filter`` (and ``keep``), in order; at most ``stop`` of them."""
        chosen = self._prefix(prefix)
        if chosen is None:
            return []
        where, params = chosen
        if filter:
            conditions, extra = self._filter_conditions(filter)
            if conditions:  # let SQLite pick the field index (``+`` keeps it off the order index), then sort
                where = " AND ".join([where.replace("ns_birth IN", "+ns_birth IN", 1), *conditions])
                params = [*params, *extra]
        cursor = self.conn.execute(f"SELECT {_COLUMNS} FROM items WHERE {where} ORDER BY ns_birth, birth", params)
        selected: list[ItemRecord] = []
        for row in cursor:
            record = _record(row)
            if (not filter or matches(record.value, filter)) and (keep is None or keep(record)):
                selected.append(record)
                if stop is not None and len(selected) >= stop:
                    break
        cursor.close()
        return selected

    def _filter_conditions(self, filter: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
        """SQL conditions that every match satisfies (a superset; ``matches`` decides exactly)."""
        conditions: list[str] = []
        params: list[Any] = []
        for field, expected in filter.items():
            if not isinstance(field, str) or not _SAFE_FIELD.fullmatch(field):
                continue
            if isinstance(expected, Mapping):
                if set(expected) == {"$eq"} and _sql_scalar(expected["$eq"]):
                    conditions.append(f"{self._field(field)} = ?")
                    params.append(expected["$eq"])
                    continue
                for operator, operand in expected.items():
                    if operator in RANGE_OPERATORS and _sql_scalar(operand) and not isinstance(operand, bool):
                        conditions.append(f"{self._field(field)} {_SQL_OPERATORS[operator]} ?")
                        params.append(operand)
            elif _sql_scalar(expected):
                conditions.append(f"{self._field(field)} = ?")
                params.append(expected)
        return conditions, params

    def _field(self, field: str) -> str:
        """``json_extract`` of a top-level field, over an expression index made on first use."""
        expression = f"json_extract(value, '$.\"{field}\"')"
        indexed = self._indexed_fields
        if indexed is None:
            names = self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'field_%'")
            indexed = self._indexed_fields = {row[0] for row in names}
        name = "field_" + hashlib.sha256(field.encode()).hexdigest()[:16]
        if name not in indexed and len(indexed) < MAX_FIELD_INDEXES:
            self.conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON items ({expression})")
            indexed.add(name)
        return expression

    def derives_from(self, ranges: list[tuple[int, int]]) -> bool:
        """Whether a live item was last written by an event in one of ``ranges`` (inclusive): only then must an
        erasure rebuild the items; a deleted item's row is gone already (zeroed by ``secure_delete``)."""
        return any(
            self.conn.execute("SELECT 1 FROM items WHERE seq BETWEEN ? AND ? LIMIT 1", (first, last)).fetchone()
            for first, last in ranges
        )

    def forget_indexes(self) -> None:
        self._indexed_fields = None


def _sql_scalar(value: Any) -> bool:
    """Scalars SQLite compares exactly like :func:`~.filters.json_equal` / ``range_holds`` (or more loosely)."""
    if isinstance(value, (bool, str)):
        return True
    return is_number(value) and value == value and -_EXACT_INT <= value <= _EXACT_INT


def _prefix_condition(prefix: tuple[str, ...]) -> tuple[str, list[Any]]:
    if not prefix:
        return "1", []
    text = ns_text(prefix)
    return "(ns = ? OR (ns > ? AND ns < ?))", [text, text + ".", text + "/"]  # '/' follows '.'


def _record(row: tuple[Any, ...]) -> ItemRecord:
    uid, ns, key, value, idx, created, updated, ns_birth, birth, seq, ttl, expires, persisted = row
    return ItemRecord(
        uid=uid,
        namespace=ns_tuple(ns),
        key=key,
        value=json.loads(value),
        created_at=datetime.fromisoformat(created),
        updated_at=datetime.fromisoformat(updated),
        order=(ns_birth, birth),
        index=json.loads(idx) if idx else None,
        seq=seq,
        ttl_minutes=ttl,
        expires_at=expires,
        persisted_expires_at=persisted,
    )
