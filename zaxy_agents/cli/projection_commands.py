"""`zaxy reproject`, `zaxy schema-plan`, `zaxy memory status`, `zaxy memory inferred-status`."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from zaxy_agents.errors import NotFoundError

from .common import (
    EXIT_CHECK_FAILED,
    EXIT_INTERRUPTED,
    EventloomPath,
    JsonFlag,
    console,
    emit_json,
    err_console,
    handled,
    open_fabric,
)


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
    """Throw the graph projection away and rebuild it from the log; prints the graph digest.

    The bar follows the events read; then a spinner covers building the graph, the snapshot and the digest.
    Ctrl-C says at once that it is stopping, and then what state memory is in (the log is never touched).
    """
    with handled(json_output), open_fabric(eventloom_path, reads=True, sessions=session_id) as fabric:
        summaries = fabric.sessions()
        if session_id is not None and session_id not in {summary.session for summary in summaries}:
            raise NotFoundError(
                f"no session {session_id!r} to report",
                field="--session-id",
                remediation="List sessions with `zaxy sessions`; nothing was rebuilt.",
            )
        total = sum(s.event_count for s in summaries)
        read = [0]
        if not json_output:
            err_console.print(f"rebuilding the projection of {total} events from the log (Ctrl-C stops it safely)")
        try:
            with _interrupt_notice(json_output):
                if json_output:
                    digest = fabric.reproject(lambda done, _total: read.__setitem__(0, done))
                else:
                    digest = _reproject_with_progress(fabric, total, read)
        except KeyboardInterrupt:
            message = (
                f"interrupted after reading {read[0]} of {total} events. The log is unchanged; the projection is "
                "incomplete and is caught up from the log on next use (run `zaxy reproject` to rebuild it now)."
            )
            if json_output:
                emit_json({"error": {"code": "interrupted", "message": message, "remediation": "zaxy reproject"}})
            else:
                err_console.print(f"[yellow]{message}[/]")
            raise typer.Exit(EXIT_INTERRUPTED) from None
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


def _reproject_with_progress(fabric: Any, total: int, read: list[int]) -> str:
    """A bar over the events read, then an honest spinner for what follows (graph, snapshot, digest)."""
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("reading the log", total=total or None)

        def update(done: int, _total: int) -> None:
            read[0] = done
            if done >= total:
                progress.update(task, completed=done, total=None, description="building the graph, snapshot, digest")
            else:
                progress.update(task, completed=done)

        return fabric.reproject(update)


@contextmanager
def _interrupt_notice(quiet: bool) -> Iterator[None]:
    """On Ctrl-C, say at once that we are stopping (unwinding a graph write can take a moment), then interrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if not quiet:
            err_console.print("[yellow]stopping (Ctrl-C)… the log is never changed by reproject[/]")
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a second Ctrl-C interrupts at once
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


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
