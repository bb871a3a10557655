"""`zaxy demo`: the main job on the embedded default — write memory, verify it, replay it with citations."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.panel import Panel
from rich.table import Table

from .common import EventloomPath, JsonFlag, console, emit_json, handled, open_fabric

DEMO_SESSION = "demo-project"

DEMO_EVENTS: list[dict] = [
    {"type": "session.started", "actor": "agent", "payload": {"goal": "ship the payments retry fix"}},
    {
        "type": "task.created",
        "actor": "agent",
        "payload": {"task_id": "T-1", "title": "Add exponential backoff to payment retries"},
    },
    {
        "type": "decision.recorded",
        "actor": "agent",
        "payload": {"decision": "Use jittered backoff capped at 30s", "rationale": "avoid thundering herd"},
    },
    {
        "type": "fact.asserted",
        "actor": "agent",
        "payload": {
            "subject": "payments-service",
            "fact": "retries are capped at 5 attempts",
            "api_key": "sk-demo1234567890abcdefghijkl",
        },
    },
    {"type": "command.completed", "actor": "agent", "payload": {"command": "pytest tests/payments -q", "exit_code": 0}},
    {"type": "task.completed", "actor": "agent", "payload": {"task_id": "T-1", "status": "done"}},
]


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)


def demo_command(
    eventloom_path: EventloomPath = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the demo log folder instead of deleting it.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """Append a short agent history, verify the hash chain, replay it with citations, detect tampering."""
    with handled(json_output):
        scratch = None if eventloom_path else Path(tempfile.mkdtemp(prefix="zaxy-demo-"))
        root = eventloom_path or scratch
        assert root is not None
        try:
            with open_fabric(root, backend="jsonl") as fabric:
                appended = fabric.append_many(DEMO_SESSION, DEMO_EVENTS)
                report = fabric.verify(DEMO_SESSION)
                resolved = fabric.resolve(appended[2].citation)
                events = list(fabric.replay(DEMO_SESSION))
            tamper = _tamper_check(Path(root))
            result = {
                "eventloom_path": str(root),
                "session": DEMO_SESSION,
                "appended": len(appended),
                "verify": report.model_dump(mode="json", exclude_none=True),
                "resolved_citation": {"citation": appended[2].citation, "type": resolved.type},
                "replay": [{"seq": e.seq, "type": e.type, "citation": e.citation} for e in events],
                "redacted_paths": [p for e in events if e.security for p in e.security.redacted_paths],
                "tamper_detected": tamper,
            }
            if json_output:
                emit_json(result)
            else:
                _render(result, events)
            if not report.ok or not tamper["detected"]:
                raise typer.Exit(1)
        finally:
            if scratch is not None and not keep:
                shutil.rmtree(scratch, ignore_errors=True)


def _tamper_check(root: Path) -> dict:
    """Copy the log, flip one character in an event, and show that verification pinpoints it."""
    with tempfile.TemporaryDirectory(prefix="zaxy-tamper-") as copy_dir:
        source = root / f"{DEMO_SESSION}.jsonl"
        target = Path(copy_dir) / source.name
        data = bytearray(source.read_bytes())
        index = data.find(b"capped at 5")
        data[index + len(b"capped at ")] = ord("9")
        target.write_bytes(bytes(data))
        with open_fabric(Path(copy_dir), backend="jsonl") as fabric:
            report = fabric.verify(DEMO_SESSION)
    return {"detected": not report.ok, "first_broken_seq": report.first_broken_seq, "reason": report.reason}


def _render(result: dict, events: list) -> None:
    verify = result["verify"]
    console.print(
        Panel.fit(
            f"session [bold]{result['session']}[/] in {result['eventloom_path']}\n"
            f"appended {result['appended']} events; chain {'[green]intact[/]' if verify['ok'] else '[red]BROKEN[/]'} "
            f"({verify['event_count']} events verified)",
            title="Zaxy Agents demo",
        )
    )
    table = Table(title="cited replay")
    for column in ("seq", "type", "payload", "citation"):
        table.add_column(column, overflow="fold")
    for event in events:
        text = ", ".join(f"{k}={v}" for k, v in event.payload.items())
        table.add_row(str(event.seq), event.type, text[:70], event.citation)
    console.print(table)
    console.print(f"resolved {result['resolved_citation']['citation']} -> {result['resolved_citation']['type']}")
    if result["redacted_paths"]:
        console.print(f"secrets redacted before hashing: {', '.join(result['redacted_paths'])}")
    tamper = result["tamper_detected"]
    console.print(
        f"tampered copy: {'[green]detected[/]' if tamper['detected'] else '[red]NOT detected[/]'} at seq "
        f"{tamper['first_broken_seq']} ({tamper['reason']})"
    )
