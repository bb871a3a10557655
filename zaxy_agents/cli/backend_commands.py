"""`zaxy backend status | migrate`: which backend holds memory, whether its schema fits this code, and how
much it holds (the doctor for a shared PostgreSQL deployment; also works on the embedded default)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from .common import EXIT_CHECK_FAILED, BackendOption, EventloomPath, JsonFlag, console, emit_json, handled

if TYPE_CHECKING:
    from zaxy_agents.fabric import BackendStatus, MemoryFabric

backend_app = typer.Typer(help="Inspect and migrate the storage backend (embedded JSONL or PostgreSQL).")


def register(app: typer.Typer) -> None:
    app.add_typer(backend_app, name="backend")


def _open_for_maintenance(eventloom_path: Path | None, backend: str | None, *, apply: bool) -> MemoryFabric:
    """Open even when the schema needs migrating (status must be able to say so), or migrate it."""
    from zaxy_agents.config import ZaxySettings
    from zaxy_agents.fabric import MemoryFabric

    settings = ZaxySettings.resolve(eventloom_path, backend=backend)
    return MemoryFabric.for_maintenance(settings, apply_migrations=apply)


@backend_app.command("status")
def status_command(
    eventloom_path: EventloomPath = None, backend: BackendOption = None, json_output: JsonFlag = False
) -> None:
    """Backend, location, server version, migration state and session/event counts.

    Exit 0 when usable, 1 when the schema needs `zaxy backend migrate` (or a newer zaxy), 4 when the server
    cannot be reached.
    """
    with handled(json_output):
        with _open_for_maintenance(eventloom_path, backend, apply=False) as fabric:
            status = fabric.backend_status()
        if json_output:
            emit_json(status)
        else:
            _render(status)
        if not status.schema_ok:
            raise typer.Exit(EXIT_CHECK_FAILED)


@backend_app.command("migrate")
def migrate_command(
    eventloom_path: EventloomPath = None, backend: BackendOption = None, json_output: JsonFlag = False
) -> None:
    """Apply pending schema migrations (idempotent; safe while other workers run)."""
    with handled(json_output):
        with _open_for_maintenance(eventloom_path, backend, apply=True) as fabric:
            applied = fabric.applied_migrations()
            status = fabric.backend_status()
        if json_output:
            emit_json({"applied": applied, "status": status})
        else:
            console.print(f"applied {len(applied)} migration(s){': ' + ', '.join(applied) if applied else ''}")
            _render(status)
        if not status.schema_ok:
            raise typer.Exit(EXIT_CHECK_FAILED)


def _render(status: BackendStatus) -> None:
    console.print(f"[bold]backend[/] {status.backend}  [bold]location[/] {status.location}")
    if status.server_version:
        console.print(f"[bold]server[/] PostgreSQL {status.server_version}  [bold]schema[/] {status.schema_name}")
    console.print(
        f"[bold]sessions[/] {status.session_count}  [bold]events[/] {status.event_count}  "
        f"[bold]bytes[/] {status.size_bytes}"
    )
    if status.migrations:
        table = Table(title="migrations")
        for column in ("component", "name", "state", "statements", "applied at"):
            table.add_column(column)
        for record in status.migrations:
            table.add_row(
                record.component, record.name, record.state, str(record.statement_count), record.applied_at or ""
            )
        console.print(table)
    for extension, note in status.features.items():
        console.print(f"[bold]{extension}[/] {note}")
    if status.note:
        console.print(f"[dim]note:[/] {status.note}")
    for problem in status.problems:
        console.print(f"[yellow]problem:[/] {problem}")
    console.print("[green]schema ok[/]" if status.schema_ok else "[red]schema needs attention[/]")
