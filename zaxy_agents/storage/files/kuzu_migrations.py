"""The embedded graph's schema: its migrations applied and recorded, and the whole schema dropped and re-created.

Why a module of its own: which schema a file holds is a question apart from what the store writes into it or reads
from it (the migrations themselves are data, in ``kuzu_schema.MIGRATIONS``, read here through
:mod:`.kuzu_layout` so a test can open a file as an earlier release wrote it).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from . import kuzu_layout as layout
from .kuzu_database import KuzuDatabase

# Migrations after which a graph that held rows starts over (its rows cannot be completed for the new schema).
REBUILD_MIGRATIONS = frozenset(migration.name for migration in layout.MIGRATIONS if migration.rebuild)


class KuzuMigrations(KuzuDatabase):
    """A Kuzu graph file whose schema is brought to this release's by migrations recorded in the file itself."""

    def migrate(self) -> list[str]:
        """Apply missing migrations (idempotent); returns the names applied now.

        Each applied migration is recorded at once in the ``Migration`` table's comment (see
        ``kuzu_schema.MIGRATION_RECORD_TABLE``): a crash between two migrations leaves the earlier ones recorded.
        The statements of migrations before one that re-creates every table (``Migration.recreates``) are not run,
        only recorded: that one drops what they would build (a new file gets one schema, not every past one; each
        DDL statement is a commit).
        """
        connection = self._connection()
        with self._writing():
            connection.execute(layout.MIGRATION_TABLE_DDL)
            records = self._migration_records()
            applied = {record["name"] for record in records}
            pending = [migration for migration in layout.MIGRATIONS if migration.name not in applied]
            fresh = max((at for at, migration in enumerate(pending) if migration.recreates), default=0)
            done = []
            for at, migration in enumerate(pending):
                if migration.recreates:  # every table of the file goes; the statements create the whole schema
                    tables = self._rows("CALL SHOW_TABLES() RETURN name, type")
                    for name, _kind in sorted(tables, key=lambda row: row[1] != "REL"):  # relationships first
                        if name != layout.MIGRATION_RECORD_TABLE:
                            connection.execute(f"DROP TABLE `{name}`")
                for statement in migration.statements if at >= fresh else ():
                    connection.execute(statement)
                records.append(
                    {
                        "name": migration.name,
                        "checksum": migration.checksum,
                        "statement_count": len(migration.statements),
                        "applied_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    }
                )
                self._record_migrations([r for r in records if not r.get("row")])
                done.append(migration.name)
            return done

    def _migration_records(self) -> list[dict[str, Any]]:
        """Applied migrations: the comment's records, plus the rows a file written before 0005 holds."""
        comment = next(
            (
                c
                for name, c in self._rows("CALL SHOW_TABLES() RETURN name, comment")
                if name == layout.MIGRATION_RECORD_TABLE
            ),
            "",
        )
        records = [dict(record) for record in json.loads(comment)] if comment else []
        rows = self._rows("MATCH (m:Migration) RETURN m.name, m.checksum, m.statement_count, m.applied_at")
        records += [
            {"name": n, "checksum": c, "statement_count": k, "applied_at": t, "row": True} for n, c, k, t in rows
        ]
        return records

    def _record_migrations(self, records: list[dict[str, Any]]) -> None:
        text = json.dumps(records, separators=(",", ":"), sort_keys=True)
        # Kuzu takes a comment only as a literal: the records are our own names, hex checksums, counts and times
        if "'" in text or "\\" in text:
            raise ValueError(f"a migration record cannot be written as a Kuzu comment: {text}")
        self._connection().execute(f"COMMENT ON TABLE {layout.MIGRATION_RECORD_TABLE} IS '{text}'")

    def reset(self) -> None:
        """Drop every table and re-create the schema, keeping the database (and its file lock) open.

        ``zaxy reproject`` rebuilds through this: closing the file and removing it would let another process
        take the graph between the close and the re-open, and the rebuild would then fail half-way.
        """
        with self._writing():
            tables = self._rows("CALL SHOW_TABLES() RETURN name, type")
            for name, _kind in sorted(tables, key=lambda row: row[1] != "REL"):  # relationships before their nodes
                self._connection().execute(f"DROP TABLE `{name}`")
        self.migrate()

    def migrations(self) -> list[dict[str, Any]]:
        records = sorted(self._migration_records(), key=lambda record: record["name"])
        return [{k: record[k] for k in ("name", "checksum", "statement_count")} for record in records]
