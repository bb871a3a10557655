"""PostgreSQL-only behaviour on a real server: row-level tampering, the head row, connection errors,
migrations, bounded replay pages and asynchronous commit."""

from __future__ import annotations

import threading
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from zaxy_agents.errors import IntegrityError, SchemaMismatchError, UnavailableError
from zaxy_agents.storage.conformance.harness import PostgresHarness
from zaxy_agents.storage.postgres import log as postgres_log
from zaxy_agents.storage.postgres import log_reads
from zaxy_agents.storage.postgres import log_schema as postgres_schema
from zaxy_agents.storage.postgres.log import PostgresEventLog
from zaxy_agents.storage.postgres.migrations import Migration, apply_migrations, ensure_schema, migration_state


def _fill(harness: PostgresHarness, count: int = 4) -> None:
    with harness.open() as log:
        log.append_many("s", [{"type": "fact.asserted", "payload": {"i": i}} for i in range(count)])


@pytest.mark.parametrize(
    ("column", "value"),
    [("type", "fact.retracted"), ("actor", "mallory"), ("event_id", "evt_0"), ("hash", "0" * 64)],
)
def test_updating_a_queryable_column_is_detected(postgres_backend: PostgresHarness, column: str, value: str) -> None:
    _fill(postgres_backend)
    postgres_backend.execute(
        f"UPDATE {{schema}}.eventloom_events SET {column} = %s WHERE session = 's' AND seq = 3", (value,)
    )
    with postgres_backend.open() as log:
        report = log.verify("s")
    assert not report.ok and report.first_broken_seq == 3 and column in report.reason


def test_recorded_at_must_match_the_line(postgres_backend: PostgresHarness) -> None:
    _fill(postgres_backend)
    postgres_backend.execute(
        "UPDATE {schema}.eventloom_events SET recorded_at = recorded_at - interval '1 day' WHERE seq = 2"
    )
    with postgres_backend.open() as log:
        report = log.verify("s")
    assert report.first_broken_seq == 2 and "recorded_at" in report.reason


def test_deleting_the_last_event_is_detected_through_the_head_row(postgres_backend: PostgresHarness) -> None:
    _fill(postgres_backend)
    postgres_backend.execute("DELETE FROM {schema}.eventloom_events WHERE session = 's' AND seq = 4")
    with postgres_backend.open() as log:
        report = log.verify("s")
        assert not report.ok and report.first_broken_seq == 4 and "missing" in report.reason
        with pytest.raises(IntegrityError):
            log.append("s", "note.added", {})


def test_a_modified_head_row_is_detected_and_refused(postgres_backend: PostgresHarness) -> None:
    _fill(postgres_backend)
    postgres_backend.execute("UPDATE {schema}.eventloom_sessions SET head_hash = %s", ("f" * 64,))
    with postgres_backend.open() as log:
        report = log.verify("s")
        assert not report.ok and report.first_broken_seq == 4 and "head" in report.reason
        with pytest.raises(IntegrityError):
            log.append("s", "note.added", {})


def test_rows_added_behind_the_head_make_appends_fail_cleanly(postgres_backend: PostgresHarness) -> None:
    _fill(postgres_backend)
    postgres_backend.execute(
        "UPDATE {schema}.eventloom_sessions SET head_seq = 3, head_hash = (SELECT hash FROM "
        "{schema}.eventloom_events WHERE seq = 3)"
    )
    with postgres_backend.open() as log, pytest.raises(IntegrityError) as info:
        log.append("s", "note.added", {})
    assert "outside Zaxy" in info.value.message
    assert len(postgres_backend.stored_lines("s")) == 4


def test_a_missing_head_row_is_reported(postgres_backend: PostgresHarness) -> None:
    _fill(postgres_backend)
    postgres_backend.execute("DELETE FROM {schema}.eventloom_sessions")
    with postgres_backend.open() as log:
        report = log.verify("s")
    assert not report.ok and "head row" in report.reason


def test_unreachable_server_and_bad_password_are_clear_and_redacted(postgres_backend: PostgresHarness) -> None:
    with pytest.raises(UnavailableError) as info:
        PostgresEventLog("postgresql://zaxy:s3cret-pw@127.0.0.1:1/zaxy", schema="x")
    assert "127.0.0.1" in info.value.message and "s3cret-pw" not in str(info.value.to_dict())
    parts = urlsplit(postgres_backend.dsn)
    user_and_host = parts.netloc.split("@", 1)
    wrong = urlunsplit(parts._replace(netloc=f"{user_and_host[0].split(':')[0]}:Wr0ng-pw@{user_and_host[-1]}"))
    with pytest.raises(UnavailableError) as info:
        PostgresEventLog(wrong, schema="x")
    assert "password authentication failed" in info.value.message and "Wr0ng-pw" not in info.value.message


