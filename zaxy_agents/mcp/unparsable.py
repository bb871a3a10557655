"""Answering a JSON-RPC line the SDK cannot parse, instead of leaving the client waiting forever.

The SDK's transports hand a line that fails to parse (nesting deeper than its parser allows, a number out of its
range, an escaped lone surrogate, broken JSON) to the server as an exception, which the server only logs: the
request it held is never answered, and a client blocks on it until its own timeout. The read stream is wrapped so
such a line is answered: when the request's ``id`` can still be read from the start of the raw line, a JSON-RPC
``-32700`` parse error goes back for that id, with our structured error in ``data``; a line with no readable id
(a notification, or garbage) has nobody to answer and is dropped, as JSON-RPC says.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError, JSONRPCMessage

from .wire import PARSE_ERROR, parse_error_body, request_id

logger = logging.getLogger("zaxy.mcp")


class AnswerUnparsable:
    """A receive stream that answers lines the SDK could not parse and passes everything else through."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write = write_stream

    async def __aenter__(self) -> AnswerUnparsable:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __aiter__(self) -> AnswerUnparsable:
        return self

    async def __anext__(self) -> Any:
        while True:
            item = await self._inner.__anext__()
            if not isinstance(item, Exception):
                return item
            await self._answer(item)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._answer(item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def _answer(self, error: Exception) -> None:
        reason = _reason(error)
        ident = request_id(_raw_line(error))
        logger.warning("unparsable JSON-RPC line (%s)%s", reason, "" if ident is not None else ": no id to answer")
        if ident is None:
            return
        message = JSONRPCError(
            jsonrpc="2.0",
            id=ident,
            error=ErrorData(code=PARSE_ERROR, message=f"Parse error: {reason}", data=parse_error_body(reason)),
        )
        await self._write.send(SessionMessage(JSONRPCMessage(message)))


def _raw_line(error: Exception) -> str:
    errors = getattr(error, "errors", None)
    if callable(errors):
        try:
            for item in errors():
                if isinstance(item.get("input"), (str, bytes)):
                    value = item["input"]
                    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        except Exception:  # a foreign exception shape: no line to read
            return ""
    return ""


def _reason(error: Exception) -> str:
    errors = getattr(error, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            return str(first.get("msg", type(error).__name__))[:200]
        except Exception:
            pass
    return type(error).__name__
