"""A synchronous facade over the real MCP client, one event loop per client in its own thread.

Several clients must open and close in any order (the owner may leave before a proxy); anyio cancel scopes
forbid that inside one task, so each client lives in its own thread and loop.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def serve_params(eventloom: Path, *extra: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "zaxy_agents.cli.entry", "serve", "--eventloom-path", str(eventloom), *extra],
        env={**os.environ, **(env or {})},
    )


class StdioClient:
    """``zaxy serve`` launched as a subprocess and driven through ``mcp.client.stdio`` + ``ClientSession``."""

    def __init__(self, params: StdioServerParameters, timeout: float = 60, errlog: Path | None = None) -> None:
        self.timeout = timeout
        self.errlog = errlog
        self._loop = asyncio.new_event_loop()
        self._ready: Future[ClientSession] = Future()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, args=(params,), daemon=True)
        self._thread.start()
        self.session = self._ready.result(timeout=timeout)

    def _run(self, params: StdioServerParameters) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main(params))

    async def _main(self, params: StdioServerParameters) -> None:
        self._stop = asyncio.Event()
        try:
            with open(self.errlog or os.devnull, "a") as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                    await session.initialize()
                    self._ready.set_result(session)
                    await self._stop.wait()
        except BaseException as exc:  # surface start-up failures to the constructor
            if not self._ready.done():
                self._ready.set_exception(exc)

    def _do(self, factory: Callable[[], Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(factory(), self._loop).result(timeout=self.timeout)

    def stderr(self) -> str:
        """What the server wrote on stderr (when started with ``errlog``)."""
        return self.errlog.read_text() if self.errlog and self.errlog.exists() else ""

    def list_tools(self) -> list[Any]:
        return self._do(self.session.list_tools).tools

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return self._do(lambda: self.session.call_tool(name, arguments or {}))

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call a tool that must succeed; returns its structured result."""
        result = self.call(name, arguments)
        assert not result.isError, result.structuredContent
        return result.structuredContent

    def close(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=self.timeout)

    def __enter__(self) -> StdioClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
