"""docs/cli.md "Where memory lives": a writing command that finds no Eventloom says so on stderr and creates it
at the workspace root with a `.gitignore`; one that fails before writing leaves no folder; a read-only command
creates nothing and exits 3."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_zaxy


def test_writes_create_the_eventloom_and_failures_and_reads_leave_nothing(tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "src" / "pkg").mkdir(parents=True)
    here = workspace / "src" / "pkg"
    env = {"ZAXY_EVENTLOOM_PATH": ""}

    read = run_zaxy("memory", "checkout", "anything", "-s", "s", cwd=here, env=env)
    assert read.returncode == 3 and not (workspace / ".eventloom").exists() and not (here / ".eventloom").exists()

    failed = run_zaxy("memory", "invalidate", "api.port", "--reason", "moved", "-s", "s", cwd=here, env=env)
    assert failed.returncode == 3 and "not_found" in failed.stderr
    assert "creating" not in failed.stderr  # it never claims to have created a folder it did not
    assert not (workspace / ".eventloom").exists()

    wrote = run_zaxy("memory", "append", "the api listens on 8080", "-s", "s", cwd=here, env=env)
    assert wrote.returncode == 0 and "zaxy: new memory: no Eventloom yet; the first write creates it at" in wrote.stderr
    assert (workspace / ".eventloom" / "s.jsonl").is_file()  # at the workspace root, not in src/pkg
    assert (workspace / ".eventloom" / ".gitignore").read_text().splitlines()[-1] == "*"  # ignores everything
    again = run_zaxy("memory", "append", "the api listens on 9090", "-s", "s", cwd=here, env=env)
    assert again.returncode == 0 and "new memory" not in again.stderr
