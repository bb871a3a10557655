"""Refusing NaN and infinite numbers in tool arguments, which the MCP SDK would otherwise turn into ``null``.

The SDK parses a JSON-RPC line with a parser that accepts ``NaN``, ``Infinity`` and out-of-range literals such
as ``1e400`` (read as infinity), then re-dumps every request in JSON mode before validating it: each non-finite
number silently becomes ``null``, so a tool handler can no longer tell that the client sent one. The read stream
is therefore wrapped before the SDK sees it: a ``tools/call`` whose arguments hold a non-finite number gets the
path of the first one under :data:`NON_FINITE_KEY`, and :meth:`McpApp.call_tool_result` refuses the call with
``invalid_request`` naming that path. Works for every transport, because both run through ``Server.run``.
"""

from __future__ import annotations

from typing import Any

from mcp.server.lowlevel import Server
from mcp.types import JSONRPCRequest

from .unparsable import AnswerUnparsable
from .wire import NON_FINITE_KEY, first_non_finite


class FiniteArgumentsServer(Server[Any, Any]):
    """The SDK's low-level server, reading requests through :class:`_MarkNonFinite`."""

    async def run(self, read_stream: Any, write_stream: Any, *args: Any, **kwargs: Any) -> Any:
        # Lines the SDK could not parse are answered with a parse error (unparsable.py) rather than left hanging.
        reader = _MarkNonFinite(AnswerUnparsable(read_stream, write_stream))
        return await super().run(reader, write_stream, *args, **kwargs)


class _MarkNonFinite:
    """A receive stream that marks tool calls carrying non-finite numbers (everything else passes through)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def __aenter__(self) -> _MarkNonFinite:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __aiter__(self) -> _MarkNonFinite:
        return self

    async def __anext__(self) -> Any:
        return _mark(await self._inner.__anext__())

    async def receive(self) -> Any:
        return _mark(await self._inner.receive())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _mark(message: Any) -> Any:
    root = getattr(getattr(message, "message", None), "root", None)
    if isinstance(root, JSONRPCRequest) and root.method == "tools/call" and isinstance(root.params, dict):
        arguments = root.params.get("arguments")
        if isinstance(arguments, dict):
            path = first_non_finite(arguments, "arguments")
            if path is not None:
                arguments[NON_FINITE_KEY] = path
    return message
