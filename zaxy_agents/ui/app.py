"""The inspector's web application (Starlette) and ``serve_ui``, which runs it until Ctrl-C."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from pathlib import Path
from typing import Any

from zaxy_agents.fabric.location import printable_location

from . import api
from .config import UiConfig
from .guard import Guard
from .live import live
from .runner import InspectorRunner

STATIC = Path(__file__).parent / "static"
SHUTDOWN_GRACE_SECONDS = 2

ROUTES: list[tuple[str, api.Handler, str]] = [
    ("/api/me", api.me, "GET"),
    ("/api/sessions", api.sessions, "GET"),
    ("/api/citation", api.citation, "GET"),
    ("/api/sessions/{session}/chain", api.chain, "GET"),
    ("/api/sessions/{session}/events", api.events, "GET"),
    ("/api/sessions/{session}/events/{seq:int}", api.event, "GET"),
    ("/api/sessions/{session}/entities", api.entities, "GET"),
    ("/api/sessions/{session}/entity", api.entity, "GET"),
    ("/api/sessions/{session}/checkout", api.checkout, "POST"),
    ("/api/sessions/{session}/causal", api.causal, "GET"),
    ("/api/sessions/{session}/consolidation", api.consolidation, "GET"),
    ("/api/sessions/{session}/consolidation/review", api.review, "POST"),
    ("/api/sessions/{session}/uncertainty", api.uncertainty, "GET"),
    ("/api/sessions/{session}/invalidate", api.invalidate, "POST"),
    ("/api/sessions/{session}/erase/preview", api.erase_preview, "POST"),
    ("/api/sessions/{session}/erase", api.erase, "POST"),
    ("/api/sessions/{session}/live", live, "GET"),
]


def build_app(config: UiConfig, runner: InspectorRunner) -> Any:
    """The application: the page and its assets (public: they hold no memory), the API behind the guard."""
    from starlette.applications import Starlette
    from starlette.responses import FileResponse, JSONResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    async def page(_request: Any) -> Any:
        return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8")

    async def healthz(_request: Any) -> Any:
        return JSONResponse({"ok": True, "server": "zaxy-ui"})

    async def unknown_api(_request: Any) -> Any:
        body = {"error": {"code": "not_found", "message": "no such API", "remediation": "See docs/ui.md."}}
        return JSONResponse(body, status_code=404)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> Any:
        app.state.stopping = asyncio.Event()
        runner.warm()
        try:
            yield
        finally:
            app.state.stopping.set()

    routes = [Route("/", page), Route("/healthz", healthz)]
    routes += [Route(path, api.endpoint(handler, runner), methods=[method]) for path, handler, method in ROUTES]
    routes += [
        Route("/api/{rest:path}", unknown_api, methods=["GET", "POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    return Guard(app, tokens=config.tokens, host=config.host, port=config.port, loopback=config.loopback)


def serve_ui(config: UiConfig) -> None:
    """Bind, print the address (with the token when zaxy ui made one), serve until SIGINT/SIGTERM."""
    import signal

    import uvicorn

    def stop(_signum: int, _frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((config.host, config.port))
    config.port = listener.getsockname()[1]  # --port 0: the one the system chose
    listener.listen(128)  # connections queue from now on: the printed address never refuses while uvicorn starts
    runner = InspectorRunner(config.settings)
    try:
        server = uvicorn.Server(
            uvicorn.Config(
                build_app(config, runner),
                log_level="warning",
                lifespan="on",
                access_log=False,
                timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
            )
        )
        host = f"[{config.host}]" if ":" in config.host else config.host
        address = f"http://{host}:{config.port}/"
        if config.generated_token:
            address += f"#token={config.generated_token}"
            how = "the token in this address is valid until zaxy ui stops"
        else:
            how = "sign in with ZAXY_AUTH_TOKEN, ZAXY_ADMIN_TOKEN or a session token"
        sys.stdout.write(
            f"zaxy ui: {address}\n  memory: {printable_location(config.settings)}; {how}; Ctrl-C stops it\n"
        )
        sys.stdout.flush()
        server.run(sockets=[listener])
    finally:
        runner.close()
        listener.close()
