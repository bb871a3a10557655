"""Shared fixtures: a fresh log folder per test, every storage backend for the contract suite (`backend`,
`elog`: the conformance kit's harnesses for files, PostgreSQL and memory://), and a helper to run the real
`zaxy` CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from zaxy_agents.storage.conformance.harness import POSTGRES_SKIP_REASON, PostgresHarness, postgres_dsn
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog

pytest_plugins = ["zaxy_agents.storage.conformance.pytest_plugin"]

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT.parent / "shared"


@pytest.fixture(autouse=True)
def _no_backend_from_the_outer_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests choose their backend explicitly; a developer's exported ZAXY_BACKEND must not leak in."""
    for name in ("ZAXY_BACKEND", "ZAXY_POSTGRES_SCHEMA", "ZAXY_EVENTLOOM_PATH"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    return tmp_path / "eventloom"


@pytest.fixture
def log(log_dir: Path):
    with JsonlEventLog(log_dir) as event_log:
        yield event_log


@pytest.fixture
def backend(zaxy_harness):
    """Each storage backend in turn (files, PostgreSQL, memory://): the conformance kit's harness fixture.

    PostgreSQL uses ZAXY_TEST_POSTGRES_DSN or a throwaway server the kit starts, else the test skips."""
    return zaxy_harness


@pytest.fixture
def postgres_backend():
    """The PostgreSQL backend alone (for PostgreSQL-specific tests)."""
    dsn = postgres_dsn()
    if dsn is None:
        pytest.skip(POSTGRES_SKIP_REASON)
    harness = PostgresHarness(dsn)
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture
def elog(backend):
    """An open EventLog on the current backend."""
    with backend.open() as event_log:
        yield event_log


def run_zaxy(
    *args: str,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run the installed console entry point exactly as a user would (python -m keeps the venv)."""
    full_env = {**os.environ, **(env or {})}
    full_env.setdefault("NO_COLOR", "1")
    full_env["COLUMNS"] = "200"
    return subprocess.run(
        [sys.executable, "-m", "zaxy_agents.cli.entry", *args],
        capture_output=True,
        text=True,
        env=full_env,
        input=stdin,
        cwd=cwd,
        timeout=timeout,
    )


def run_example(name: str, eventloom: Path, timeout: float = 180) -> str:
    """Run ``examples/<name>/agent.py`` offline (scripted models: ``ZAXY_EXAMPLE_MODEL`` unset) on the memory at
    ``eventloom``, as its README says; returns its output, failing with its stderr if it exits non-zero."""
    env = {key: value for key, value in os.environ.items() if key != "ZAXY_EXAMPLE_MODEL"}
    done = subprocess.run(
        [sys.executable, "agent.py"],
        cwd=REPO_ROOT / "examples" / name,
        env={**env, "ZAXY_EVENTLOOM_PATH": str(eventloom)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_zaxy_json(*args: str, **kwargs) -> tuple[int, dict]:
    result = run_zaxy(*args, "--json", **kwargs)
    try:
        return result.returncode, json.loads(result.stdout)
    except json.JSONDecodeError as exc:  # pragma: no cover - shows the real output on failure
        raise AssertionError(f"not JSON (rc={result.returncode}): {result.stdout!r} {result.stderr!r}") from exc
