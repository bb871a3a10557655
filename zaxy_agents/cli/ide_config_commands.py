"""`zaxy ide-config <client>`: print or merge the MCP server entry for `zaxy serve` in a client's config."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from .common import JsonFlag, console, emit_json, handled

ExplicitEventloom = Annotated[
    Path | None,
    typer.Option(
        "--eventloom-path",
        help="A memory folder other than the workspace's .eventloom (written relative to the workspace; "
        "refused outside it in shared and user-scope files).",
        show_default=False,
    ),
]


def register(app: typer.Typer) -> None:
    app.command("ide-config")(ide_config_command)


def ide_config_command(
    client: Annotated[str, typer.Argument(help="claude-code, claude-desktop, cursor, vscode, codex or hermes.")],
    install: Annotated[bool, typer.Option("--install", help="Merge the entry into the client's config file.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing, different entry of this name.")] = False,
    scope: Annotated[
        str | None, typer.Option("--scope", help="project or user, where the client has both (see docs).")
    ] = None,
    name: Annotated[str, typer.Option("--name", help="Server name in the client's config.")] = "zaxy",
    eventloom_path: ExplicitEventloom = None,
    json_output: JsonFlag = False,
) -> None:
    """Print (default) or --install the MCP server entry pointing at this workspace's memory."""
    from zaxy_agents.capture import ide_config
    from zaxy_agents.capture.workspace import resolve_workspace

    with handled(json_output):
        workspace = resolve_workspace(os.getcwd())
        info = ide_config.describe(
            client, scope, workspace.root, name, str(eventloom_path.resolve()) if eventloom_path else None
        )
        if install:
            from zaxy_agents.capture.gitignore import ignore_eventloom

            info = ide_config.install(info, force=force)
            info["gitignore"] = ignore_eventloom(workspace.root, workspace.eventloom_path)
        if json_output:
            emit_json(info)
            return
        for warning in info["warnings"]:
            console.print(f"[yellow]note:[/] {warning}", soft_wrap=True)
        if install:
            verb = {"added": "added to", "replaced": "replaced in", "unchanged": "already in"}[info["action"]]
            console.print(f"MCP server [bold]{name}[/] {verb} {info['path']}")
            if info["gitignore"]["action"] == "added":
                console.print(
                    f"added {info['gitignore']['entry']} to {info['gitignore']['path']} (memory stays out of git)"
                )
            return
        console.print(f"[dim]# {client}: merge into {info['path']} (or rerun with --install)[/]")
        sys.stdout.write(info["snippet"])
        for label, path in info.get("documented_paths", {}).items():
            console.print(f"[dim]# {label}: {path}[/]")
        for command in info["commands"]:
            console.print(f"[dim]# or:[/] {command}", soft_wrap=True, highlight=False)
