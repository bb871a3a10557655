"""`zaxy serve`: the MCP server over stdio (default) or streamable HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import EventloomPath, err_console, handled, locate_eventloom


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)


def serve_command(
    eventloom_path: EventloomPath = None,
    transport: Annotated[str, typer.Option("--transport", help="stdio (default) or http.")] = "stdio",
    profile: Annotated[
        str | None,
        typer.Option("--profile", envvar="MCP_TOOL_PROFILE", help="Tools listed: core (default, 8 tools) or full."),
    ] = None,
    session_id: Annotated[
        str | None,
        typer.Option(
            "--session-id", "-s", envvar="ZAXY_SESSION_ID", help="stdio: session used when a call names none."
        ),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="http: address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="http: port.")] = 8765,
    insecure_local: Annotated[
        bool, typer.Option("--insecure-local", help="http: allow no token, only on a loopback address.")
    ] = False,
    rate_limit: Annotated[
        int | None,
        typer.Option("--rate-limit", min=1, help="http: requests per minute per client and session (default 600)."),
    ] = None,
    no_capture: Annotated[
        bool, typer.Option("--no-capture", help="Do not record tool.call.completed lifecycle events.")
    ] = False,
    client: Annotated[
        str | None,
        typer.Option(
            "--client",
            help="Serve a workspace for this client (claude-code, codex, cursor...): memory is the workspace's "
            ".eventloom and the default session the one that client's hooks write (no paths needed).",
        ),
    ] = None,
    workspace: Annotated[
        Path | None,
        typer.Option(
            "--workspace",
            help="The workspace folder (default: found from the working directory like git finds .git).",
            show_default=False,
        ),
    ] = None,
    no_share: Annotated[
        bool, typer.Option("--no-share", help="Do not coordinate with other `zaxy serve` processes on this folder.")
    ] = False,
) -> None:
    """Run the MCP server (tools: memory_checkout first). Exits when the client disconnects (stdio) or on Ctrl-C."""
    with handled(False):
        import logging

        from zaxy_agents.config import ZaxySettings
        from zaxy_agents.fabric.location import memory_in_folder
        from zaxy_agents.mcp.config import ServerConfig

        logging.basicConfig(level=logging.WARNING, format="zaxy serve: %(levelname)s %(name)s: %(message)s")
        workspace_mode = eventloom_path is None and (client is not None or workspace is not None)
        if not workspace_mode and memory_in_folder(ZaxySettings.resolve(eventloom_path)):
            eventloom_path = locate_eventloom(eventloom_path, reads=False)  # found like git finds .git, checked
        config = ServerConfig.resolve(
            eventloom_path,
            profile=profile,
            session_id=session_id,
            capture=False if no_capture else None,
            share=False if no_share else None,
            transport=transport,
            host=host,
            port=port,
            insecure_local=insecure_local,
            rate_limit_per_minute=rate_limit,
            client=client,
            workspace=workspace,
        )
        if config.transport == "http":
            from zaxy_agents.cli import startup_collector
            from zaxy_agents.mcp.http import serve_http

            startup_collector.resume()  # a long-lived HTTP server: the collector back on before serving

            serve_http(config)
        else:
            if insecure_local or rate_limit is not None:
                err_console.print("[yellow]note:[/] --insecure-local and --rate-limit only apply to --transport http")
            from zaxy_agents.cli import startup_collector
            from zaxy_agents.mcp.stdio import serve_stdio

            # the collector (off since start-up) back on after the first answered tool call, or once idle
            startup_collector.resume_later()
            serve_stdio(config, after_call=startup_collector.resume)
