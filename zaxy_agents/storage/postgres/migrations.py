"""Named, checksummed, idempotent schema migrations, recorded per component in ``<schema>.zaxy_migrations``.

Each component (``eventloom`` now; the graph projection and LangGraph state later) owns an ordered tuple of
:class:`Migration`. Applying is idempotent and safe from many processes at once: it runs under a
transaction-scoped advisory lock, re-reads what is applied, and applies each missing migration in its own
transaction together with its record (name, checksum, statement count). Opening a backend checks the state:

* nothing applied yet -> the schema is created automatically (a fresh deployment needs no extra step);
* some applied, some pending -> :class:`SchemaMismatchError` asking for ``zaxy backend migrate`` (upgrading
  a shared schema under running workers is a deliberate step), unless the caller asked to apply;
* applied migrations this code does not know -> the database is newer than the code: upgrade zaxy-agents;
* an applied migration whose checksum differs -> it was edited after release: refuse.
"""

from __future__ import annotations

import hashlib
from typing import Any

import psycopg
from psycopg import sql

from zaxy_agents.errors import InvalidRequestError, SchemaMismatchError
from zaxy_agents.storage.records import MigrationRecord, MigrationState

MIGRATIONS_TABLE = "zaxy_migrations"
SCHEMA_MODES = ("auto", "apply", "check", "skip")
_BOOTSTRAP = (
    "CREATE SCHEMA IF NOT EXISTS {schema}",
    "CREATE TABLE IF NOT EXISTS {schema}.zaxy_migrations ("
    " component text NOT NULL,"
    " name text NOT NULL,"
    " checksum text NOT NULL,"
    " statement_count integer NOT NULL,"
    " applied_at timestamptz NOT NULL DEFAULT clock_timestamp(),"
    " PRIMARY KEY (component, name))",
)


class Migration:
    """One named schema change: SQL statements with ``{schema}`` where the schema identifier goes."""

    __slots__ = ("component", "name", "statements")

    def __init__(self, component: str, name: str, statements: tuple[str, ...]) -> None:
        self.component, self.name, self.statements = component, name, statements

    @property
    def checksum(self) -> str:
        """SHA-256 of the statement templates (schema-independent), so an edited migration is noticed."""
        return hashlib.sha256("\n;\n".join(self.statements).encode("utf-8")).hexdigest()


def render(statement: str, schema: str) -> sql.Composed:
    """Substitute the quoted schema identifier into a statement template."""
    return sql.SQL(statement).format(schema=sql.Identifier(schema))


def migration_state(conn: psycopg.Connection[Any], schema: str, migrations: tuple[Migration, ...]) -> MigrationState:
    """Compare the migrations this code ships with what the database recorded."""
    component = migrations[0].component
    applied: dict[str, tuple[str, int, str]] = {}
    table = conn.execute("SELECT to_regclass(%s)", (f'"{schema}".{MIGRATIONS_TABLE}',)).fetchone()
    if table and table[0] is not None:
        rows = conn.execute(
            render(
                "SELECT name, checksum, statement_count, "
                "to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') "
                "FROM {schema}.zaxy_migrations WHERE component = %s ORDER BY name",
                schema,
            ),
            (component,),
        ).fetchall()
        applied = {name: (checksum, count, when) for name, checksum, count, when in rows}
    records = []
    for migration in migrations:
        found = applied.pop(migration.name, None)
        if found is None:
            state, when = "pending", None
        else:
            state, when = ("applied" if found[0] == migration.checksum else "changed"), found[2]
        records.append(
            MigrationRecord(
                component=component,
                name=migration.name,
                state=state,
                checksum=migration.checksum,
                statement_count=len(migration.statements),
                applied_at=when,
            )
        )
    for name, (checksum, count, when) in sorted(applied.items()):
        records.append(
            MigrationRecord(
                component=component,
                name=name,
                state="unknown",
                checksum=checksum,
                statement_count=count,
                applied_at=when,
            )
        )
    return MigrationState(component=component, schema_name=schema, records=records)


def apply_migrations(conn: psycopg.Connection[Any], schema: str, migrations: tuple[Migration, ...]) -> list[str]:
    """Apply every pending migration (idempotent; concurrent callers serialise on an advisory lock)."""
    applied_now: list[str] = []
    lock_key = f"zaxy-migrations:{schema}"
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (lock_key,))
        for statement in _BOOTSTRAP:
            conn.execute(render(statement, schema))
    while True:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (lock_key,))
            state = migration_state(conn, schema, migrations)
            _refuse_mismatch(state)
            pending = [m for m in migrations if m.name in state.names("pending")]
            if not pending:
                return applied_now
            migration = pending[0]
            for statement in migration.statements:
                conn.execute(render(statement, schema))
            conn.execute(
                render(
                    "INSERT INTO {schema}.zaxy_migrations (component, name, checksum, statement_count) "
                    "VALUES (%s, %s, %s, %s)",
                    schema,
                ),
                (migration.component, migration.name, migration.checksum, len(migration.statements)),
            )
            applied_now.append(migration.name)


def ensure_schema(
    conn: psycopg.Connection[Any], schema: str, migrations: tuple[Migration, ...], mode: str = "auto"
) -> MigrationState:
    """Check (and, per ``mode``, apply) migrations; see the module docstring for the rules."""
    if mode not in SCHEMA_MODES:
        raise InvalidRequestError(
            f"unknown schema mode {mode!r}", field="schema_mode", remediation=f"Use one of {', '.join(SCHEMA_MODES)}."
        )
    state = migration_state(conn, schema, migrations)
    if mode == "skip":
        return state
    _refuse_mismatch(state)
    pending = state.names("pending")
    if pending:
        fresh = len(pending) == len(migrations)
        if mode == "apply" or (mode == "auto" and fresh):
            applied_now = apply_migrations(conn, schema, migrations)
            return migration_state(conn, schema, migrations).model_copy(update={"applied_now": applied_now})
        raise SchemaMismatchError(
            f"the {state.component} schema in {schema!r} is older than this code: pending migrations "
            f"{', '.join(pending)}",
            field="schema",
            remediation="Run `zaxy backend migrate` once (it is safe while other workers run), then retry.",
        )
    return state


def _refuse_mismatch(state: MigrationState) -> None:
    unknown, changed = state.names("unknown"), state.names("changed")
    if unknown:
        raise SchemaMismatchError(
            f"the {state.component} schema in {state.schema_name!r} is newer than this code (it has migrations "
            f"{', '.join(unknown)} that this version does not know)",
            field="schema",
            remediation="Upgrade zaxy-agents on this host to the version the other workers run.",
        )
    if changed:
        raise SchemaMismatchError(
            f"applied {state.component} migrations {', '.join(changed)} differ from this code's (checksum mismatch)",
            field="schema",
            remediation="A released migration must never change: reinstall an official zaxy-agents release.",
        )
