"""`zaxy eventloom export | import`: move logs between backends as JSONL, byte for byte and verified."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from .common import EXIT_CHECK_FAILED, BackendOption, EventloomPath, JsonFlag, console, emit_json, handled, open_fabric

if TYPE_CHECKING:
    from zaxy_agents.fabric import TransferResult

eventloom_app = typer.Typer(help="Export sessions to JSONL files and import JSONL logs into the current backend.")


def register(app: typer.Typer) -> None:
    app.add_typer(eventloom_app, name="eventloom")


@eventloom_app.command("export")
def export_command(
    session_ids: Annotated[
        list[str] | None, typer.Option("--session-id", "-s", help="Session to export (repeatable; default: all).")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="File for a single session.")] = None,
    output_dir: Annotated[
        Path | None, typer.Option("--output-dir", help="Folder receiving <session>.jsonl per session.")
    ] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace existing files.")] = False,
    eventloom_path: EventloomPath = None,
    backend: BackendOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Write sessions as JSONL logs (verified while streaming; a broken log is refused, nothing is written).

    The output folder is itself an embedded Eventloom folder: `zaxy verify --eventloom-path DIR` works on it.
    """
    with handled(json_output):
        with open_fabric(eventloom_path, reads=True, sessions=session_ids, backend=backend) as fabric:
            results = fabric.export_jsonl(
                output_dir=output_dir, output_file=output, sessions=session_ids, overwrite=overwrite
            )
        _report("exported", results, json_output)


@eventloom_app.command("import")
def import_command(
    paths: Annotated[list[Path], typer.Argument(help="JSONL log files, or folders of <session>.jsonl files.")],
    eventloom_path: EventloomPath = None,
    backend: BackendOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Import JSONL logs into the current backend (verified first; events already present are skipped)."""
    with handled(json_output):
        with open_fabric(eventloom_path, backend=backend) as fabric:
            results = fabric.import_jsonl(paths)
        _report("imported", results, json_output)


def _report(verb: str, results: list[TransferResult], json_output: bool) -> None:
    failed = [result for result in results if result.error]
    if json_output:
        emit_json({verb: [r for r in results if not r.error], "failed": failed})
        if failed:
            raise typer.Exit(EXIT_CHECK_FAILED)
        return
    table = Table(title=f"{verb} {len(results)} session(s)")
    for column in ("session", "events", "imported", "skipped", "bytes", "sha256", "path"):
        table.add_column(column, overflow="fold")
    for result in results:
        if result.error:
            continue
        table.add_row(
            result.session,
            str(result.events),
            str(result.imported) if verb == "imported" else "",
            str(result.skipped) if verb == "imported" else "",
            str(result.size_bytes),
            result.sha256[:16],
            result.path,
        )
    console.print(table)
    for result in failed:
        console.print(
            f"[red]not {verb}[/] {result.session}: {result.error} (see `zaxy repair --session-id {result.session}`)"
        )
    if failed:
        raise typer.Exit(EXIT_CHECK_FAILED)
    for result in results:
        for warning in result.warnings:
            console.print(f"[yellow]warning:[/] {result.session}: {warning}")
