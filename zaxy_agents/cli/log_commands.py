"""`zaxy append | replay | verify | sessions`: the Eventloom from the command line."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from .common import (
    EXIT_CHECK_FAILED,
    BackendOption,
    EventloomPath,
    JsonFlag,
    SessionId,
    console,
    emit_json,
    handled,
    open_fabric,
    parse_json_option,
)


def register(app: typer.Typer) -> None:
    app.command("append")(append_command)
    app.command("replay")(replay_command)
    app.command("verify")(verify_command)
    app.command("sessions")(sessions_command)


def append_command(
    session_id: SessionId,
    event_type: Annotated[str, typer.Option("--type", "-t", help="Dotted lowercase type, e.g. task.created.")],
    actor: Annotated[str, typer.Option("--actor", "-a", help="Who produced the event.")],
    payload: Annotated[str, typer.Option("--payload", "-p", help="JSON object.")] = "{}",
    eventloom_path: EventloomPath = None,
    backend: BackendOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Append one event and print its citation."""
    with handled(json_output):
        value = parse_json_option(payload, field="--payload")
        with open_fabric(eventloom_path, backend=backend) as fabric:
            event = fabric.append(session_id, event_type, value, actor=actor)
        if json_output:
            emit_json({"event": event, "citation": event.citation})
        else:
            console.print(f"appended [bold]{event.type}[/] seq {event.seq}  [cyan]{event.citation}[/]")
            if event.security:
                console.print(f"[yellow]redacted:[/] {', '.join(event.security.redacted_paths)}")


def replay_command(
    session_id: SessionId,
    from_seq: Annotated[int, typer.Option("--from-seq", min=1)] = 1,
    to_seq: Annotated[int | None, typer.Option("--to-seq", min=1)] = None,
    eventloom_path: EventloomPath = None,
    backend: BackendOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Print events of a session in order, each with its citation."""
    with handled(json_output):
        with open_fabric(eventloom_path, reads=True, sessions=session_id, backend=backend) as fabric:
            events = list(fabric.replay(session_id, from_seq, to_seq))
        if json_output:
            emit_json({"session": session_id, "events": [{**e.envelope(), "citation": e.citation} for e in events]})
            return
        table = Table(title=f"session {session_id}", show_lines=False)
        for column in ("seq", "timestamp", "type", "actor", "payload", "citation"):
            table.add_column(column, overflow="fold")
        for event in events:
            table.add_row(
                str(event.seq),
                event.timestamp,
                event.type,
                event.actor,
                _erased(event.erased) if event.erased else _preview(event.payload),
                event.citation,
            )
        console.print(table)


def verify_command(
    session_id: SessionId,
    eventloom_path: EventloomPath = None,
    backend: BackendOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Recompute the hash chain. Exit 0 when intact, 1 when broken (first broken seq is reported)."""
    with handled(json_output):
        with open_fabric(eventloom_path, reads=True, sessions=session_id, backend=backend) as fabric:
            report = fabric.verify(session_id)
        if json_output:
            emit_json(report)
        elif report.ok:
            console.print(f"[green]ok[/] {session_id}: {report.event_count} events, chain intact")
            for warning in report.warnings:
                console.print(f"[yellow]warning:[/] {warning}")
        else:
            console.print(
                f"[bold red]broken[/] {session_id} at seq {report.first_broken_seq}: {report.reason} "
                f"({report.event_count} events verified before it)"
            )
        if not report.ok:
            raise typer.Exit(EXIT_CHECK_FAILED)


def sessions_command(
    eventloom_path: EventloomPath = None, backend: BackendOption = None, json_output: JsonFlag = False
) -> None:
    """List sessions with their event counts."""
    with handled(json_output):
        with open_fabric(eventloom_path, reads=True, backend=backend) as fabric:
            summaries = fabric.sessions()
            root = fabric.location
        if json_output:
            emit_json({"eventloom_path": root, "sessions": summaries})
            return
        table = Table(title=f"sessions in {root}")
        for column in ("session", "events", "bytes", "modified"):
            table.add_column(column)
        for summary in summaries:
            events = f"damaged: {summary.damaged}" if summary.damaged else str(summary.event_count)
            table.add_row(summary.session, events, str(summary.size_bytes), summary.modified or "")
        console.print(table)
        for summary in summaries:
            if summary.damaged:
                console.print(f"[red]{summary.session} is damaged[/]: run `zaxy repair --session-id {summary.session}`")


def _erased(marker: dict) -> str:
    record = marker.get("record_seq")
    what = "unreadable bytes set aside" if marker.get("tombstone") == "damaged" else "erased"
    return f"[{what}; see event {record}]"


def _preview(payload: dict, limit: int = 80) -> str:
    import json

    text = json.dumps(payload, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"
