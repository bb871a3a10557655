"""Start-up stays light: each CLI command imports only what it needs (issue 24, start-up).

Checked on the real CLI in a subprocess through ``PYTHONPROFILEIMPORTTIME`` (``-X importtime``), which names every
module the process imported, so no timing is asserted: a heavy module showing up where a command does not need it
fails the test, whatever the machine's load.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import run_zaxy

# Never needed to print help or the version, nor to answer a checkout from the CLI.
SERVER_AND_FRAMEWORKS = ("kuzu", "pyarrow", "mcp", "langgraph", "langchain_core", "httpx", "starlette", "uvicorn")
# What help and `--version` must not load either: the fabric and the numeric / tokenizer stacks. (Typer itself
# loads pydantic to build a command group's parameters, so `zaxy memory --help` may; `zaxy --help` does not.)
# (`zaxy_agents.fabric` loads its core through importlib, which -X importtime does not log: a service module stands
# for it.)
MEMORY_STACK = ("numpy", "tiktoken", "zaxy_agents.fabric.checkout_ops", "zaxy_agents.projection.projector")


def _imported(*args: str, stdin: str | None = None, answers: list[dict] | None = None) -> set[str]:
    result = run_zaxy(*args, env={"PYTHONPROFILEIMPORTTIME": "1"}, stdin=stdin)
    assert result.returncode == 0, result.stderr[-3000:]
    if answers is not None:
        answers.extend(json.loads(line) for line in result.stdout.splitlines())
    modules = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                modules.add(name)
    assert "zaxy_agents" in modules, "the import log was not produced: the check would prove nothing"
    return modules


def _heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(name for name in names if name in modules)


def test_help_and_version_load_no_memory_stack() -> None:
    for args, also in ((("--help",), ("pydantic",)), (("--version",), ("pydantic",)), (("memory", "--help"), ())):
        modules = _imported(*args)
        assert _heavy(modules, SERVER_AND_FRAMEWORKS + MEMORY_STACK + also) == [], args


def test_cli_checkout_loads_neither_the_graph_nor_a_server(tmp_path: Path) -> None:
    root = ["--eventloom-path", str(tmp_path / "loom"), "-s", "proj"]
    appended = run_zaxy("memory", "append", "the API runs on port 8080", "--key", "api.port", *root)
    assert appended.returncode == 0, appended.stderr
    modules = _imported("memory", "checkout", "which port does the API use?", "--json", *root)
    # the control: a checkout really ran (the fabric and the token counter were loaded) ...
    assert {"zaxy_agents.fabric.checkout_ops", "tiktoken"} <= modules
    # ... without the embedded graph, the MCP SDK or an agent framework, nor the other commands (cli/entry.py
    # runs it in a one-command Typer app)
    assert _heavy(modules, SERVER_AND_FRAMEWORKS) == []
    assert _heavy(modules, ("zaxy_agents.cli.app", "zaxy_agents.cli.doctor_command")) == []


def test_the_one_command_apps_answer_bad_input_as_the_full_app_does(tmp_path: Path) -> None:
    """`zaxy serve` and `zaxy memory checkout` skip building the other commands: the same usage errors, structured
    errors and exit codes as the full Typer app (run here through zaxy_agents.cli.app directly)."""
    full_app = "import sys\nfrom zaxy_agents.cli.app import app\napp(args=sys.argv[1:], prog_name='zaxy')"
    cases = [
        ("memory", "checkout", "--k", "0", "q"),
        ("memory", "checkout", "q", "--eventloom-path", str(tmp_path / "nothing"), "--json"),
        ("serve", "--port", "0"),
        ("serve", "--transport", "bogus", "--eventloom-path", str(tmp_path / "loom")),
    ]
    for args in cases:
        fast = run_zaxy(*args)
        full = subprocess.run(
            [sys.executable, "-c", full_app, *args],
            capture_output=True,
            text=True,
            env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
            timeout=120,
        )
        assert fast.returncode not in (0, 1) and fast.returncode == full.returncode, args
        assert (fast.stdout, fast.stderr) == (full.stdout, full.stderr), args


# What the stdio MCP server does without (zaxy_agents/mcp/stdio.py): the MCP SDK (its import alone was ~0.45 s of
# CPU) and the HTTP stack that only `--transport http` serves.
SDK_AND_HTTP = ("mcp", "mcp.types", "starlette", "uvicorn", "httpx", "sse_starlette", "pydantic_settings")


def test_stdio_serve_answers_a_first_checkout_without_the_mcp_sdk(tmp_path: Path) -> None:
    root = ["--eventloom-path", str(tmp_path / "loom"), "-s", "proj"]
    appended = run_zaxy("memory", "append", "the API runs on port 8080", "--key", "api.port", *root)
    assert appended.returncode == 0, appended.stderr
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    conversation = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "memory_checkout", "arguments": {"query": "which port does the API use?"}}},
    ]  # fmt: skip
    answers: list[dict] = []
    stdin = "".join(json.dumps(message) + "\n" for message in conversation)
    modules = _imported("serve", *root, "--no-capture", stdin=stdin, answers=answers)
    by_id = {answer["id"]: answer for answer in answers}
    # the control: the server answered all three, the checkout cited the fact, and it ran the real fabric
    assert by_id[1]["result"]["serverInfo"]["name"] == "zaxy"
    assert by_id[2]["result"]["tools"][0]["name"] == "memory_checkout"
    assert "eventloom://proj/events/" in json.dumps(by_id[3]["result"]["structuredContent"])
    assert {"zaxy_agents.fabric.checkout_ops", "zaxy_agents.mcp.stdio"} <= modules
    assert _heavy(modules, (*SDK_AND_HTTP, "kuzu", "pyarrow", "langgraph", "langchain_core")) == []
