"""`zaxy capture codex|claude [--watch]`: backfill or follow client transcripts into workspace memory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from .common import JsonFlag, console, emit_json, handled, open_fabric

capture_app = typer.Typer(
    help="Capture Codex rollouts / Claude Code transcripts of this workspace into its memory session.",
    no_args_is_help=True,
)

WatchFlag = Annotated[bool, typer.Option("--watch", help="Keep polling in the foreground until Ctrl-C.")]
Interval = Annotated[float, typer.Option("--interval", min=0.2, help="Seconds between polls with --watch.")]
CaptureLoomPath = Annotated[
    Path | None,
    typer.Option(
        "--eventloom-path",
        envvar="ZAXY_EVENTLOOM_PATH",
        help="Eventloom folder (default: <workspace>/.eventloom).",
        show_default=False,
    ),
]


def register(app: typer.Typer) -> None:
    app.add_typer(capture_app, name="capture")


def _run(
    source: str, watch: bool, interval: float, eventloom_path: Path | None, json_output: bool, **options: Any
) -> None:
    from zaxy_agents.capture.transcript_capture import capture
    from zaxy_agents.capture.workspace import resolve_workspace

    with handled(json_output):
        workspace = resolve_workspace(os.getcwd(), str(eventloom_path.resolve()) if eventloom_path else None)
        if not workspace.enabled:
            result = {"workspace": workspace.root, "disabled_by": workspace.disabled_by, "appended": 0}
            if json_output:
                emit_json(result)
            else:
                console.print(f"capture is disabled for {workspace.root} ({workspace.disabled_by}); nothing done")
            return

        def progress(report: dict[str, Any]) -> None:
            if watch and not json_output and report["appended"]:
                console.print(f"+{report['appended']} events -> {report['session']}")

        with open_fabric(Path(workspace.eventloom_path)) as fabric:
            totals = capture(fabric, workspace, source, watch=watch, interval=interval, on_report=progress, **options)
        totals.update({"workspace": workspace.root, "eventloom_path": workspace.eventloom_path})
        if json_output:
            emit_json(totals)
        else:
            console.print(
                f"captured {totals['appended']} events from {totals['files']} {source} files into "
                f"[cyan]{totals['session']}[/] ({totals['skipped_duplicates']} already recorded by hooks)"
            )


def codex_command(
    watch: WatchFlag = False,
    interval: Interval = 2.0,
    codex_home: Annotated[
        Path | None, typer.Option("--codex-home", envvar="CODEX_HOME", help="Codex home (default ~/.codex).")
    ] = None,
    eventloom_path: CaptureLoomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Capture Codex rollouts ($CODEX_HOME/sessions/**/rollout-*.jsonl) whose cwd is this workspace."""
    _run("codex", watch, interval, eventloom_path, json_output, home=str(codex_home) if codex_home else None)


def claude_command(
    watch: WatchFlag = False,
    interval: Interval = 2.0,
    claude_dir: Annotated[
        Path | None,
        typer.Option("--claude-dir", envvar="CLAUDE_CONFIG_DIR", help="Claude Code config folder (default ~/.claude)."),
    ] = None,
    eventloom_path: CaptureLoomPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Capture Claude Code transcripts (~/.claude/projects/<workspace>/*.jsonl) of this workspace."""
    _run("claude", watch, interval, eventloom_path, json_output, config_dir=str(claude_dir) if claude_dir else None)


capture_app.command("codex")(codex_command)
capture_app.command("claude")(claude_command)
