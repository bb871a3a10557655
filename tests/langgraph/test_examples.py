"""The template agents run offline as users run them, say what their READMEs promise, and `zaxy init` ships them
unchanged (the examples are the templates)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT, run_zaxy, run_zaxy_json

EXAMPLES = REPO_ROOT / "examples"
NAMES = ["coding-assistant", "research-notes", "minimal-graph"]
CITATION = r"eventloom://[A-Za-z0-9_.-]+/events/\d+#[0-9a-f]{12}"


def files(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and ".eventloom" not in path.parts
    }


def run_agent(folder: Path, tmp_path: Path) -> str:
    env = {key: value for key, value in os.environ.items() if key != "ZAXY_EXAMPLE_MODEL"}
    env |= {"ZAXY_EVENTLOOM_PATH": str(tmp_path / "loom"), "CODING_WORKSPACE": str(tmp_path / "workspace")}
    done = subprocess.run(
        [sys.executable, "agent.py"], cwd=folder, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_coding_assistant(tmp_path: Path) -> None:
    out = run_agent(EXAMPLES / "coding-assistant", tmp_path)
    recorded = re.search(rf"\[monday\] assistant: Recorded: ({CITATION}), ({CITATION})", out)
    assert recorded, out
    assert "the tests ran with exit code 0" in out and (tmp_path / "workspace" / "retry.py").exists()

    where = out.split("[monday] user: Where are we?")[1].split("== after compaction")[0]
    for expected in ("decision: ", "open task: ", "file: ", "retry.py", "command: "):
        assert expected in where
    assert len(re.findall(CITATION, where)) >= 4

    recovery = out.split("recovery packet:\n")[1].split("compaction recorded")[0]
    assert recovery.startswith("# Zaxy memory: working state recovered after context compaction")
    assert "Add retries to the HTTP client (T-1)" in recovery and "backoff" in recovery
    assert "retry.py (create" in recovery and "`python -m unittest -q` → exit 0" in recovery
    assert re.search(rf"compaction recorded: {CITATION} \(\d+ -> \d+ tokens\)", out)

    tuesday = out.split("== a new thread")[1]
    assert "decision: [decision] http retries: Retry HTTP calls with exponential backoff" in tuesday
    assert "open task: Add retries to the HTTP client" in tuesday
    assert re.search(rf"preference: .*I prefer small pull requests \({CITATION}\)", tuesday)
    assert "eventloom://langgraph.monday/" in tuesday  # carried across threads


def test_research_notes(tmp_path: Path) -> None:
    out = run_agent(EXAMPLES / "research-notes", tmp_path)
    assert out.startswith("ingested 6 new sections into session research-library")
    answers = re.findall(r"^A: (.*)$", out, re.MULTILINE)
    assert re.fullmatch(
        rf"According to the notes: Retry guide / Backoff Retry failed HTTP calls .* \[{CITATION}\]", answers[0]
    )
    assert "Audit logs are kept for 400 days" in answers[1]
    assert answers[2] == "The notes do not answer this; I would rather ask than guess."
    feedback = out.split("feedback recorded (sources that were used):\n")[1].split("\n")
    assert feedback[:2] == [
        f"  notes/retry-guide.md#0 <- {re.search(CITATION, answers[0]).group(0)}",
        f"  notes/data-retention.md#0 <- {re.search(CITATION, answers[1]).group(0)}",
    ]
    assert run_agent(EXAMPLES / "research-notes", tmp_path).startswith("ingested 0 new sections")  # idempotent


def test_minimal_graph_is_short_and_recalls_another_thread(tmp_path: Path) -> None:
    source = (EXAMPLES / "minimal-graph" / "agent.py").read_text()
    assert len(source.splitlines()) < 40
    out = run_agent(EXAMPLES / "minimal-graph", tmp_path)
    assert re.fullmatch(
        r"- \[current, transcript\.turn\] Our staging database is db-staging-2\. \(eventloom://langgraph\.a/events/\d+#[0-9a-f]{12}\)\n",
        out,
    )


def test_zaxy_init_copies_a_template_that_runs(tmp_path: Path) -> None:
    code, listing = run_zaxy_json("init", "--list")
    examples = sorted(path.name for path in EXAMPLES.iterdir() if (path / "agent.py").is_file())
    assert set(NAMES) < set(examples) and code == 0 and [t["name"] for t in listing["templates"]] == examples
    assert all(t["title"] and t["title"] != t["name"] and t["description"] for t in listing["templates"])

    target = tmp_path / "my-agent"
    code, created = run_zaxy_json("init", "--template", "minimal-graph", str(target))
    assert code == 0 and created["files"] == ["README.md", "agent.py", ".gitignore"]  # memory stays out of git
    assert files(target) == {**files(EXAMPLES / "minimal-graph"), ".gitignore": (target / ".gitignore").read_bytes()}
    assert "/.eventloom/" in (target / ".gitignore").read_text()
    assert "db-staging-2" in run_agent(target, tmp_path)

    code, error = run_zaxy_json("init", "--template", "minimal-graph", str(target))
    assert code == 2 and error["error"]["field"] == "DIRECTORY"
    code, error = run_zaxy_json("init", "--template", "nope", str(tmp_path / "x"))
    assert code == 3 and error["error"]["code"] == "not_found"
    human = run_zaxy("init", "--template", "research-notes", str(tmp_path / "notes-agent"))
    assert human.returncode == 0 and "Traceback" not in human.stderr
    assert f"{sys.executable} agent.py" in human.stdout  # the Python that has zaxy-agents, not a bare `python`
    assert len(files(tmp_path / "notes-agent")) == 8 and "notes/retry-guide.md" in files(tmp_path / "notes-agent")


def test_template_readmes_run_as_written_with_the_readme_set_up(tmp_path: Path) -> None:
    """Each README's first command, verbatim, from its folder: the main README's `.venv`, not a bare `python`."""
    venv_python = REPO_ROOT / ".venv" / "bin" / "python"
    if not venv_python.exists():
        import pytest

        pytest.skip("no .venv at the repository root: create it with the main README's set-up command")
    for name in ("minimal-graph",):
        readme = (EXAMPLES / name / "README.md").read_text()
        first = re.search(r"```bash\n([^\n#]+)", readme).group(1).strip()
        assert first == "../../.venv/bin/python agent.py"
        env = {key: value for key, value in os.environ.items() if key != "ZAXY_EXAMPLE_MODEL"}
        env["ZAXY_EVENTLOOM_PATH"] = str(tmp_path / "loom")
        done = subprocess.run(first, shell=True, cwd=EXAMPLES / name, env=env, capture_output=True, text=True)
        assert done.returncode == 0 and "db-staging-2" in done.stdout, done.stderr
    for readme in EXAMPLES.glob("*/README.md"):
        assert not re.search(r"^python agent\.py", readme.read_text(), re.MULTILINE), readme
