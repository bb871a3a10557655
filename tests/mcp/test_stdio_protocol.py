"""The stdio transport speaks JSON-RPC without the MCP SDK (zaxy_agents/mcp/stdio.py): it must write what the SDK
wrote. The same lines go, over real pipes, to `zaxy serve` and to the SDK's own stdio server running the same
application (``ZaxyMcpServer`` on ``mcp.server.stdio``); every answer must be byte-identical, except where
stdio.py's docstring says we differ on purpose (checked here too).
"""

from __future__ import annotations

import json
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.mcp import wire

SDK_SERVER = """
import sys, anyio
from mcp.server.stdio import stdio_server
from zaxy_agents.mcp.config import ServerConfig
from zaxy_agents.mcp.server import ZaxyMcpServer
app = ZaxyMcpServer(ServerConfig.resolve(sys.argv[1], session_id="s1", capture=False))
app.start()
async def main():
    async with stdio_server() as (read, write):
        await app.server.run(read, write, app.server.create_initialization_options())
try:
    anyio.run(main)
finally:
    app.close()
"""


class _Lines:
    """A server process spoken to line by line; answers collected by id."""

    def __init__(self, command: list[str], stderr: Path) -> None:
        with open(stderr, "ab") as errors:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors)

    def send(self, line: str | bytes) -> None:
        assert self.process.stdin is not None
        data = line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def answer(self, ident: Any, timeout: float = 60) -> bytes:
        """The raw line answering ``ident``."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], deadline - time.monotonic())
            if not ready:
                break
            line = self.process.stdout.readline()
            if not line:
                break
            if json.loads(line).get("id") == ident:
                return line.rstrip(b"\n")
        raise AssertionError(f"no answer to {ident!r}")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "diff", "version": "1"}}


def _request(ident: Any, method: str, params: Any = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message, ensure_ascii=False)


def _call(ident: Any, name: str, arguments: Any) -> str:
    return _request(ident, "tools/call", {"name": name, "arguments": arguments})


def _raw_call(ident: int, params: str) -> str:
    """A tools/call line written by hand (its params are JSON text no encoder would write)."""
    return f'{{"jsonrpc": "2.0", "id": {ident}, "method": "tools/call", "params": {{{params}}}}}'


# (line, id of its answer or None when nothing answers it); a ping after each unanswered line keeps them in step
SAME = [
    (_request(1, "initialize", INIT), 1),
    ('{"jsonrpc": "2.0", "method": "notifications/initialized"}', None),
    (_request(2, "ping"), 2),
    (_request("list", "tools/list", {}), "list"),
    (_request(3, "tools/list"), 3),
    (_call(4, "memory_query", {"query": "which port does the API use?"}), 4),
    (_call(5, "memory_checkout", {"query": "which port does the API use?", "max_tokens": 800}), 5),
    (_call(6, "memory_query", {"query": 42}), 6),
    (_call(7, "memory_query", {"query": "x", "k": 3, "surprise": True}), 7),
    (_call(8, "no_such_tool", {}), 8),
    (_raw_call(9, '"name": "memory_query", "arguments": {"query": "x", "k": NaN}'), 9),
    (_raw_call(10, '"name": "memory_query", "arguments": {"query": "x", "k": 1e400}'), 10),
    (_request(11, "tools/call", {"arguments": {}}), 11),
    (_request(12, "tools/call", {"name": "memory_query", "arguments": [1]}), 12),
    (_request(13, "tools/call", {"name": 7}), 13),
    (_request(14, "resources/list", {}), 14),
    (_request(15, "prompts/list", {}), 15),
    (_request(16, "initialize", {**INIT, "protocolVersion": "1999-01-01"}), 16),
    (_request(17, "initialize", {"protocolVersion": "2025-06-18"}), 17),
    ('{"jsonrpc": "2.0", "id": "broken", "method": "tools/call", "params": {"na', "broken"),
    (_raw_call(18, '"name": "memory_query", "arguments": {"query": ' + "9" * 5000 + "}"), 18),
    ('{"jsonrpc": "2.0", "id": 19, "method": "tools/call", "params": ' + "[" * 300 + "]" * 300 + "}", 19),
    (_raw_call(20, '"name": "memory_query", "arguments": {"query": "\\ud800"}'), 20),
    ("garbage without an id", None),
    ("", None),
    (b"\xff\xfe not utf-8", None),
    ('{"jsonrpc": "2.0", "id": 21, "result": {}}', None),  # a response: nothing to answer
    ('{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}}', None),
    (_call(22, "memory_query", {"query": "déploiement 🚀 ünïcode"}), 22),
]

# Where stdio.py differs from the SDK on purpose: a method nobody serves gets JSON-RPC's -32601.
DIFFERENT = [(_request(30, "no/such/method", {}), 30)]


def _converse(server: _Lines, lines: list[tuple[str | bytes, Any]]) -> dict[Any, bytes]:
    answers: dict[Any, bytes] = {}
    for number, (line, ident) in enumerate(lines):
        server.send(line)
        if ident is None:  # nothing answers it: a ping proves the server read it and is still serving
            ident = f"sync-{number}"
            server.send(_request(ident, "ping"))
        answers[ident] = server.answer(ident)
    return answers


def _timeless(line: bytes) -> bytes:
    """The answer without its measured durations (``took_ms``, also inside the text content's JSON)."""
    return re.sub(rb'(\\?"took_ms\\?": ?)[0-9.e+-]+', rb"\1<ms>", line)


def test_the_stdio_transport_writes_what_the_sdk_wrote(tmp_path: Path) -> None:
    loom = tmp_path / "eventloom"
    with MemoryFabric.from_path(loom) as fabric:
        fabric.append("s1", "fact.asserted", {"subject": "api", "predicate": "port", "object": "8080"})
        fabric.project()
    ours = _Lines(
        [
            sys.executable,
            "-m",
            "zaxy_agents.cli.entry",
            "serve",
            "--eventloom-path",
            str(loom),
            "-s",
            "s1",
            "--no-capture",
        ],
        tmp_path / "ours.log",
    )
    try:
        our_answers = _converse(ours, SAME + DIFFERENT)
    finally:
        ours.close()
    sdk = _Lines([sys.executable, "-c", SDK_SERVER, str(loom)], tmp_path / "sdk.log")
    try:
        sdk_answers = _converse(sdk, SAME + DIFFERENT)
    finally:
        sdk.close()
    assert ours.process.returncode == 0 and sdk.process.returncode == 0
    for _line, ident in SAME:
        if ident is not None:
            assert _timeless(our_answers[ident]) == _timeless(sdk_answers[ident]), ident
    # the control: the conversation really exercised tools, errors and parse errors
    listed = json.loads(our_answers["list"])["result"]["tools"]
    assert listed[0]["name"] == "memory_checkout" and len(listed) == 8
    assert "eventloom://s1/events/" in our_answers[5].decode()
    assert json.loads(our_answers[6])["result"]["isError"] is True
    assert [json.loads(our_answers[i])["error"]["code"] for i in ("broken", 18, 19, 20)] == [-32700] * 4
    assert json.loads(our_answers[9])["result"]["structuredContent"]["error"]["field"] == "k"
    assert json.loads(our_answers[14])["error"]["code"] == -32601
    assert json.loads(our_answers[30])["error"] == {"code": -32601, "message": "Method not found"}
    assert json.loads(sdk_answers[30])["error"]["code"] == -32602  # the SDK's answer to a method it does not know
    assert "Traceback" not in (tmp_path / "ours.log").read_text()


def test_requests_before_initialize_are_refused_and_calls_in_progress_are_answered_at_end_of_input(
    tmp_path: Path,
) -> None:
    server = _Lines(
        [sys.executable, "-m", "zaxy_agents.cli.entry", "serve", "--eventloom-path", str(tmp_path / "loom")],
        tmp_path / "serve.log",
    )
    server.send(_request(1, "tools/list", {}))
    early = json.loads(server.answer(1))["error"]
    assert early["code"] == -32602 and "before initialization" in early["message"]
    server.send(_request(2, "initialize", INIT))
    server.answer(2)
    # a call sent just before the client closes stdin is still answered (the SDK cancelled it unanswered)
    server.send(_call(3, "memory_append", {"type": "note.recorded", "payload": {"text": "last words"}}))
    assert server.process.stdin is not None
    server.process.stdin.close()
    assert server.process.stdout is not None
    answers = [json.loads(line) for line in server.process.stdout.read().splitlines()]
    server.process.wait(timeout=60)
    assert [answer["id"] for answer in answers] == [3] and not answers[0]["result"]["isError"]
    assert server.process.returncode == 0


def test_the_protocol_versions_are_the_sdks() -> None:
    from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS

    assert list(wire.PROTOCOL_VERSIONS) == SUPPORTED_PROTOCOL_VERSIONS


def test_sigterm_stops_the_server_cleanly_and_records_the_session_end(tmp_path: Path) -> None:
    loom = tmp_path / "loom"
    server = _Lines(
        [sys.executable, "-m", "zaxy_agents.cli.entry", "serve", "--eventloom-path", str(loom), "-s", "proj"],
        tmp_path / "serve.log",
    )
    server.send(_request(1, "initialize", INIT))
    server.answer(1)
    server.send(_call(2, "memory_append", {"type": "note.recorded", "payload": {"text": "before the signal"}}))
    assert not json.loads(server.answer(2))["result"]["isError"]
    server.process.send_signal(signal.SIGTERM)  # stdin stays open: the signal alone ends the server
    assert server.process.wait(timeout=60) == 0
    with MemoryFabric.from_path(loom) as fabric:
        types = [event.type for event in fabric.replay("proj")]
    assert types[0] == "note.recorded" and types[-1] == "session.ended", types
    assert "Traceback" not in (tmp_path / "serve.log").read_text()
