"""Memory stays out of git (issue 25, item 6): a new Eventloom ignores itself, and `zaxy hooks`, `zaxy ide-config
--install` and `zaxy init` add it to the workspace's .gitignore. Checked with the real `git check-ignore`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.capture.conftest import Env
from tests.conftest import run_zaxy_json
from zaxy_agents.fabric import MemoryFabric

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed (apt-get install git)")


def _ignored(repo: Path, path: str) -> bool:
    return subprocess.run(["git", "check-ignore", "-q", path], cwd=repo, check=False).returncode == 0


def _git_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_a_new_eventloom_ignores_itself(tmp_path: Path) -> None:
    repo = _git_repo(tmp_path / "repo")
    with MemoryFabric.from_path(repo / "memory") as memory:  # any name: the folder carries its own .gitignore
        memory.append("s", "note.recorded", {"text": "private notes"})
    assert _ignored(repo, "memory/s.jsonl") and _ignored(repo, "memory/.gitignore")
    assert (repo / "memory" / ".gitignore").read_text().endswith("*\n")
    existing = repo / "existing"
    existing.mkdir()
    with MemoryFabric.from_path(existing) as memory:  # a folder that existed already is not touched
        memory.append("s", "note.recorded", {"text": "x"})
    assert not (existing / ".gitignore").exists()


def test_hooks_and_ide_config_add_the_memory_to_the_workspace_gitignore(env: Env) -> None:
    subprocess.run(["git", "init", "-q", str(env.workspace)], check=True)
    (env.workspace / ".gitignore").write_text("node_modules/")  # no trailing newline: appended cleanly
    code, report = env.zaxy_json("hooks", "claude-code")
    assert code == 0 and report["gitignore"]["action"] == "added", report
    assert _ignored(env.workspace, ".eventloom/claude-code.shop.jsonl")
    lines = (env.workspace / ".gitignore").read_text().splitlines()
    assert lines[0] == "node_modules/" and lines[-1] == "/.eventloom/"
    code, report = env.zaxy_json("hooks", "codex")
    assert code == 0 and report["gitignore"]["action"] == "present"
    code, info = env.zaxy_json("ide-config", "cursor", "--install")
    assert code == 0 and info["gitignore"]["action"] == "present"
    assert (env.workspace / ".gitignore").read_text().count(".eventloom") == 1
    printed = env.zaxy_json("hooks", "claude-code", "--print")[1]
    assert "gitignore" not in printed  # --print writes nothing


def test_ide_config_install_in_a_fresh_workspace(env: Env) -> None:
    code, info = env.zaxy_json("ide-config", "vscode", "--install")
    assert code == 0 and info["gitignore"] == {
        "path": str((env.workspace / ".gitignore").resolve()),
        "entry": "/.eventloom/",
        "action": "added",
    }


def test_init_writes_a_gitignore_for_the_memory(tmp_path: Path) -> None:
    code, result = run_zaxy_json("init", "--template", "minimal-graph", str(tmp_path / "agent"))
    assert code == 0 and ".gitignore" in result["files"]
    repo = _git_repo(tmp_path / "agent")
    assert _ignored(repo, ".eventloom/minimal.jsonl") and not _ignored(repo, "agent.py")
