"""The stdio transport: MCP's newline-delimited JSON-RPC on stdin/stdout, spoken without importing the MCP SDK.

Why not the SDK here: importing it costs ~0.45 s of CPU before a server can answer anything (its package
``__init__`` loads the client, the server, FastMCP and the HTTP stack, and ``mcp.types`` builds hundreds of
pydantic models), about half of the 1 s a client may wait for a first checkout. A stdio server needs little of
it: ``initialize``, ``ping``, ``tools/list``, ``tools/call`` and the ``initialized`` / ``cancelled``
notifications. The results are :class:`~zaxy_agents.mcp.app.McpApp`'s JSON values, written with pydantic-core's
serialiser and read with its JSON parser, as the SDK does, so the bytes on the wire are the SDK's
(``tests/mcp/test_stdio_protocol.py`` replays the same requests through both and compares). The HTTP transport
keeps the SDK (``http.py``).

Behaviour, where the SDK's and ours differ on purpose:

* a method this server does not serve gets JSON-RPC's ``-32601 Method not found`` (the SDK answers a method it
  does not know with ``-32602``);
* a request before ``initialize`` gets ``-32602`` naming the problem (the SDK: ``Invalid request parameters``);
* when the client closes stdin, calls in progress finish and are answered before the server exits (the SDK
  cancels them unanswered), then the memory is handed over as before.

Tool calls run on worker threads (the fabric is synchronous and has its own thread); this thread only reads.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, BinaryIO

from pydantic_core import from_json, to_json

from .app import McpApp
from .config import ServerConfig
from .wire import NON_FINITE_KEY, PARSE_ERROR, first_non_finite, parse_error_body, request_id

logger = logging.getLogger("zaxy.mcp")

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
CALL_THREADS = 8


class _Stop(BaseException):
    """SIGTERM / SIGINT: stop reading (raised in the main thread by the signal handler)."""


def serve_stdio(config: ServerConfig, *, after_call: Callable[[], None] | None = None) -> None:
    """Serve over stdin/stdout until the client closes stdin (or SIGTERM/SIGINT), then hand over cleanly.

    ``after_call`` runs after each answered tool call (the CLI's: turn the collector back on after start-up)."""
    app = McpApp(config)
    app.start()
    transport = StdioTransport(app, sys.stdin.buffer, sys.stdout.buffer, after_call=after_call)
    previous = {sig: signal.signal(sig, _raise_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        transport.run()
    except _Stop:
        pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # finish the hand-over even if the client escalates
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            transport.finish()
            app.close()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _raise_stop(_signum: int, _frame: Any) -> None:
    raise _Stop


class StdioTransport:
    """One client on a pair of byte streams: reads requests, answers them (calls on worker threads)."""

    def __init__(
        self, app: McpApp, reader: BinaryIO, writer: BinaryIO, *, after_call: Callable[[], None] | None = None
    ) -> None:
        self.app = app
        self._after_call = after_call
        self._reader = reader
        self._writer = writer
        self._write_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=CALL_THREADS, thread_name_prefix="zaxy-mcp-call")
        self._in_flight: dict[Any, Future[Any]] = {}
        self._cancelled: set[Any] = set()
        self._state_lock = threading.Lock()
        self._initialized = False
        self._closed_output = False

    # ------------------------------------------------------------------ reading
    def run(self) -> None:
        """Read until end of input."""
        for raw in iter(self._reader.readline, b""):
            self.handle_line(raw.decode("utf-8", "replace"))

    def finish(self) -> None:
        """Let the calls in progress finish (and be answered)."""
        self._pool.shutdown(wait=True)

    def handle_line(self, line: str) -> None:
        try:
            message = from_json(line)
        except ValueError as exc:
            self._unparsable(line, f"Invalid JSON: {exc}")
            return
        kind = _kind(message)
        if kind is None:
            self._unparsable(line, "not a JSON-RPC 2.0 message")
        elif kind == "request":
            self._request(message["id"], message["method"], message.get("params"))
        elif kind == "notification":
            self._notification(message["method"], message.get("params"))
        # a response or an error: this server sends no requests, so there is nothing to match it with

    def _unparsable(self, line: str, reason: str) -> None:
        """Answer a line no parser could read with a parse error for its id, when its id can be read."""
        ident = request_id(line)
        logger.warning("unparsable JSON-RPC line (%s)%s", reason, "" if ident is not None else ": no id to answer")
        if ident is not None:
            self._error(ident, PARSE_ERROR, f"Parse error: {reason}", parse_error_body(reason))

    def _notification(self, method: str, params: Any) -> None:
        if method == "notifications/initialized":
            self._initialized = True
        elif method == "notifications/cancelled" and isinstance(params, dict):
            ident = params.get("requestId")
            with self._state_lock:
                if ident not in self._in_flight or ident in self._cancelled:
                    return
                self._cancelled.add(ident)
            self._error(ident, 0, "Request cancelled", None)

    def _request(self, ident: Any, method: str, params: Any) -> None:
        params = params or {}
        if method == "initialize":
            if not _initialize_params_valid(params):
                self._invalid_params(ident)
                return
            self._result(ident, self.app.initialize_result(params["protocolVersion"]))
            self._initialized = True  # as the SDK: the initialized notification is not awaited
        elif method == "ping":
            self._result(ident, {})
        elif not self._initialized:
            self._error(ident, INVALID_PARAMS, "Received request before initialization was complete", "")
        elif method == "tools/list":
            if not isinstance(params.get("cursor"), str | None):
                self._invalid_params(ident)
                return
            self._submit(ident, lambda: {"tools": self.app.tools()})
        elif method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments")
            if not isinstance(name, str) or not isinstance(arguments, dict | None):
                self._invalid_params(ident)
                return
            arguments = arguments or {}
            path = first_non_finite(arguments, "arguments")
            if path is not None:
                arguments[NON_FINITE_KEY] = path
            self._submit(
                ident,
                lambda: self.app.call_tool_result(name, arguments, self.app.stdio_caller()),
                then=self._after_call,
            )
        else:
            self._error(ident, METHOD_NOT_FOUND, "Method not found", None)

    def _submit(self, ident: Any, work: Any, then: Any = None) -> None:
        def run() -> None:
            try:
                result = work()
            except Exception as exc:  # never a silent hang: the SDK answered a failing handler with code 0
                logger.exception("request %r failed", ident)
                self._answer(ident, {"jsonrpc": "2.0", "id": ident, "error": {"code": 0, "message": str(exc)}})
                return
            self._answer(ident, {"jsonrpc": "2.0", "id": ident, "result": result})
            if then is not None:
                then()

        with self._state_lock:
            self._in_flight[ident] = self._pool.submit(run)

    def _answer(self, ident: Any, message: dict[str, Any]) -> None:
        with self._state_lock:
            self._in_flight.pop(ident, None)
            if ident in self._cancelled:  # already answered "Request cancelled"
                self._cancelled.discard(ident)
                return
        self._write(message)

    # ------------------------------------------------------------------ writing
    def _invalid_params(self, ident: Any) -> None:
        self._error(ident, INVALID_PARAMS, "Invalid request parameters", "")

    def _result(self, ident: Any, result: dict[str, Any]) -> None:
        self._write({"jsonrpc": "2.0", "id": ident, "result": result})

    def _error(self, ident: Any, code: int, message: str, data: Any) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._write({"jsonrpc": "2.0", "id": ident, "error": error})

    def _write(self, message: dict[str, Any]) -> None:
        line = to_json(message) + b"\n"
        with self._write_lock:
            if self._closed_output:
                return
            try:
                self._writer.write(line)
                self._writer.flush()
            except (BrokenPipeError, ValueError, OSError):  # the client stopped reading: nothing to answer
                self._closed_output = True


def _kind(message: Any) -> str | None:
    """``request``, ``notification`` or ``response`` for a JSON-RPC 2.0 message, ``None`` for anything else."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    ident = message.get("id")
    valid_id = isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool))
    if "method" in message:
        if not isinstance(message["method"], str) or not isinstance(message.get("params"), dict | None):
            return None
        if "id" not in message:
            return "notification"
        return "request" if valid_id else None
    if valid_id and ("result" in message or "error" in message):
        return "response"
    return None


def _initialize_params_valid(params: dict[str, Any]) -> bool:
    info = params.get("clientInfo")
    return (
        isinstance(params.get("protocolVersion"), str | int)
        and not isinstance(params.get("protocolVersion"), bool)
        and isinstance(params.get("capabilities"), dict)
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    )
