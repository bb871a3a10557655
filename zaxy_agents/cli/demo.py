"""`zaxy demo`: the main job on the embedded default — write memory, verify it, replay it with citations, and
check it out: the current fact with its citation, the superseded one excluded, answerability, a budgeted prompt."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.panel import Panel

from .common import EventloomPath, JsonFlag, console, emit_json, handled, open_fabric

DEMO_SESSION = "demo-project"

DEMO_QUESTION = "How many retry attempts does payments-service allow?"
DEMO_BUDGET = 400
RETRY_FACT = "payments-service max_retries"

DEMO_EVENTS: list[dict] = [
    {"type": "session.started", "actor": "agent", "payload": {"goal": "ship the payments retry fix"}},
    {
        "type": "task.created",
        "actor": "agent",
        "payload": {"task_id": "T-1", "title": "Add exponential backoff to payment retries"},
    },
    {
        "type": "fact.asserted",
        "actor": "agent",
        "payload": {
            "subject": "payments-service",
            "predicate": "max_retries",
            "fact": "payments-service retries are capped at 3 attempts",
        },
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
            "predicate": "max_retries",
            "fact": "payments-service retries are capped at 5 attempts",
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
    """Append a short agent history, verify the hash chain, replay it with citations, check memory out (current
    fact cited, superseded one excluded, answerability, budgeted prompt), detect tampering."""
    with handled(json_output):
        scratch = None if eventloom_path else Path(tempfile.mkdtemp(prefix="zaxy-demo-"))
        root = eventloom_path or scratch
        assert root is not None
        try:
            with open_fabric(root, backend="jsonl") as fabric:
                appended = fabric.append_many(DEMO_SESSION, DEMO_EVENTS)
                report = fabric.verify(DEMO_SESSION)
                resolved = fabric.resolve(appended[3].citation)
                checkout = _checkout(fabric)
                events = list(fabric.replay(DEMO_SESSION))
            tamper = _tamper_check(Path(root))
            result = {
                "eventloom_path": str(root),
                "session": DEMO_SESSION,
                "appended": len(appended),
                "verify": report.model_dump(mode="json", exclude_none=True),
                "resolved_citation": {"citation": appended[3].citation, "type": resolved.type},
                "checkout": checkout,
                "replay": [{"seq": e.seq, "type": e.type, "citation": e.citation} for e in events],
                "redacted_paths": [p for e in events if e.security for p in e.security.redacted_paths],
                "tamper_detected": tamper,
            }
            if json_output:
                emit_json(result)
            else:
                _render(result, events)
            if not report.ok or not tamper["detected"] or not checkout["current_fact"]:
                raise typer.Exit(1)
        finally:
            if scratch is not None and not keep:
                shutil.rmtree(scratch, ignore_errors=True)


def _checkout(fabric) -> dict:
    """Check memory out for the demo question: the current retry cap, cited; the superseded one, excluded."""
    packet = fabric.checkout(DEMO_QUESTION, session=DEMO_SESSION, max_tokens=DEMO_BUDGET)
    history = fabric.entity_history(DEMO_SESSION, RETRY_FACT, "fact")
    current = next((fact for fact in packet.current_facts if fact.name == RETRY_FACT), None)
    return {
        "query": DEMO_QUESTION,
        "answerability": packet.quality.answerability,
        "confidence": packet.quality.confidence,
        "current_fact": {"summary": current.summary, "citation": current.citation} if current else None,
        "superseded_excluded": [
            {"summary": version.summary, "citation": version.citation}
            for version in history
            if version.valid_to is not None and version.citation not in packet.prompt
        ],
        "superseded_excluded_count": packet.retention.superseded_excluded,
        "budget": {"requested": DEMO_BUDGET, "used": packet.diagnostics.budget_used},
        "prompt": packet.prompt,
    }


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


def _render_checkout(checkout: dict) -> None:
    current = checkout["current_fact"]
    lines = [
        f"question: {checkout['query']}",
        f"answerability: [bold]{checkout['answerability']}[/] (confidence {checkout['confidence']:.2f})",
        f"current fact: [green]{current['summary']}[/] ({current['citation']})" if current else "current fact: none",
        *(
            f"excluded as superseded: [strike]{item['summary']}[/] ({item['citation']})"
            for item in checkout["superseded_excluded"]
        ),
        f"prompt budget: {checkout['budget']['used']} of {checkout['budget']['requested']} tokens",
    ]
    console.print(Panel("\n".join(lines), title="memory checkout", expand=False))
    console.print(checkout["prompt"], markup=False, highlight=False)


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
    console.print("[bold]cited replay[/] (each event, then what it says)")
    width = max(40, min(console.width, 120) - 8)
    for event in events:
        console.print(f"  {event.seq:>2}  {event.type:<18} [cyan]{event.citation}[/]", highlight=False, soft_wrap=True)
        text = ", ".join(f"{k}={v}" for k, v in event.payload.items())
        console.print(f"      [dim]{word_cut(text, width)}[/]", highlight=False, markup=True)
    console.print(f"resolved {result['resolved_citation']['citation']} -> {result['resolved_citation']['type']}")
    _render_checkout(result["checkout"])
    if result["redacted_paths"]:
        console.print(f"secrets redacted before hashing: {', '.join(result['redacted_paths'])}")
    tamper = result["tamper_detected"]
    console.print(
        f"tampered copy: {'[green]detected[/]' if tamper['detected'] else '[red]NOT detected[/]'} at seq "
        f"{tamper['first_broken_seq']} ({tamper['reason']})"
    )
    console.print(Panel("\n".join(next_steps()), title="what next", expand=False), highlight=False)


def word_cut(text: str, width: int) -> str:
    """``text`` on one line, cut at a word boundary to ``width`` characters (never mid-word)."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return escape(flat)
    cut = flat[: width - 1]
    if " " in cut:
        cut = cut[: cut.rfind(" ")]
    return escape(cut.rstrip(",;:")) + " …"


def next_steps() -> list[str]:
    """Where a newcomer goes from here (commands this installation really has)."""
    from zaxy_agents.cli.app import app

    names = {command.name for command in app.registered_commands} | {group.name for group in app.registered_groups}
    steps = []
    if "ui" in names:
        steps.append("zaxy ui                      browse this memory: events, facts, citations")
    steps += [
        "zaxy hooks claude-code       capture your Claude Code sessions (or: codex)",
        "zaxy ide-config claude-code  give your agent the MCP tools (checkout first)",
        "docs/langgraph.md            LangGraph: store= and checkpointer=, templates",
        "zaxy demo --keep             keep this memory and explore it (zaxy replay)",
    ]
    return steps
