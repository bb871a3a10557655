"""Reading an HTTP request body before the MCP SDK does: bounded, and answered when it is not JSON we can read.

The SDK's streamable HTTP transport parses a POST body with ``json.loads`` and only catches ``JSONDecodeError``: a
5,000-digit number (``ValueError``), nesting deeper than the parser's recursion limit (``RecursionError``) or bytes
that are not UTF-8 (``UnicodeDecodeError``) escape as a traceback in the server log and a bare ``500``. Nesting the
parser survives but pydantic cannot serialise comes back as an unexplained ``-32602``; an oversized body as a
plain-text ``413``. So :func:`read_checked_body` reads the body itself, up to the SDK's own limit, parses it once
with the same parser, and answers what the SDK would mishandle with a JSON-RPC ``-32700`` parse error (HTTP 400)
carrying our structured error in ``data`` (the request's ``id`` when it can be read), or a structured ``413``. A
body that passes is handed on unchanged through a replaying ``receive``.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

from .wire import PARSE_ERROR, parse_error_body, request_id

MAX_REQUEST_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE  # the SDK's limit: the one a client hits either way
MAX_NESTING = 128  # JSON-RPC envelope + arguments; event payloads are bounded at 100 levels at the log's door


class BodyRefused(Exception):
    """The HTTP status and JSON body that answer a request body the server will not hand to the SDK."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(status)
        self.status = status
        self.body = body


async def read_checked_body(receive: Any, headers: dict[str, str]) -> Any:
    """Read a POST body (bounded) and check it parses; returns a ``receive`` that replays it to the SDK."""
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_REQUEST_BYTES:
        raise _too_large()
    chunks: list[bytes] = []
    size = 0
    trailing: list[dict[str, Any]] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            trailing.append(message)  # the client went away: let the SDK see it as it would have
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_REQUEST_BYTES:
            raise _too_large()
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    if not trailing:
        _check_parses(body)
    replay = [{"type": "http.request", "body": body, "more_body": False}, *trailing]

    async def replaying_receive() -> Any:
        if replay:
            return replay.pop(0)
        return await receive()

    return replaying_receive


def _check_parses(body: bytes) -> None:
    try:
        parsed = json.loads(body)  # the parser the SDK uses, so what passes here parses there
    except json.JSONDecodeError as exc:
        reason = f"{exc.msg} (character {exc.pos})"
    except RecursionError:
        reason = "nesting too deep"
    except UnicodeDecodeError:
        reason = "the body is not UTF-8"
    except ValueError as exc:  # e.g. an integer longer than Python converts (4,300 digits)
        reason = str(exc).split(";")[0][:200]
    else:
        if _depth_exceeds(parsed, MAX_NESTING):
            reason = f"nesting deeper than {MAX_NESTING} levels"
        else:
            return
    text = body[:512].decode("utf-8", "replace")
    raise BodyRefused(
        400,
        {
            "jsonrpc": "2.0",
            "id": request_id(text),
            "error": {"code": PARSE_ERROR, "message": f"Parse error: {reason}", "data": parse_error_body(reason)},
        },
    )


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit`` containers (iterative: safe at any depth the parser gave)."""
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict):
            children = current.values()
        elif isinstance(current, list):
            children = current
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _too_large() -> BodyRefused:
    return BodyRefused(
        413,
        {
            "error": {
                "code": "invalid_request",
                "message": f"the request body is larger than {MAX_REQUEST_BYTES:,} bytes",
                "remediation": "Send smaller arguments: event payloads are bounded well below this (store large "
                "content as a file and record its path).",
                "field": "body",
            }
        },
    )
