"""JSON-RPC details shared by both transports, without the MCP SDK (the stdio transport never imports it).

``request_id`` reads the id of a line no parser could read (to answer it with a ``-32700``); ``first_non_finite``
finds a NaN or infinite number in tool arguments, which JSON-RPC parsers accept and the SDK would turn into
``null`` (``finite.py``): the transport marks the call under :data:`NON_FINITE_KEY` and the app refuses it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

PARSE_ERROR = -32700
NON_FINITE_KEY = "__zaxy_non_finite_number__"
# The MCP protocol versions the server speaks, oldest first: the SDK's SUPPORTED_PROTOCOL_VERSIONS, which
# tests/mcp/test_stdio_protocol.py compares with the installed SDK's list.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\]|\\.){0,256}")')


def request_id(raw: str) -> int | str | None:
    """The ``id`` of a JSON-RPC request read from the start of its raw text, or ``None`` when it has none there."""
    match = _ID.search(raw[:512]) if raw else None
    return None if match is None else json.loads(match.group(1))


def parse_error_body(reason: str) -> dict[str, Any]:
    """Our structured error for a request that is not JSON the server can read (the ``data`` of a -32700)."""
    return {
        "error": {
            "code": "invalid_request",
            "message": f"the request is not JSON this server can read: {reason}",
            "remediation": "Send finite numbers of at most 4,300 digits, nesting under 100 levels, valid Unicode "
            "(no lone surrogates) and well-formed JSON.",
        }
    }


def first_non_finite(value: Any, path: str) -> str | None:
    """The JSON path of the first NaN or infinite number in ``value`` (iterative: any depth), or ``None``."""
    stack = [(value, path)]
    while stack:
        current, where = stack.pop()
        if isinstance(current, float):
            if not math.isfinite(current):
                return where
        elif isinstance(current, dict):
            stack.extend((item, f"{where}.{key}") for key, item in reversed(list(current.items())))
        elif isinstance(current, list):
            stack.extend((item, f"{where}[{index}]") for index, item in reversed(list(enumerate(current))))
    return None
