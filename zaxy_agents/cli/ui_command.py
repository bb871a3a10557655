"""`zaxy ui`: serve the Memory Inspector on 127.0.0.1 (see docs/ui.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from .common import BackendOption, EventloomPath, handled, locate_eventloom


def register(app: typer.Typer) -> None:
    app.command("ui")(ui_command)


def ui_command(
    eventloom_path: EventloomPath = None,
    backend: BackendOption = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (0: any free port).")] = 8766,
) -> None:
    """Open the Memory Inspector: sessions, timeline, citations, entities, checkout preview, reviews, forgetting.

    Prints the address to open; without a configured token (ZAXY_AUTH_TOKEN, ZAXY_ADMIN_TOKEN,
    ZAXY_SESSION_TOKENS_FILE) the address carries a token made for this run. Ctrl-C stops it.
    """
    with handled(False):
        import logging

        from zaxy_agents.config import ZaxySettings
        from zaxy_agents.fabric.location import memory_in_folder
        from zaxy_agents.ui.app import serve_ui
        from zaxy_agents.ui.config import UiConfig

        logging.basicConfig(level=logging.WARNING, format="zaxy ui: %(levelname)s %(name)s: %(message)s")
        overrides = {"backend": backend} if backend else {}
        settings = ZaxySettings.resolve(eventloom_path, **overrides)
        if memory_in_folder(settings):
            settings = ZaxySettings.resolve(locate_eventloom(eventloom_path, reads=True), **overrides)
        serve_ui(UiConfig.resolve(settings, host=host, port=port))
