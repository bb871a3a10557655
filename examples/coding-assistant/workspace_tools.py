"""The assistant's workspace tools. Each records what it did as typed memory in the thread's session
(``file.edit.applied``, ``command.completed``), so the working set and the recovery packet know which files
changed and which commands ran, with exit codes."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from langchain.tools import ToolRuntime, tool

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import memory_session


def workspace_tools(memory: MemoryFabric, workspace: Path) -> list:
    root = workspace.resolve()
    root.mkdir(parents=True, exist_ok=True)

    @tool
    def write_file(path: str, content: str, runtime: ToolRuntime) -> str:
        """Create or replace a text file in the workspace."""
        target = (root / path).resolve()
        if root not in target.parents:
            return "error: the path is outside the workspace"
        before = target.read_text().splitlines() if target.exists() else None
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        lines = content.splitlines()
        memory.append(
            memory_session(memory, runtime.config),
            "file.edit.applied",
            {
                "path": path,
                "operation": "create" if before is None else "edit",
                "lines_added": len(lines),
                "lines_removed": len(before or []),
            },
        )
        return f"wrote {path} ({len(lines)} lines)"

    @tool
    def run_tests(runtime: ToolRuntime) -> str:
        """Run the workspace's unit tests (python -m unittest) and report the exit code."""
        done = subprocess.run(
            [sys.executable, "-m", "unittest", "-q"], cwd=root, capture_output=True, text=True, timeout=120
        )
        output = (done.stdout + done.stderr).strip()
        memory.append(
            memory_session(memory, runtime.config),
            "command.completed",
            {"command": "python -m unittest -q", "exit_code": done.returncode, "output": output[-500:]},
        )
        return f"exit code {done.returncode}\n{output[-1500:]}"

    @tool
    def remember_preference(preference: str, runtime: ToolRuntime) -> str:
        """Remember a lasting preference of the user (every thread can recall it)."""
        key = hashlib.sha256(preference.encode()).hexdigest()[:12]
        runtime.store.put(("preferences",), key, {"content": preference})
        return f"saved preference {key}"

    return [write_file, run_tests, remember_preference]
