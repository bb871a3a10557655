"""`zaxy hooks ...` and `zaxy hook-event`: install, inspect and switch off IDE lifecycle capture."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from zaxy_agents.errors import InvalidRequestError

from .common import JsonFlag, console, emit_json, handled, open_fabric

hooks_app = typer.Typer(
    help="Capture Claude Code / Codex sessions into workspace memory and restore context after compaction.",
    no_args_is_help=True,
)

InstallPath = Annotated[
    Path | None,
    typer.Option(
        "--eventloom-path",
        help="Bake this Eventloom folder into the hook commands (default: resolved per event from the workspace).",
        show_default=False,
    ),
]
PrintFlag = Annotated[bool, typer.Option("--print", help="Print the hooks that would be merged; write nothing.")]
ForceFlag = Annotated[bool, typer.Option("--force", help="Replace an existing, different Zaxy entry.")]


def register(app: typer.Typer) -> None:
    app.add_typer(hooks_app, name="hooks")
    app.command("hook-event", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(
        hook_event_command
    )


def _workspace(eventloom_path: Path | None = None) -> Any:
    from zaxy_agents.capture.workspace import resolve_workspace

    return resolve_workspace(os.getcwd(), str(eventloom_path.resolve()) if eventloom_path else None)


def _print_gitignore(result: dict[str, Any]) -> None:
    if result["action"] == "added":
        console.print(f"added {result['entry']} to {result['path']} (memory stays out of git)")


def _install(
    client: str, scope: str, print_only: bool, force: bool, eventloom_path: Path | None, json_output: bool
) -> None:
    from zaxy_agents.capture import hook_install

    with handled(json_output):
        workspace = _workspace()
        report = hook_install.install(
            client,
            scope,
            workspace.root,
            force=force,
            write=not print_only,
            eventloom_path=str(eventloom_path.resolve()) if eventloom_path else None,
        )
        report["session"] = workspace.session_for(client)
        report["eventloom_path"] = str(eventloom_path.resolve()) if eventloom_path else workspace.eventloom_path
        if not print_only:
            from zaxy_agents.capture.gitignore import ignore_eventloom

            report["gitignore"] = ignore_eventloom(workspace.root, report["eventloom_path"])
        if json_output:
            emit_json(report)
            return
        if print_only:
            import json

            console.print(f"[dim]would merge into {report['path']}:[/]")
            sys.stdout.write(json.dumps({"hooks": report["hooks"]}, indent=2) + "\n")
            return
        verb = "wrote" if report["written"] else "already up to date:"
        console.print(f"{verb} [bold]{report['path']}[/] ({client}, scope {scope})")
        for warning in report["warnings"]:
            console.print(f"[yellow]note:[/] {warning}", soft_wrap=True)
        for event, action in report["events"].items():
            console.print(f"  {event}: {action}")
        console.print(f"memory session [cyan]{report['session']}[/] in {report['eventloom_path']}")
        _print_gitignore(report["gitignore"])
        if client == "codex":
            console.print(
                "[yellow]Codex runs new hooks only after you trust them[/] (it asks on the next start); "
                "a project-level .codex/ folder is read only for trusted projects."
            )


def claude_code_command(
    scope: Annotated[
        str, typer.Option("--scope", help="local (.claude/settings.local.json), project, or user.")
    ] = "local",
    print_only: PrintFlag = False,
    force: ForceFlag = False,
    eventloom_path: InstallPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Install Zaxy's Claude Code hooks (SessionStart context packets, prompts, tools, compaction, stop)."""
    _install("claude-code", scope, print_only, force, eventloom_path, json_output)


def codex_command(
    scope: Annotated[
        str, typer.Option("--scope", help="project (.codex/hooks.json) or user ($CODEX_HOME).")
    ] = "project",
    print_only: PrintFlag = False,
    force: ForceFlag = False,
    eventloom_path: InstallPath = None,
    json_output: JsonFlag = False,
) -> None:
    """Install Zaxy's Codex hooks (same events and packets as Claude Code)."""
    _install("codex", scope, print_only, force, eventloom_path, json_output)


