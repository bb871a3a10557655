"""`zaxy reproject`, `zaxy schema-plan`, `zaxy memory status`, `zaxy memory inferred-status`."""

from __future__ import annotations

import os
import sys
import threading
from typing import Annotated, Any, NoReturn

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from zaxy_agents.errors import NotFoundError
from zaxy_agents.projection.rebuild_status import RebuildCancelled

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
    digest: Annotated[
        bool,
        typer.Option(
            "--digest",
            help="Also read the rebuilt graph back and print its SHA-256 digest (same log -> same digest).",
        ),
    ] = False,
) -> None:
    """Throw the graph projection away and rebuild it from the log; with --digest, prints the graph digest.

    The bars follow the real work to the end: events indexed, events written to the graph, digest lines read.
    Ctrl-C stops within about a second and says what state memory is in (the log is never touched).
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
        if not json_output:
            err_console.print(f"rebuilding the projection of {total} events from the log (Ctrl-C stops it safely)")
        try:
            value = _rebuild_in_thread(fabric, quiet=json_output, digest=digest)
        except (RebuildCancelled, KeyboardInterrupt) as exc:
            state = exc.status.as_dict() if isinstance(exc, RebuildCancelled) else None
            message = (
                str(exc)
                if isinstance(exc, RebuildCancelled)
                else "stopped before the rebuild began. The log is unchanged; memory is as it was."
            )
            message += " Run `zaxy reproject` to rebuild it now."
            if json_output:
                error = {"code": "interrupted", "message": message, "remediation": "zaxy reproject", "state": state}
                emit_json({"error": error})
            else:
                err_console.print(f"[yellow]{message}[/]")
            _exit_now(fabric)
        status = fabric.memory_status(session_id)
        result = {
            "digest": value,
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
            if value is not None:
                console.print(f"digest [bold]{value}[/]")


def _exit_now(fabric: Any) -> NoReturn:
    """Leave at once after a Ctrl-C, with exit code 130.

    An interrupted graph write still rolling back is not waited for (it takes as long as what it undoes): its file
    is marked dirty, so the next open deletes it and rebuilds it from the log, exactly as after a kill. Otherwise
    the fabric is closed first. The interpreter's teardown is skipped either way: freeing a rebuild's heap cost
    about a second (benchmarks/reproject_interrupt_bench.py), and everything durable is committed already.
    """
    if not fabric.projector.rebuild_unwinding():
        fabric.close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


def _rebuild_in_thread(fabric: Any, *, quiet: bool, digest: bool) -> str | None:
    """Run the rebuild in a worker thread so this (main) thread stays free for Ctrl-C and the bars.

    A Ctrl-C reaches the main thread even while the worker is inside a long graph statement (C code holding no
    Python frame the signal could interrupt); it asks the projector to cancel, which interrupts that statement
    (rolled back) and stops the rebuild at its last committed chunk.
    """
    projector = fabric.projector
    outcome: dict[str, Any] = {}
    finished = threading.Event()  # not Thread.join: a join interrupted by Ctrl-C can mark a live thread stopped

    def work() -> None:
        try:
            outcome["digest"] = fabric.reproject(digest=digest)
        except BaseException as exc:  # handed to the main thread, which reports it
            outcome["error"] = exc
        finally:
            finished.set()

    worker = threading.Thread(target=work, name="zaxy-reproject", daemon=True)
    with _RebuildBars(projector, quiet) as bars:
        worker.start()
        try:
            while not finished.wait(0.1):
                bars.update()
        except KeyboardInterrupt:
            bars.stop()
            if not quiet:
                err_console.print("[yellow]stopping (Ctrl-C)… the log is never changed by reproject[/]")
            projector.cancel_rebuild()
            _wait_ignoring_ctrl_c(finished, quiet)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["digest"]  # type: ignore[no-any-return]


def _wait_ignoring_ctrl_c(finished: threading.Event, quiet: bool) -> None:
    """Wait for the cancelled rebuild to unwind (it is rolling back); more Ctrl-C only repeats the notice."""
    while not finished.is_set():
        try:
            finished.wait(0.1)
        except KeyboardInterrupt:
            if not quiet:
                err_console.print("[yellow]already stopping: the graph write in progress is being rolled back[/]")


class _RebuildBars:
    """One bar per stage of real work, polled from the projector's rebuild status by the main thread."""

    def __init__(self, projector: Any, quiet: bool) -> None:
        self.projector = projector
        self.progress: Progress | None = None
        if not quiet:
            columns = (
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
            )
            self.progress = Progress(*columns, console=console, transient=True)
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> _RebuildBars:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def update(self) -> None:
        if self.progress is None:
            return
        status = self.projector.rebuild_status
        if not status.total_events:
            return
        self._bar("indexed", "indexing the log (events)", status.indexed_events, status.total_events)
        if status.uses_graph and (status.stage in ("graph", "digest", "done") or status.graph_events):
            self._bar("graph", "writing the graph (events)", int(status.graph_events), status.total_events)
        if status.stage in ("digest", "done"):
            self._bar("digest", "reading it back for the digest (lines)", status.digest_lines, None)

    def _bar(self, key: str, description: str, done: int, total: int | None) -> None:
        assert self.progress is not None
        if key not in self.tasks:
            self.tasks[key] = self.progress.add_task(description, total=total)
        self.progress.update(self.tasks[key], completed=done)


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
