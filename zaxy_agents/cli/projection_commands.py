"""`zaxy reproject`, `zaxy schema-plan`, `zaxy memory status`, `zaxy memory inferred-status`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .common import EXIT_CHECK_FAILED, EventloomPath, JsonFlag, console, emit_json, handled, open_fabric


def register(app: typer.Typer, memory_app: typer.Typer) -> None:
    app.command("reproject")(reproject_command)
    app.command("schema-plan")(schema_plan_command)
    memory_app.command("status")(status_command)
    memory_app.command("inferred-status")(inferred_status_command)


def reproject_command(
    session_id: Annotated[
        str | None, typer.Option("--session-id", "-s", help="Report this session (the graph is rebuilt whole).")
    ] = None,
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Throw the graph projection away and rebuild it from the log; prints the graph digest."""
    with handled(json_output), open_fabric(eventloom_path, reads=True, sessions=session_id) as fabric:
        total = sum(s.event_count for s in fabric.sessions())
        if json_output:
            digest = fabric.reproject()
        else:
            columns = (TextColumn("reprojecting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
            with Progress(*columns, console=console, transient=True) as progress:
                task = progress.add_task("events", total=total)
                digest = fabric.reproject(lambda done, _total: progress.update(task, completed=done))
        status = fabric.memory_status(session_id)
        result = {
            "digest": digest,
            "events": status["events"],
            "entities": status["entities"],
            "edges": status["edges"],
            "sessions": status["sessions"],
        }
        if json_output:
            emit_json(result)
        else:
            console.print(
                f"rebuilt {result['events']} events -> {result['entities']} entity versions, {result['edges']} edges"
            )
            console.print(f"digest [bold]{digest}[/]")


def schema_plan_command(json_output: JsonFlag = False) -> None:
    """Print the graph schema migrations without opening any database."""
    from zaxy_agents.fabric import MemoryFabric

    plan = MemoryFabric.graph_schema_plan()
    if json_output:
        emit_json(plan)
        return
    for migration in plan["migrations"]:
        console.print(
            f"[bold]{migration['name']}[/] checksum {migration['checksum'][:16]}… "
            f"({migration['statement_count']} statements)"
        )
        for statement in migration["statements"]:
            console.print(f"  {statement}")


def status_command(
    session_id: Annotated[str | None, typer.Option("--session-id", "-s")] = None,
    eventloom_path: EventloomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Event, entity, edge and inferred-edge counts, last projected seq per session and projection lag."""
    with handled(json_output), open_fabric(eventloom_path, reads=True, sessions=session_id) as fabric:
        status = fabric.memory_status(session_id)
        if json_output:
            emit_json(status)
        else:
            console.print(
                f"backend {status['backend']}: {status['events']} events, {status['entities']} entity versions "
                f"({status['current_entities']} current), {status['edges']} edges ({status['inferred_edges']} "
                f"inferred), {status['extraction_failures']} extraction failures"
            )
            if status["degraded"]:
                console.print(f"[yellow]degraded:[/] {status['degraded']}")
            table = Table()
            for column in ("session", "events", "last projected", "lag"):
                table.add_column(column)
            for name, row in status["sessions"].items():
                lag = str(row["projection_lag"]) + (f" [red]{row['mismatch']}[/]" if "mismatch" in row else "")
                table.add_row(name, str(row["events"]), str(row["last_projected_seq"]), lag)
            console.print(table)
        if any("mismatch" in row for row in status["sessions"].values()):
            raise typer.Exit(EXIT_CHECK_FAILED)


def inferred_status_command(eventloom_path: EventloomPath = None, json_output: JsonFlag = False) -> None:
    """Inferred edges: counts, methods, confidence, evidence coverage and uncited edges."""
    with handled(json_output), open_fabric(eventloom_path, reads=True) as fabric:
        status = fabric.inferred_status()
        if json_output:
            emit_json(status)
            return
        console.print(f"{status['inferred_edges']} inferred edges, evidence coverage {status['evidence_coverage']:.0%}")
        for method, count in status["methods"].items():
            console.print(f"  {method}: {count}")
        if status["uncited_edges"]:
            console.print(f"[red]uncited:[/] {', '.join(status['uncited_edges'])}")