def uninstall_command(
    client: Annotated[str, typer.Argument(help="claude-code or codex")],
    scope: Annotated[str | None, typer.Option("--scope", help="Only this scope (default: every scope).")] = None,
    json_output: JsonFlag = False,
) -> None:
    """Remove Zaxy's hook entries (other hooks stay)."""
    from zaxy_agents.capture import hook_install

    with handled(json_output):
        if client not in hook_install.SCOPES:
            raise InvalidRequestError(
                f"unknown client {client!r}", field="client", remediation="Use claude-code or codex."
            )
        workspace = _workspace()
        scopes = [scope] if scope else list(hook_install.SCOPES[client])
        reports = [hook_install.uninstall(client, each, workspace.root) for each in scopes]
        if json_output:
            emit_json({"client": client, "results": reports})
            return
        for report in reports:
            if report["removed"]:
                console.print(f"removed Zaxy hooks from [bold]{report['path']}[/]: {', '.join(report['removed'])}")
        if not any(report["removed"] for report in reports):
            console.print("no Zaxy hooks found")


def _write_workspace_config(key: str, value: Any) -> tuple[Any, Path]:
    from zaxy_agents.capture.config_files import atomic_write_text, dump_json, load_json_object
    from zaxy_agents.capture.workspace import workspace_config_path

    workspace = _workspace()
    path = Path(workspace_config_path(workspace.root))
    config = load_json_object(path) or {}
    config[key] = value
    atomic_write_text(path, dump_json(config))
    return workspace, path


def _set_enabled(enabled: bool, json_output: bool) -> None:
    with handled(json_output):
        workspace, path = _write_workspace_config("enabled", enabled)
        if json_output:
            emit_json({"workspace": workspace.root, "config_path": str(path), "enabled": enabled})
        else:
            state = "enabled" if enabled else "disabled"
            console.print(f"capture {state} for {workspace.root} ({path})")
            if enabled and os.environ.get("ZAXY_HOOKS_DISABLED"):
                console.print("[yellow]ZAXY_HOOKS_DISABLED is set in this environment and still wins.[/]")


def disable_command(json_output: JsonFlag = False) -> None:
    """Switch capture off for this workspace (hooks stay installed and exit immediately)."""
    _set_enabled(False, json_output)


def enable_command(json_output: JsonFlag = False) -> None:
    """Switch capture back on for this workspace."""
    _set_enabled(True, json_output)


def sharing_command(
    state: Annotated[str, typer.Argument(help="on: recall every client's session of this workspace together; off.")],
    json_output: JsonFlag = False,
) -> None:
    """One workspace, one memory: recall Claude Code, Codex and Cursor sessions of this workspace together (on,
    the default) or keep each client's memory to itself (off). Written to .zaxy/hooks.json (commit it to decide
    for the team); ZAXY_WORKSPACE_SHARING=0|1 overrides it."""
    with handled(json_output):
        if state not in ("on", "off"):
            raise InvalidRequestError(f"unknown state {state!r}", field="state", remediation="Use on or off.")
        workspace, path = _write_workspace_config("workspace_sharing", state == "on")
        if json_output:
            emit_json({"workspace": workspace.root, "config_path": str(path), "workspace_sharing": state == "on"})
            return
        what = "recalled together" if state == "on" else "kept per client"
        console.print(f"sessions of {workspace.root} are {what} ({path})")
        if os.environ.get("ZAXY_WORKSPACE_SHARING"):
            console.print("[yellow]ZAXY_WORKSPACE_SHARING is set in this environment and still wins.[/]")


def status_command(json_output: JsonFlag = False) -> None:
    """What is installed, where memory goes, when capture last wrote, and recent hook errors."""
    from zaxy_agents.capture import hook_install

    with handled(json_output):
        workspace = _workspace()
        clients = {}
        with open_fabric(Path(workspace.eventloom_path)) as fabric:
            damaged = fabric.damaged_sessions()
            for client in hook_install.SCOPES:
                session = workspace.session_for(client)
                last = None if session in damaged else fabric.last_event(session)
                clients[client] = {
                    "session": session,
                    "installed": hook_install.installed(client, workspace.root),
                    "events": last["seq"] if last else 0,
                    "last_write": last["timestamp"] if last else None,
                    "last_event": {"type": last["type"], "citation": last["citation"]} if last else None,
                }
            errors = fabric.hook_errors(workspace.root)
            sessions = [
                {"session": summary.session, "events": summary.event_count, "modified": summary.modified}
                for summary in fabric.log.sessions()
                if workspace.is_workspace_session(summary.session)
            ]
        report = {
            "workspace": workspace.to_dict(),
            "clients": clients,
            "workspace_sessions": sessions,
            "damaged_sessions": damaged,
            "errors": errors,
        }
        if json_output:
            emit_json(report)
            return
        _print_status(report)


