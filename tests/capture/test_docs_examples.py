"""The runnable examples in docs/hooks.md and docs/ide-config.md run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.capture.conftest import Env
from tests.conftest import REPO_ROOT


def _block(page: str, language: str, heading: str) -> str:
    text = (REPO_ROOT / "docs" / page).read_text()
    section = text.split(heading, 1)[1]
    return re.search(rf"```{language}\n(.*?)```", section, re.DOTALL).group(1)


def _run_bash(script: str, env: Env) -> subprocess.CompletedProcess[str]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, **env.vars(), "PATH": path, "TMPDIR": str(env.root), "NO_COLOR": "1", "COLUMNS": "200"},
        timeout=120,
    )


def test_hooks_page_try_it_runs(env: Env) -> None:
    result = _run_bash(_block("hooks.md", "bash", "## Try it"), env)
    assert result.returncode == 0, result.stderr
    assert "pytest -q` → exit 0" in result.stdout  # the packet shows the command with its exit code
    assert '"additionalContext"' in result.stdout and "add jittered retries" in result.stdout


def test_hooks_page_python_example_runs(env: Env) -> None:
    code = _block("hooks.md", "python", "### The working set behind the packets")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=env.workspace)
    assert result.returncode == 0, result.stderr
    assert "[open] Add retries (T-1) eventloom://proj/events/1#" in result.stdout


def test_ide_config_page_try_it_runs(env: Env) -> None:
    result = _run_bash(_block("ide-config.md", "bash", "## Try it"), env)
    assert result.returncode == 0, result.stderr
    assert '"mcpServers"' in result.stdout and "[mcp_servers.zaxy]" in result.stdout
