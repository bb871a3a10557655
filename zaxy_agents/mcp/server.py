"""The MCP server on the SDK's low-level ``Server``: the HTTP transport's (and in-process tests') application.

Built on the SDK's low-level ``Server`` (``mcp>=1.24,<2``) rather than FastMCP, so the published schemas are
exactly our strict models and every error has our structured shape. Tool calls run in worker threads (the
fabric is synchronous); the event loop only shuttles messages. The tools themselves, their results and the
server's description are :class:`~zaxy_agents.mcp.app.McpApp`'s, shared with the stdio transport (``stdio.py``),
which speaks JSON-RPC without importing the SDK.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server

from zaxy_agents import __version__

from .app import INSTRUCTIONS, SERVER_NAME, McpApp
from .backend import Backend
from .caller import Caller
from .config import ServerConfig
from .finite import FiniteArgumentsServer


class ZaxyMcpServer(McpApp):
    """:class:`McpApp` behind the SDK's low-level server (``self.server``)."""

    def __init__(self, config: ServerConfig, backend: Backend | None = None) -> None:
        super().__init__(config, backend)
        self.server: Server[Any, Any] = FiniteArgumentsServer(
            SERVER_NAME, version=__version__, instructions=INSTRUCTIONS
        )
        self.server.list_tools()(self._list_tools)
        self.server.request_handlers[types.CallToolRequest] = self._handle_call_request

    async def _list_tools(self) -> list[types.Tool]:
        return [types.Tool.model_validate(tool) for tool in self.tools()]

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
        return self.stdio_caller()

    async def call_tool(self, name: str, arguments: dict[str, Any], caller: Caller) -> types.CallToolResult:
        """:meth:`McpApp.call_tool_result` in a worker thread, as the SDK's result type."""
        result = await anyio.to_thread.run_sync(functools.partial(self.call_tool_result, name, arguments, caller))
        return types.CallToolResult.model_validate(result)
