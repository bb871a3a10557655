"""Fuzzing as a standing check (issue 25, item 10): a small seeded sample of benchmarks/fuzz_surfaces.py.

Every MCP tool over stdio and over HTTP (enumerated from the running server, so new tools are covered), the CLI
(enumerated from the Typer app) and the Python API (MemoryFabric's public methods) get malformed input — wrong
types, deep nesting, 5 MB strings, NaN, 1e400, 5,000-digit numbers, lone surrogates, path tricks — and must answer
each with a structured error or a result: no traceback, no crash or hang, nothing written by a rejected call. The
full run is the benchmark; its counts are in docs/benchmarks.md.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.fuzz_surfaces import Raw, RawStdioClient, Tally, fuzz_cli, fuzz_mcp, fuzz_python
from zaxy_agents.mcp import registry

SEED = 2025


def _clean(tally: Tally, rejected_share: float = 0.5) -> None:
    summary = tally.summary()
    assert tally.clean, summary["examples"]
    assert tally.rejected >= tally.inputs * rejected_share, summary  # the inputs really are malformed


def test_every_mcp_tool_over_stdio(tmp_path: Path) -> None:
    tally = fuzz_mcp(tmp_path, 3, SEED, huge_every=40)
    registry.all_tools()
    assert {spec.name for spec in registry.all_tools()} <= tally.targets  # enumerated from the server
    _clean(tally)


def test_every_mcp_tool_over_http(tmp_path: Path) -> None:
    """The same over streamable HTTP: before, a 5,000-digit number, deep nesting or bytes that are not UTF-8 in a
    POST body escaped the SDK's parser as a 500 and a traceback in the server log."""
    tally = fuzz_mcp(tmp_path, 3, SEED, huge_every=40, transport="http")
    assert {spec.name for spec in registry.all_tools()} <= tally.targets
    assert tally.codes["jsonrpc -32700"] > 0  # bodies the SDK cannot read are answered as parse errors
    _clean(tally)


def test_the_cli(tmp_path: Path) -> None:
    tally = fuzz_cli(tmp_path, 12, SEED, workers=2, huge_every=6)
    assert len(tally.targets) >= 8
    _clean(tally, rejected_share=0.1)  # a command without arguments (hooks status) has nothing to reject


def test_the_cli_in_process_agrees_with_real_processes(tmp_path: Path) -> None:
    """The full CLI run's harness: inputs run in-process in worker processes (Click's isolation), a sample also as
    real `zaxy` subprocesses; both are clean and every sampled input exits with the same code both ways."""
    tally = fuzz_cli(tmp_path, 16, SEED + 1, workers=2, huge_every=6, in_process=True, chunk=16, subprocess_every=8)
    assert tally.inputs == 16 and tally.subprocess_sample is not None and tally.subprocess_sample.inputs == 2
    assert tally.disagreements == 0, tally.examples
    _clean(tally, rejected_share=0.1)
    _clean(tally.subprocess_sample, rejected_share=0.0)


def test_the_python_api(tmp_path: Path) -> None:
    tally = fuzz_python(tmp_path, 600, SEED, huge_every=150)
    assert len(tally.targets) >= 50  # every public MemoryFabric method
    _clean(tally)


def test_lines_the_sdk_cannot_parse_are_answered(tmp_path: Path) -> None:
    """A 5,000-digit number, nesting deeper than the SDK's parser allows, an escaped lone surrogate, broken JSON
    and undecodable bytes each get a JSON-RPC parse error for their id (or nothing, without an id); the server
    keeps serving. Before, the request was only logged and its client waited forever."""
    client = RawStdioClient(tmp_path / "loom", tmp_path / "stderr")
    try:
        for arguments in ('{"query": ' + "9" * 5000 + "}", "[" * 3000 + "]" * 3000, '{"query": "\\ud800"}'):
            reply = client.request("tools/call", Raw(f'{{"name": "memory_query", "arguments": {arguments}}}'), 60)
            assert reply is not None and reply["error"]["code"] == -32700, reply
            assert reply["error"]["data"]["error"]["code"] == "invalid_request"
        client.send_line('{"jsonrpc": "2.0", "id": "broken", "method": "tools/call", "params": {"na')
        assert (client.response("broken", 60) or {}).get("error", {}).get("code") == -32700
        assert client.process.stdin is not None
        client.process.stdin.write(b"\xff\xfe not utf-8\n")
        client.process.stdin.flush()
        answer = client.request("tools/call", {"name": "memory_query", "arguments": {"query": "still there?"}}, 60)
        assert answer is not None and not answer["result"]["isError"] and client.alive()
    finally:
        client.close()
    assert "Traceback" not in (tmp_path / "stderr").read_text()
