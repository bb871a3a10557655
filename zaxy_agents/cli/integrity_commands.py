"""`zaxy repair` (and `zaxy memory erase`): keeping the log readable, and forgetting for real."""

from __future__ import annotations

from typing import Annotated

import typer

from .common import EXIT_CHECK_FAILED, BackendOption, EventloomPath, JsonFlag, console, emit_json, handled, open_fabric


def register(app: typer.Typer) -> None:
    app.command("repair")(repair_command)


def repair_command(
    session_id: Annotated[
        str | None, typer.Option("--session-id", "-s", help="Session to repair (default: every session).")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would be done; change nothing.")] = False,
    actor: Annotated[str, typer.Option("--actor", "-a", help="Who runs the repair (recorded).")] = "zaxy",
    eventloom_path: EventloomPath = None,
    backend: BackendOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Set unreadable bytes aside in a sidecar file and record it; let a log whose last event was edited continue.

    Never deletes or rewrites an acknowledged event. Exit 1 when a session was edited (events missing,
    duplicated or reordered): that needs a backup, not a repair.
    """
    with handled(json_output):
        with open_fabric(eventloom_path, backend=backend) as fabric:
            result = fabric.repair(session_id, actor=actor, dry_run=dry_run)
        if json_output:
            emit_json(result)
        else:
            for report in result["sessions"]:
                _print_report(report, dry_run)
        if result["refused"]:
            raise typer.Exit(EXIT_CHECK_FAILED)


def _print_report(report: dict, dry_run: bool) -> None:
    name = report["session"]
    if report.get("refused"):
        console.print(f"[bold red]refused[/] {name}: {report['refused']}\n  [dim]fix:[/] {report['fix']}")
        return
    done = "would set aside" if dry_run else "set aside"
    for entry in report.get("set_aside", []):
        where = f"{entry['events']} events kept as tombstones" if entry["events"] else "at the end of the log"
        sidecar = f" -> {entry['sidecar']}" if "sidecar" in entry else ""
        console.print(
            f"[yellow]{name}[/]: {done} {entry['size']} unreadable bytes at offset {entry['offset']} ({where}){sidecar}"
        )
    for entry in report.get("acknowledged", []):
        console.print(f"[yellow]{name}[/]: event {entry['seq']} does not verify; acknowledged so the log can continue")
    for sidecar in report.get("sidecars", []):
        console.print(f"  sidecar: {sidecar}")
    if report.get("repaired"):
        console.print(f"[green]repaired[/] {name}: recorded as event {report['record_seq']}")
    elif report.get("note"):
        console.print(f"[green]ok[/] {name}: {report['note']}")
