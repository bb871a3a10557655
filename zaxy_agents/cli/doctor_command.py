"""`zaxy doctor [--json] [--fix]`: what is wrong with this workspace's memory, and the one line that fixes it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from .common import EXIT_CHECK_FAILED, EXIT_OK, EventloomPath, JsonFlag, console, emit_json, handled

STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "skip": "dim"}


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor_command)


def doctor_command(
    eventloom_path: EventloomPath = None,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Apply the safe repairs: rebuild derived state from the log, catch the projection up, remove "
            "stale owner records, drain spooled hook events. Never deletes or rewrites an event.",
        ),
    ] = False,
    min_free_mb: Annotated[
        int, typer.Option("--min-free-mb", min=0, help="Disk headroom below which the disk check fails.")
    ] = 500,
    json_output: JsonFlag = False,
) -> None:
    """Check this workspace's memory: log integrity, damaged logs, projection freshness, derived state, embedder,
    vector cache, MCP profile, hooks, graph owner, hook spool, disk. Exit 0 when nothing failed, 1 otherwise."""
    from zaxy_agents.capture.workspace import resolve_workspace

    from .doctor_checks import DoctorContext, run_checks

    with handled(json_output):
        workspace = resolve_workspace(os.getcwd(), str(eventloom_path.resolve()) if eventloom_path else None)
        context = DoctorContext(workspace, Path(workspace.eventloom_path), min_free_mb=min_free_mb)
        try:
            results = run_checks(context, fix=fix)
            if fix and any(result.repaired for result in results):
                context.close()
                context = DoctorContext(workspace, Path(workspace.eventloom_path), min_free_mb=min_free_mb)
                after = {result.name: result for result in run_checks(context)}
                for result in results:
                    rerun = after.get(result.name)
                    if result.repaired and rerun is not None:
                        result.status, result.summary, result.fix = rerun.status, rerun.summary, rerun.fix
        finally:
            context.close()
        failed = [result for result in results if result.status == "fail"]
        report = {
            "ok": not failed,
            "workspace": workspace.root,
            "eventloom_path": workspace.eventloom_path,
            "checks": [result.to_dict() for result in results],
        }
        if json_output:
            emit_json(report)
        else:
            console.print(f"[bold]zaxy doctor[/] {workspace.root} (memory: {workspace.eventloom_path})")
            for result in results:
                style = STYLE[result.status]
                console.print(f"  [{style}]{result.status:>4}[/]  {result.name}: {result.summary}", highlight=False)
                if result.repaired:
                    console.print(f"        [cyan]fixed:[/] {result.repaired}", highlight=False)
                if result.fix and result.status in ("warn", "fail"):
                    console.print(f"        [dim]fix:[/] {result.fix}", highlight=False)
            verdict = "[bold red]problems found[/]" if failed else "[green]no failures[/]"
            console.print(f"{verdict}: {len(failed)} failed, {sum(r.status == 'warn' for r in results)} warnings")
        raise typer.Exit(EXIT_CHECK_FAILED if failed else EXIT_OK)
