"""Finding planted content anywhere in a memory folder or a PostgreSQL schema (the erasure tests' guard)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Tables only: a view shows what its tables hold, and COPY refuses views.
_BASE_TABLES = "SELECT table_name FROM information_schema.tables WHERE table_schema = %s AND table_type = 'BASE TABLE'"


def encodings(needle: str) -> list[bytes]:
    """The byte forms a text can take in files we write: UTF-8, JSON-escaped ASCII, UTF-16 (LE/BE), UTF-32."""
    forms = {
        needle.encode(),
        json.dumps(needle)[1:-1].encode(),
        needle.encode("utf-16-le"),
        needle.encode("utf-16-be"),
        needle.encode("utf-32-le"),
    }
    return sorted(forms)


def files_containing(root: Path, needle: str) -> list[Path]:
    """Every file under ``root`` (hidden folders included) whose bytes hold ``needle`` in any of its forms."""
    forms = encodings(needle)
    hits = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            if any(form in data for form in forms):
                hits.append(path)
    return hits


def postgres_tables_containing(dsn: str, schema: str, needle: str) -> dict[str, int]:
    """``table -> rows`` of every table in ``schema`` whose text dump (COPY ... TO STDOUT) holds ``needle``."""
    import psycopg

    forms = encodings(needle)
    found: dict[str, int] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                _BASE_TABLES,
                (schema,),
            ).fetchall()
        ]
        for table in tables:
            rows = 0
            with conn.cursor().copy(f'COPY "{schema}"."{table}" TO STDOUT') as copy:
                for block in copy:
                    data = bytes(block)
                    rows += any(form in data or form.hex().encode() in data for form in forms)
            if rows:
                found[table] = rows
    return found


def dump_rows(dsn: str, schema: str) -> dict[str, Any]:  # pragma: no cover - debugging aid
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        return {
            table: conn.execute(f'SELECT count(*) FROM "{schema}"."{table}"').fetchone()[0]
            for (table,) in conn.execute(
                _BASE_TABLES,
                (schema,),
            ).fetchall()
        }
