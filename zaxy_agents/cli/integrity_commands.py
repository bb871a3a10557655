"""`zaxy repair` (and `zaxy memory erase`): keeping the log readable, and forgetting for real."""

from __future__ import annotations

from typing import Annotated

import typer

from .common import EXIT_CHECK_FAILED, BackendOption, EventloomPath, JsonFlag, console, emit_json, handled, open_fabric


def register(app: typer.Typer, memory_app: typer.Typer) -> None:
    app.command("repair")(repair_command)
    memory_app.command("erase")(erase_command)


def erase_command(
    session_id: Annotated[str | None, typer.Option("--session-id", "-s", help="Session whose events to erase.")] = None,
    from_seq: Annotated[int | None, typer.Option("--from-seq", min=1, help="First event to erase.")] = None,
    to_seq: Annotated[
        int | None, typer.Option("--to-seq", min=1, help="Last event to erase (default: from-seq).")
    ] = None,
    citation: Annotated[
        str | None, typer.Option("--citation", "-c", help="Erase the event this eventloom:// citation names.")
    ] = None,
    whole_session: Annotated[bool, typer.Option("--all", help="Erase every event of the session.")] = False,
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why (recorded; never repeat the erased content here).")
    ] = None,
    actor: Annotated[str, typer.Option("--actor", "-a", help="Who erases (recorded).")] = "zaxy",
    eventloom_path: EventloomPath = None,
    backend: BackendOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Erase events for real: their content leaves the log and every derived file; the chain still verifies and
    the erasure is recorded (what range, when, by whom; never the content). Pick one of --citation,
    --from-seq [--to-seq] or --all (with --session-id)."""
    from zaxy_agents.errors import InvalidRequestError

    with handled(json_output):
        chosen = [citation is not None, from_seq is not None, whole_session]
        if sum(chosen) != 1 or (citation is None and session_id is None):
            raise InvalidRequestError(
                "say what to erase: --citation C, or --session-id S with --from-seq N [--to-seq M] or --all",
                field="--citation" if citation is None and session_id is None else "--from-seq",
                remediation="zaxy memory erase -s my-project --from-seq 4 --to-seq 6 --reason 'user request'",
            )
        with open_fabric(eventloom_path, backend=backend) as fabric:
            if citation is not None:
                report = fabric.erase_citation(citation, actor=actor, reason=reason)
            elif whole_session:
                report = fabric.erase_session(session_id, actor=actor, reason=reason)
            else:
                report = fabric.erase_range(session_id, from_seq, to_seq or from_seq, actor=actor, reason=reason)
        if json_output:
            emit_json(report)
            return
        ranges = ", ".join(f"{r['from_seq']}-{r['to_seq']}" for r in report["ranges"]) or "nothing new"
        console.print(f"[green]erased[/] {report['erased']} events of {report['session']} ({ranges})")
        if report.get("record"):
            console.print(f"  recorded as {report['record']}")
        for name in ("already_erased", "kept", "unreadable"):
            if report[name]:
                console.print(f"  {name.replace('_', ' ')}: {', '.join(map(str, report[name]))}")


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
