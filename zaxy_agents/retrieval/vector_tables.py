"""The SQLite side of the vector index: its tables in the derived-state database and the lookups over them.

Why a module of its own: :mod:`.vector_index` is about vectors (embedding, the memory-mapped rows, exact and ANN
search); which ``(session, seq)`` sits in which row, and how session names map to the small ids the row keys
carry, is table bookkeeping both its write and read paths share. Tables ``vectors_*``: ``model`` (dims, rows,
rows the ANN graph covers, last durable id synced), ``meta``, ``session``, ``key`` (model, session, seq -> row),
``pending`` (the embedding queue).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

PREFIX = "vectors"
EventKey = tuple[str, int]


def schema() -> list[str]:
    """The tables' DDL (``IF NOT EXISTS``: run on every open)."""
    p = PREFIX
    return [
        f"CREATE TABLE IF NOT EXISTS {p}_model(model TEXT PRIMARY KEY, dims INTEGER NOT NULL, rows INTEGER NOT NULL, "
        "ann_rows INTEGER NOT NULL, synced_id INTEGER NOT NULL)",
        f"CREATE TABLE IF NOT EXISTS {p}_meta(key TEXT PRIMARY KEY, value TEXT)",
        f"CREATE TABLE IF NOT EXISTS {p}_session(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
        f"CREATE TABLE IF NOT EXISTS {p}_key(model TEXT NOT NULL, session INTEGER NOT NULL, seq INTEGER NOT NULL, "
        "row INTEGER NOT NULL, PRIMARY KEY(model, session, seq)) WITHOUT ROWID",
        f"CREATE TABLE IF NOT EXISTS {p}_pending(id INTEGER PRIMARY KEY, session TEXT NOT NULL, seq INTEGER NOT NULL)",
        f"CREATE INDEX IF NOT EXISTS {p}_pending_key ON {p}_pending(session, seq)",
    ]


def session_ids(db: sqlite3.Connection, names: Iterable[str], create: bool = True) -> dict[str, int]:
    """Session name -> id (new names get one when ``create``)."""
    ordered = sorted(set(names))
    found: dict[str, int] = {}
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        sql = f"SELECT name, id FROM {PREFIX}_session WHERE name IN ({','.join('?' * len(chunk))})"
        found.update(db.execute(sql, chunk).fetchall())
    for name in ordered:
        if name not in found and create:
            cursor = db.execute(f"INSERT INTO {PREFIX}_session(name) VALUES (?)", (name,))
            assert cursor.lastrowid is not None
            found[name] = cursor.lastrowid
    return found


def session_names(db: sqlite3.Connection, ids: set[int]) -> dict[int, str]:
    """Session id -> name."""
    if not ids:
        return {}
    marks = ",".join(str(i) for i in ids)
    return dict(db.execute(f"SELECT id, name FROM {PREFIX}_session WHERE id IN ({marks})").fetchall())


def rows_of(db: sqlite3.Connection, model_id: str | None, keys: Sequence[EventKey]) -> dict[EventKey, int]:
    """The vector row of each of ``keys`` that has one in ``model_id``'s files."""
    sessions = session_ids(db, {session for session, _ in keys}, create=False)
    by_id = {value: name for name, value in sessions.items()}
    out: dict[EventKey, int] = {}
    grouped: dict[int, list[int]] = {}
    for session, seq in keys:
        if session in sessions:
            grouped.setdefault(sessions[session], []).append(seq)
    for session_id, seqs in grouped.items():
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for seq, row in db.execute(
                f"SELECT seq, row FROM {PREFIX}_key WHERE model = ? AND session = ? AND seq IN ({marks})",
                [model_id, session_id, *chunk],
            ):
                out[(by_id[session_id], seq)] = row
    return out
