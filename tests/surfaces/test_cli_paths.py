"""Where the CLI keeps memory, and what it does when it cannot (issue 25, item 5), through the real CLI:

* ``--eventloom-path`` at a file, under a missing parent or where this user cannot write: a structured error
  with a documented exit code (2, 2, 77), never a traceback;
* read-only commands never create a folder or a database (exit 3 when there is no memory);
* run from a subfolder, the CLI finds the workspace's ``.eventloom`` the way git finds ``.git``, and says so
  when it creates a new one;
* an unknown session is "no such session" (exit 3), and reading it creates nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_zaxy, run_zaxy_json
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric

READ_ONLY = [
    ["sessions"],
    ["replay", "-s", "s"],
    ["verify", "-s", "s"],
    ["memory", "checkout", "anything", "-s", "s"],
    ["memory", "query", "anything"],
    ["memory", "status"],
    ["memory", "capabilities"],
    ["memory", "fok", "anything", "-s", "s"],
    ["reproject"],
    ["eventloom", "export", "--output-dir", "out"],
]


def _files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


def _run_all(commands: list[list[str]], cwd: Path) -> list[subprocess.CompletedProcess[str]]:
    """Run the commands concurrently (each a real `zaxy` process), in ``cwd``."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("ZAXY_EVENTLOOM_PATH", None)
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "zaxy_agents.cli.entry", *command, "--json"],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for command in commands
    ]
    results = []
    for command, process in zip(commands, processes, strict=True):
        stdout, stderr = process.communicate(timeout=300)
        results.append(subprocess.CompletedProcess(command, process.returncode, stdout, stderr))
    return results


def test_read_only_commands_never_create_memory(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    before = _files(tmp_path)
    for result in _run_all(READ_ONLY, project):
        assert result.returncode == 3, (result.args, result.stdout, result.stderr)
        assert '"not_found"' in result.stdout and "Traceback" not in result.stderr, result.args
    assert _files(tmp_path) == before  # no .eventloom, no graph database, no export folder


def test_unknown_sessions_are_not_found_and_not_created(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as memory:
        memory.append("real", "note.recorded", {"text": "hello"})
    before = _files(root)
    session_reads = [command for command in READ_ONLY if "-s" in command]
    session_reads.append(["memory", "checkout", "anything", "-s", "real", "--scope", "s"])
    for command in session_reads:
        code, body = run_zaxy_json(*command, "--eventloom-path", str(root))
        assert code == 3, (command, body)
        assert body["error"]["code"] == "not_found" and "no such session 's'" in body["error"]["message"]
    assert [path for path in _files(root) if path.endswith(".jsonl")] == [p for p in before if p.endswith(".jsonl")]


def test_bad_eventloom_paths_are_structured_errors(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder")
    cases = [
        (a_file, 2, "is a file, not a folder"),
        (a_file / "loom", 2, "is a file"),
        (tmp_path / "missing" / "parent" / "loom", 2, "does not exist"),
    ]
    for path, exit_code, message in cases:
        for command in (["memory", "append", "x", "-s", "s"], ["append", "-s", "s", "-t", "note.recorded", "-a", "me"]):
            code, body = run_zaxy_json(*command, "--eventloom-path", str(path))
            assert code == exit_code, (path, body)
            assert body["error"]["field"] == "--eventloom-path" and message in body["error"]["message"]
        human = run_zaxy("sessions", "--eventloom-path", str(path))
        assert human.returncode in (2, 3) and "Traceback" not in human.stderr and "error" in human.stderr
    assert not (tmp_path / "missing").exists()
    with pytest.raises(InvalidRequestError) as raised, MemoryFabric.from_path(a_file) as memory:
        memory.append("s", "note.recorded", {"text": "x"})  # the Python API: structured too
    assert raised.value.field == "eventloom_path"


def test_an_unwritable_folder_is_exit_77(tmp_path: Path) -> None:
    if os.geteuid() == 0:  # root writes anywhere: use a filesystem that refuses to create folders
        target = Path("/sys/zaxy-memory-test")
        if not Path("/sys").is_dir():
            pytest.skip("running as root without /sys: no folder refuses root (run the suite as a normal user)")
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
        target = locked / "loom"
    code, body = run_zaxy_json("memory", "append", "x", "-s", "s", "--eventloom-path", str(target))
    assert code == 77, body
    assert body["error"]["code"] == "permission_denied" and "permission denied" in body["error"]["message"]
    assert not target.exists()


def test_the_cli_finds_the_workspace_memory_from_a_subfolder(tmp_path: Path) -> None:
    project = tmp_path / "project"
    deeper = project / "src" / "pkg"
    deeper.mkdir(parents=True)
    (project / ".git").mkdir()  # the workspace root, as the IDE hooks see it
    created = run_zaxy("memory", "append", "the API listens on 8080", "--key", "api.port", "-s", "p", cwd=deeper)
    assert created.returncode == 0, created.stderr
    assert "the first write creates it at" in created.stderr and str(project / ".eventloom") in created.stderr
    assert (project / ".eventloom" / "p.jsonl").exists() and not (deeper / ".eventloom").exists()
    assert (project / ".eventloom" / ".gitignore").read_text().splitlines()[-1] == "*"
    again = run_zaxy("memory", "append", "deploys on Tuesdays", "-s", "p", cwd=project / "src")
    assert again.returncode == 0 and "creating" not in again.stderr  # found, not created
    code, listing = run_zaxy_json("sessions", cwd=deeper)
    assert code == 0 and listing["eventloom_path"] == str(project / ".eventloom")
    assert [(row["session"], row["event_count"]) for row in listing["sessions"]] == [("p", 2)]
    code, packet = run_zaxy_json("memory", "checkout", "which port?", "-s", "p", cwd=deeper)
    assert code == 0 and "api.port" in [fact["name"] for fact in packet["current_facts"]]
