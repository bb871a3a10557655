"""The MCP server: tools/list per profile, tools/call through the executor, lifecycle capture, stdio transport.

Built on the SDK's low-level ``Server`` (``mcp>=1.24,<2``) rather than FastMCP, so the published schemas are
exactly our strict models and every error has our structured shape. Tool calls run in worker threads (the
fabric is synchronous); the event loop only shuttles messages.
"""

from __future__ import annotations

import functools
import json
import logging
import signal
import time
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server

from zaxy_agents import __version__
from zaxy_agents.errors import InvalidRequestError, ZaxyError

from . import executor, registry
from .backend import Backend
from .caller import Caller
from .capture import LifecycleCapture
from .config import SESSION_HEADER, ServerConfig
from .finite import NON_FINITE_KEY, FiniteArgumentsServer

logger = logging.getLogger("zaxy.mcp")

INSTRUCTIONS = """Zaxy is this workspace's memory: an append-only, hash-chained log with a budgeted, cited checkout.
Call memory_checkout before answering questions about the project or resuming work, and follow its answerability
(answer_from_memory, refresh_recommended with a suggested memory_query, or ask_user). Cite the eventloom://
citations you rely on. Remember decisions, facts and task changes with memory_append; retract what stopped being
true with memory_invalidate; say what helped with memory_feedback. memory_capabilities lists every tool,
including those callable by name but not listed under the current profile."""


