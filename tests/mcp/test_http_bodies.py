"""POST bodies the MCP SDK's HTTP transport would mishandle, through a real `zaxy serve --transport http`.

The SDK parses a body with ``json.loads`` and only catches ``JSONDecodeError``: a 5,000-digit number, nesting past
the parser's recursion limit or bytes that are not UTF-8 were a bare 500 and a traceback in the server log; nesting
the parser survives came back as an unexplained -32602, an oversized body as a plain-text 413. Each now gets a
JSON-RPC -32700 naming the request's id with our structured error in ``data`` (or a structured 413), nothing is
written, and the server keeps serving; ``http_serve`` fails the test on any traceback in the server's log.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.mcp._http_serve import http_serve

TOKEN = "valid-token-0123456789abcdef"
HEADERS = {
    "authorization": f"Bearer {TOKEN}",
    "x-zaxy-session-id": "alice",
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}


def _call(arguments: str, ident: int = 7) -> bytes:
    return (
        f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call",'
        f'"params":{{"name":"memory_append","arguments":{arguments}}}}}'
    ).encode()


def test_unreadable_bodies_get_a_parse_error_and_nothing_is_written(tmp_path: Path) -> None:
    eventloom = tmp_path / "eventloom"
    unreadable = {
        "a 5,000-digit number": _call('{"event_type": "note.added", "payload": {"n": ' + "9" * 5000 + "}}", 1),
        "nesting past the parser": _call('{"event_type": "note.added", "payload": ' + "[" * 3000 + "]" * 3000 + "}", 2),
        "nesting past 128 levels": _call(
            '{"event_type": "note.added", "payload": {"a": ' + "[" * 300 + "]" * 300 + "}}", 3
        ),
        "bytes that are not UTF-8": _call('{"event_type": "note.added", "payload": {"t": "\xff"}}', 4).replace(
            b"\xc3\xbf", b"\xff\xfe"
        ),
        "broken JSON": b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"na',
    }
    with http_serve(eventloom, env={"ZAXY_AUTH_TOKEN": TOKEN}) as base:
        for ident, (case, body) in enumerate(unreadable.items(), start=1):
            response = httpx.post(f"{base}/mcp", content=body, headers=HEADERS, timeout=60)
            assert response.status_code == 400, (case, response.text)
            reply = response.json()
            assert reply["id"] == ident and reply["error"]["code"] == -32700, (case, reply)
            assert reply["error"]["data"]["error"]["code"] == "invalid_request", (case, reply)
        too_big = _call('{"event_type": "note.added", "payload": {"t": "' + "x" * (5 * 1024 * 1024) + '"}}')
        response = httpx.post(f"{base}/mcp", content=too_big, headers=HEADERS, timeout=60)
        assert response.status_code == 413 and response.json()["error"]["field"] == "body", response.text
        chunked = httpx.post(f"{base}/mcp", content=iter([too_big[:1024], too_big[1024:]]), headers=HEADERS, timeout=60)
        assert chunked.status_code == 413, chunked.text  # no content-length: counted while reading
        assert not list(eventloom.glob("*.jsonl"))  # nothing written by any of them
        ok = httpx.post(f"{base}/mcp", content=_call('{"event_type": "note.added", "payload": {"t": "fine"}}', 9),
                        headers=HEADERS, timeout=60)  # fmt: skip
        assert ok.status_code == 200 and not ok.json()["result"]["isError"], ok.text  # still serving
    assert len(list(eventloom.glob("*.jsonl"))) == 1
