"""The runnable examples in docs/mcp.md and docs/cli.md run as written, and cli.md names every command."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT


def _block(page: str, language: str, heading: str, index: int = 0) -> str:
    section = (REPO_ROOT / "docs" / page).read_text().split(heading, 1)[1]
    return re.findall(rf"```{language}\n(.*?)```", section, re.DOTALL)[index]


def _bash(script: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PATH": path, "TMPDIR": str(cwd), "NO_COLOR": "1", "COLUMNS": "200", **(env or {})},
        timeout=180,
    )


def test_mcp_page_try_it_runs(tmp_path: Path) -> None:
    result = _bash(_block("mcp.md", "bash", "## Try it"), tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].startswith("['memory_checkout', ") and "memory_feeling_of_knowing" in lines[1]
    assert "eventloom://demo/events/1#" in result.stdout and "[zaxy] answerability" in result.stdout
    assert "'code': 'invalid_request'" in lines[-1]


def test_mcp_page_http_example_runs(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    script = _block("mcp.md", "bash", "**Streamable HTTP**").replace("8765", port)
    result = _bash(script, tmp_path)
    assert result.returncode == 0, result.stderr
    assert '"citation":"eventloom://demo/events/1#' in result.stdout


def test_mcp_page_tool_example_registers_a_callable_tool() -> None:
    snippet = _block("mcp.md", "python", "## Adding a tool")
    check = """
import sys
from zaxy_agents.mcp import registry
from zaxy_agents.mcp.caller import Caller
table = registry.ToolTable.from_modules([sys.modules["__main__"]])
spec = table.get("memory_echo")
assert spec is not None and spec.input_schema()["additionalProperties"] is False
assert "memory_echo" not in [s.name for s in table.listed("core")]
assert registry.get("memory_echo") is None  # defining a tool does not register it anywhere
print(spec.handler(registry.ToolCall(None, spec.args.model_validate({"text": "hi"}), Caller(session="s"))))
"""
    result = subprocess.run([sys.executable, "-c", snippet + check], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "{'session': 's', 'text': 'hi'}"


def test_cli_page_try_it_runs(tmp_path: Path) -> None:
    result = _bash(_block("cli.md", "bash", "## Try it"), tmp_path)
    assert result.returncode == 0, result.stderr
    assert "quality and diagnostics" in result.stdout and "eventloom://proj/events/2#" in result.stdout
    assert "6 events" in result.stdout and "ok proj: 6 events, chain intact" in result.stdout


def test_cli_page_names_every_command() -> None:
    from typer.main import get_command

    from zaxy_agents.cli.app import app

    text = (REPO_ROOT / "docs" / "cli.md").read_text()
    root = get_command(app)
    missing = []
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        children = getattr(command, "commands", None)
        names = [f"zaxy {name} {child}" for child in children] if children else [f"zaxy {name}"]
        if name in {"hooks", "capture", "benchmark"}:  # documented as rows of `a|b|c` alternatives
            rows = [line for line in text.splitlines() if line.startswith(f"| `zaxy {name} ")]
            listed = {word for row in rows for word in re.split(r"[\s`|\\]+", row.split("` |")[0])}
            names = [f"zaxy {name}"] + [f"zaxy {name} {child}" for child in children or () if child not in listed]
        missing += [full for full in names if full not in text]
    assert not missing, f"docs/cli.md does not mention: {missing}"