def _print_status(report: dict[str, Any]) -> None:
    workspace = report["workspace"]
    state = "[green]enabled[/]" if workspace["enabled"] else f"[yellow]disabled[/] ({workspace['disabled_by']})"
    console.print(f"workspace [bold]{workspace['root']}[/]  capture {state}")
    console.print(f"eventloom {workspace['eventloom_path']}")
    sharing = "[green]recalled together[/]" if workspace["workspace_sharing"] else "[yellow]kept per client[/]"
    names = ", ".join(f"{row['session']} ({row['events']})" for row in report["workspace_sessions"]) or "none yet"
    console.print(f"workspace sessions {sharing}: {names}")
    for client, info in report["clients"].items():
        console.print(f"\n[bold]{client}[/]  session [cyan]{info['session']}[/]")
        for row in info["installed"]:
            if row["events"]:
                stale = f"  [red]missing executable: {', '.join(row['stale'])}[/]" if row["stale"] else ""
                console.print(f"  {row['scope']:<8} {row['path']}: {', '.join(row['events'])}{stale}")
        if not any(row["events"] for row in info["installed"]):
            console.print(f"  not installed (run: zaxy hooks {client})")
        last = info["last_event"]
        if last:
            console.print(f"  {info['events']} events, last write {info['last_write']} ({last['type']})")
        else:
            console.print("  no events captured yet")
    for session, why in report.get("damaged_sessions", {}).items():
        console.print(f"\n[red]damaged session {session}[/]: {why}\n  fix: zaxy repair --session-id {session}")
    errors = report["errors"]
    if errors["count"]:
        console.print(f"\n[red]{errors['count']} hook errors[/] (in {', '.join(errors['files'])}); most recent:")
        for record in errors["recent"][-3:]:
            where = f"{record.get('at', '?')} {record.get('event', '?')}"
            console.print(f"  {where}: {record.get('error_type', '')} {record.get('error', '')}")
    else:
        console.print("\nno hook errors")


def packet_command(
    client: Annotated[
        str, typer.Option("--client", help="claude-code or codex (picks the memory session).")
    ] = "claude-code",
    kind: Annotated[
        str, typer.Option("--kind", help="recovery (after compaction) or bootstrap (session start).")
    ] = "recovery",
    max_chars: Annotated[int, typer.Option("--max-chars", min=400, max=7900)] = 6000,
    json_output: JsonFlag = False,
) -> None:
    """Show the context packet the SessionStart hook would inject now (inspect before you trust it)."""
    from zaxy_agents.workingset import render_packet

    with handled(json_output):
        workspace = _workspace()
        session = workspace.session_for(client)
        if kind not in ("recovery", "bootstrap"):
            raise InvalidRequestError(
                f"unknown kind {kind!r}", field="--kind", remediation="Use recovery or bootstrap."
            )
        with open_fabric(Path(workspace.eventloom_path)) as fabric:
            if not fabric.log.has_session(session):
                packet = None
            else:
                names = [summary.session for summary in fabric.log.sessions()]
                others = workspace.shared_sessions(session, names)
                packet = render_packet(fabric.working_set(session, sessions=others), kind, max_chars)
        if json_output:
            emit_json(packet.to_dict() if packet else {"session": session, "kind": kind, "text": "", "chars": 0})
        elif packet is None or packet.is_empty:
            console.print(f"nothing to inject yet for session {session}")
        else:
            sys.stdout.write(packet.text)


def hook_event_command(ctx: typer.Context) -> None:
    """Hook sink for Claude Code / Codex: reads the hook JSON on stdin, appends to the workspace log, exits 0.

    Usage: zaxy hook-event <HookEvent> [--client claude-code|codex] [--eventloom-path PATH] [--max-chars N].
    Installed by `zaxy hooks claude-code` / `zaxy hooks codex`; runs without Typer on the fast path.
    """
    from zaxy_agents.capture.hook_sink import run

    raise typer.Exit(run(list(ctx.args)))


hooks_app.command("claude-code")(claude_code_command)
hooks_app.command("codex")(codex_command)
hooks_app.command("status")(status_command)
hooks_app.command("uninstall")(uninstall_command)
hooks_app.command("disable")(disable_command)
hooks_app.command("enable")(enable_command)
hooks_app.command("packet")(packet_command)
hooks_app.command("sharing")(sharing_command)