class ZaxyMcpServer:
    """The MCP application: one per process, shared by the stdio and HTTP transports."""

    def __init__(self, config: ServerConfig, backend: Backend | None = None) -> None:
        self.config = config
        self.backend = backend or Backend(config.settings, share=config.share)
        self.capture = LifecycleCapture(config.settings.eventloom_path, enabled=config.capture)
        self.server: Server[Any, Any] = FiniteArgumentsServer("zaxy", version=__version__, instructions=INSTRUCTIONS)
        self.server.list_tools()(self._list_tools)
        self.server.request_handlers[types.CallToolRequest] = self._handle_call_request

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self.backend.start()

    def close(self, transport: str = "stdio") -> None:
        """Record ``session.ended`` for the default session (stdio: the one client this process served), flush
        lifecycle capture, then hand the graph over."""
        if transport == "stdio":
            self.capture.record_session_ended(
                self.config.default_session, transport=transport, client=self.config.client
            )
        self.capture.close()
        self.backend.close()

    # ------------------------------------------------------------------ MCP handlers
    async def _list_tools(self) -> list[types.Tool]:
        return [_to_mcp_tool(spec) for spec in registry.listed(self.config.profile)]  # type: ignore[arg-type]

    async def _handle_call_request(self, request: types.CallToolRequest) -> types.ServerResult:
        caller = self._caller_for_request()
        result = await self.call_tool(request.params.name, request.params.arguments or {}, caller)
        return types.ServerResult(result)

    def _caller_for_request(self) -> Caller:
        """HTTP requests carry a caller prepared by the auth layer; stdio callers are the local user."""
        try:
            request = self.server.request_context.request
        except LookupError:
            request = None
        prepared = getattr(request, "scope", {}).get("zaxy_caller") if request is not None else None
        if prepared is not None:
            return Caller(
                session=prepared["session"],
                transport="http",
                restricted=True,
                admin=prepared["admin"],
                server=self.describe("http"),
            )
        return Caller(
            session=self.config.default_session,
            transport="stdio",
            server=self.describe("stdio"),
            default_scope=self.config.shared_sessions() or None,
        )

    async def call_tool(self, name: str, arguments: dict[str, Any], caller: Caller) -> types.CallToolResult:
        """Validate, run (here or in the owner process), capture, and shape the MCP result."""
        started = time.perf_counter()
        spec = registry.get(name)
        session = caller.session
        try:
            non_finite = arguments.pop(NON_FINITE_KEY, None)
            if non_finite is not None:
                raise InvalidRequestError(
                    f"a number is NaN or infinite at {non_finite}",
                    field=str(non_finite).removeprefix("arguments."),
                    remediation="Send finite numbers only (1e400 is read as infinity); store others as strings.",
                )
            spec, _args, bound = executor.prepare(name, arguments, caller)
            session = bound.session
            result = await anyio.to_thread.run_sync(
                functools.partial(self.backend.execute, name, arguments, bound, read_only=spec.read_only)
            )
        except ZaxyError as exc:
            return self._finish_error(exc, name, spec, arguments, session, caller, started)
        except Exception as exc:  # never a traceback to the client
            logger.exception("tool %s failed", name)
            error = ZaxyError(
                f"{name} failed with {type(exc).__name__}",
                code="internal_error",
                remediation="The server's stderr has the details; retry once.",
            )
            return self._finish_error(error, name, spec, arguments, session, caller, started)
        self.capture.record(
            session,
            tool=name,
            status="ok",
            arguments=arguments,
            summary=executor.summarize(spec, result),
            duration_ms=(time.perf_counter() - started) * 1000,
            transport=caller.transport,
        )
        text = executor.render(spec, result) or json.dumps(result, ensure_ascii=False, default=str)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structuredContent=result, isError=False
        )

    def _finish_error(
        self,
        error: ZaxyError,
        name: str,
        spec: registry.ToolSpec | None,
        arguments: dict[str, Any],
        session: str,
        caller: Caller,
        started: float,
    ) -> types.CallToolResult:
        body = error.to_dict()
        if spec is not None:  # unknown tools are not captured: their name is caller-controlled noise
            self.capture.record(
                session,
                tool=name,
                status="error",
                arguments=arguments,
                summary=f"{error.code}: {error.message}",
                duration_ms=(time.perf_counter() - started) * 1000,
                transport=caller.transport,
                error_code=error.code,
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
            structuredContent=body,
            isError=True,
        )

    # ------------------------------------------------------------------ reporting
    def describe(self, transport: str) -> dict[str, Any]:
        """What memory_capabilities reports about the server (profile, unlisted tools, process role)."""
        listed = [spec.name for spec in registry.listed(self.config.profile)]  # type: ignore[arg-type]
        every = [spec.name for spec in registry.all_tools()]
        process = self.backend.describe()
        if transport == "http":  # the owner socket lives in the workspace: no filesystem paths over HTTP
            process.pop("socket", None)
        return {
            "name": "zaxy",
            "version": __version__,
            "transport": transport,
            "profile": self.config.profile,
            "listed_tools": listed,
            "unlisted_tools": [name for name in every if name not in listed],
            "default_session": self.config.default_session if transport == "stdio" else None,
            "session_header": SESSION_HEADER if transport == "http" else None,
            "lifecycle_capture": self.capture.enabled,
            "lifecycle_stats": self.capture.stats(),
            "process": process,
            "workspace": self._describe_workspace(transport),
        }

    def _describe_workspace(self, transport: str) -> dict[str, Any] | None:
        """Which workspace and client this server serves, and which sessions it recalls together (stdio)."""
        workspace = self.config.workspace
        if workspace is None or transport != "stdio":
            return None
        return {
            "root": workspace.root,
            "client": self.config.client,
            "sharing": workspace.sharing and not workspace.session_forced,
            "sharing_disabled_by": workspace.sharing_disabled_by,
            "shared_sessions": self.config.shared_sessions(),
        }


def _to_mcp_tool(spec: registry.ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        description=spec.description,
        inputSchema=spec.input_schema(),
        annotations=types.ToolAnnotations(
            readOnlyHint=spec.read_only,
            destructiveHint=False,
            idempotentHint=spec.read_only,
            openWorldHint=False,
        ),
    )


# ---------------------------------------------------------------------- stdio
def serve_stdio(config: ServerConfig) -> None:
    """Serve over stdin/stdout until the client closes stdin (or SIGTERM/SIGINT), then hand over cleanly."""
    app = ZaxyMcpServer(config)
    app.start()
    try:
        anyio.run(_run_stdio, app)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # finish the hand-over even if the client escalates
        app.close()


async def _run_stdio(app: ZaxyMcpServer) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as group:
        group.start_soon(_stop_on_signal, group.cancel_scope)
        await app.server.run(read_stream, write_stream, app.server.create_initialization_options())
        group.cancel_scope.cancel()


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    try:
        receiver = anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT)
    except NotImplementedError:  # pragma: no cover - platforms without loop signal handlers
        return
    with receiver as signals:
        async for _ in signals:
            scope.cancel()
            return
