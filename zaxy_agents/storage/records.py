"""Pydantic records describing migration state (no psycopg import, so status models can use them anywhere)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field


class MigrationRecord(BaseModel):
    """One migration and where it stands in a database."""

    component: str
    name: str
    state: str  # applied | pending | unknown (in the database, not in this code) | changed (checksum differs)
    checksum: str
    statement_count: int
    applied_at: str | None = None


class MigrationState(BaseModel):
    """Every migration of one component in one schema."""

    component: str
    schema_name: str
    records: list[MigrationRecord]
    applied_now: list[str] = Field(default_factory=list)  # migrations this call applied

    def names(self, state: str) -> list[str]:
        return [record.name for record in self.records if record.state == state]

    @property
    def up_to_date(self) -> bool:
        return all(record.state == "applied" for record in self.records)


def migration_plan(migrations: Iterable[Any]) -> list[dict[str, Any]]:
    """Migrations (``name``, ``checksum``, ``statements``) as data, for ``zaxy schema-plan``."""
    return [
        {"name": m.name, "checksum": m.checksum, "statement_count": len(m.statements), "statements": list(m.statements)}
        for m in migrations
    ]