def test_replay_pages_are_bounded_by_bytes_and_rows(
    postgres_backend: PostgresHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    with postgres_backend.open() as log:
        log.append_many(
            "s", [{"type": "note.added", "payload": {"i": i, "pad": "x" * (i % 7) * 300}} for i in range(60)]
        )
        log.append("s", "note.added", {"big": "y" * 5000})  # larger than a whole page
        monkeypatch.setattr(log_reads, "PAGE_BYTES", 2000)
        monkeypatch.setattr(log_reads, "PAGE_ROWS", 7)
        calls = []
        original = log._fetchall
        monkeypatch.setattr(log, "_fetchall", lambda q, p: calls.append(p) or original(q, p))
        assert [e.seq for e in log.replay("s")] == list(range(1, 62))
        assert [e.seq for e in log.replay("s", 55, 58)] == [55, 56, 57, 58]
        assert log.verify("s").ok
    assert len(calls) > 61 * 300 // 2000
    assert all(params[3] == 7 and params[4] == 2000 for params in calls)


def test_batch_durability_turns_off_synchronous_commit(postgres_backend: PostgresHarness) -> None:
    with postgres_backend.open(durability="batch") as log, log._pool.connection() as conn:
        assert conn.execute("SHOW synchronous_commit").fetchone()[0] == "off"
    with postgres_backend.open() as log, log._pool.connection() as conn:
        assert conn.execute("SHOW synchronous_commit").fetchone()[0] == "on"


def test_status_reports_server_schema_and_counts(postgres_backend: PostgresHarness) -> None:
    _fill(postgres_backend)
    with postgres_backend.open() as log:
        status = log.status()
    assert status.backend == "postgresql" and status.server_version.split(".")[0].isdigit()
    assert status.schema_name == postgres_backend.schema and status.schema_ok and not status.problems
    assert (status.session_count, status.event_count) == (1, 4)
    assert [(r.name, r.state, r.statement_count) for r in status.migrations] == [
        ("0001_events_and_session_heads", "applied", 2)
    ]


EXTRA = Migration("eventloom", "0002_test_index", ("CREATE INDEX ON {schema}.eventloom_events (type)",))


def test_pending_migrations_are_refused_until_applied(
    postgres_backend: PostgresHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(postgres_backend)
    for module in (postgres_log, log_reads):  # opening checks them, status reports them
        monkeypatch.setattr(module, "MIGRATIONS", (*postgres_schema.MIGRATIONS, EXTRA))
    with pytest.raises(SchemaMismatchError) as info:
        postgres_backend.open()
    assert "older than this code" in info.value.message and "zaxy backend migrate" in info.value.remediation
    with postgres_backend.open(schema_mode="skip") as log:
        status = log.status()
        assert not status.schema_ok and "0002_test_index" in status.problems[0]
    with postgres_backend.open(schema_mode="apply") as log:
        assert log.migrations.applied_now == ["0002_test_index"] and log.verify("s").ok
    with postgres_backend.open() as log:
        assert log.migrations.up_to_date and log.migrations.applied_now == []


def test_a_newer_or_edited_schema_is_refused(postgres_backend: PostgresHarness) -> None:
    _fill(postgres_backend)
    postgres_backend.execute(
        "INSERT INTO {schema}.zaxy_migrations (component, name, checksum, statement_count) "
        "VALUES ('eventloom', '0099_from_the_future', 'x', 1)"
    )
    with pytest.raises(SchemaMismatchError) as info:
        postgres_backend.open()
    assert "newer than this code" in info.value.message
    postgres_backend.execute("DELETE FROM {schema}.zaxy_migrations WHERE name = '0099_from_the_future'")
    postgres_backend.execute("UPDATE {schema}.zaxy_migrations SET checksum = 'edited'")
    with pytest.raises(SchemaMismatchError) as info:
        postgres_backend.open()
    assert "checksum" in info.value.message


def test_concurrent_migrations_apply_each_step_once(postgres_backend: PostgresHarness) -> None:
    component = (
        Migration("demo", "0001_table", ("CREATE TABLE {schema}.demo_items (id int PRIMARY KEY)",)),
        Migration("demo", "0002_column", ("ALTER TABLE {schema}.demo_items ADD COLUMN note text",)),
    )
    schema = postgres_backend.schema
    applied: list[list[str]] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with psycopg.connect(postgres_backend.dsn, autocommit=True) as conn:
                applied.append(apply_migrations(conn, schema, component))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(name for names in applied for name in names) == ["0001_table", "0002_column"]
    with psycopg.connect(postgres_backend.dsn, autocommit=True) as conn:
        assert migration_state(conn, schema, component).up_to_date
        assert ensure_schema(conn, schema, component).applied_now == []
        rows = conn.execute(
            f'SELECT name, statement_count FROM "{schema}".zaxy_migrations WHERE component = %s ORDER BY name',
            ("demo",),
        ).fetchall()
    assert rows == [("0001_table", 1), ("0002_column", 1)]


def test_a_read_only_server_serves_reads_and_refuses_writes_clearly(postgres_backend: PostgresHarness) -> None:
    """What a streaming replica does: every transaction is read-only."""
    _fill(postgres_backend)
    separator = "&" if "?" in postgres_backend.dsn else "?"
    replica = f"{postgres_backend.dsn}{separator}options=-c%20default_transaction_read_only%3Don"
    with PostgresEventLog(replica, schema=postgres_backend.schema) as log:
        assert [e.seq for e in log.replay("s")] == [1, 2, 3, 4] and log.verify("s").ok
        assert log.resolve(log.get("s", 2).citation).seq == 2
        with pytest.raises(UnavailableError) as info:
            log.append("s", "note.added", {})
        assert "read-only" in info.value.message and "primary" in info.value.remediation
    assert len(postgres_backend.stored_lines("s")) == 4
