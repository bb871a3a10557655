"""A derived SQLite file's open reads its meta rows once, and the follower's first check reuses them.

``DerivedDatabase`` reads the meta rows to accept a file (kind, format, session, log identity); the follower's
first plain check ("is anything new?") takes the position from those rows instead of reading them again. The
rows may be stale by then: these tests move the file or the log on between the open and the first check and show
that nothing is applied twice, missed, or served from a file that no longer matches its log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from zaxy_agents.storage.derived_sqlite import DerivedDatabase, DerivedFollower
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog

SESSION = "views"


def _open(path: Path, log: JsonlEventLog) -> tuple[DerivedDatabase, DerivedFollower]:
    db = DerivedDatabase(
        path,
        kind="test-view",
        format_version=1,
        session=SESSION,
        identity="this-log",
        schema=["CREATE TABLE rows (seq INTEGER NOT NULL, text TEXT NOT NULL)"],
    )

    def apply(seq: int, _type: str, _timestamp: str, payload: dict[str, Any]) -> bool:
        db.conn.execute("INSERT INTO rows VALUES (?, ?)", (seq, payload["text"]))
        return True

    def reset() -> None:
        db.conn.execute("DELETE FROM rows")

    return db, DerivedFollower(log, db, apply, reset)


def _rows(db: DerivedDatabase) -> list[tuple[int, str]]:
    return db.conn.execute("SELECT seq, text FROM rows ORDER BY rowid").fetchall()


def _append(log: JsonlEventLog, *texts: str) -> None:
    for text in texts:
        log.append(SESSION, "note.added", {"text": text})


def test_the_first_check_reuses_the_rows_the_open_read(tmp_path: Path) -> None:
    with JsonlEventLog(tmp_path / "log") as log:
        _append(log, "a", "b")
        db, follower = _open(tmp_path / "view.sqlite3", log)
        follower.catch_up()
        db.close()
        db, follower = _open(tmp_path / "view.sqlite3", log)
        statements: list[str] = []
        db.conn.set_trace_callback(statements.append)
        follower.catch_up()
        assert statements == []  # current: no statement at all
        assert _rows(db) == [(1, "a"), (2, "b")]
        db.close()


def test_a_file_caught_up_by_another_handle_after_the_open_is_not_applied_again(tmp_path: Path) -> None:
    path = tmp_path / "view.sqlite3"
    with JsonlEventLog(tmp_path / "log") as log:
        _append(log, "a", "b")
        first, follower = _open(path, log)
        follower.catch_up()
        first.close()
        late, late_follower = _open(path, log)  # reads the rows: position 2
        _append(log, "c", "d")
        other, other_follower = _open(path, log)  # another process catches the file up to 4 meanwhile
        other_follower.catch_up()
        assert (
            json.loads(dict(other.conn.execute("SELECT key, value FROM derived_meta").fetchall())["applied_seq"]) == 4
        )
        assert late_follower.catch_up() is True  # the rows it read at open were stale: the file moved on
        assert _rows(late) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]  # c and d once
        other.close()
        late.close()


def test_a_log_that_grew_after_the_open_is_caught_up(tmp_path: Path) -> None:
    path = tmp_path / "view.sqlite3"
    with JsonlEventLog(tmp_path / "log") as log:
        _append(log, "a")
        db, follower = _open(path, log)
        follower.catch_up()
        db.close()
        db, follower = _open(path, log)
        _append(log, "b")
        assert follower.catch_up() is True
        assert _rows(db) == [(1, "a"), (2, "b")]
        db.close()


def test_a_log_replaced_after_the_open_rebuilds_the_file_before_anything_is_read(tmp_path: Path) -> None:
    path = tmp_path / "view.sqlite3"
    with JsonlEventLog(tmp_path / "log") as log:
        _append(log, "secret")
        db, follower = _open(path, log)
        follower.catch_up()
        db.close()
        db, follower = _open(path, log)  # accepts the file: same kind, format, session and log identity
    (tmp_path / "log" / f"{SESSION}.jsonl").unlink()
    with JsonlEventLog(tmp_path / "log") as replaced:  # another history under the same name
        _append(replaced, "other")
        follower.log = replaced
        follower.catch_up()
        assert _rows(db) == [(1, "other")]
    db.close()
