"""docs/deployment.md: "Passwords never appear in output: `status`, errors and `sessions` print the URI as
`user:***@host`" — through the real CLI, against an unreachable server and against the test server."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.conftest import run_zaxy
from zaxy_agents.storage.conformance.harness import postgres_schema

COMMANDS = [("backend", "status"), ("sessions",), ("memory", "checkout", "anything", "-s", "s")]


def _outputs(tmp_path: Path, env: dict[str, str]) -> list[tuple[int, str]]:
    runs = []
    for command in COMMANDS:
        for json_flag in ((), ("--json",)):
            result = run_zaxy(*command, *json_flag, "--eventloom-path", str(tmp_path / "loom"), env=env)
            runs.append((result.returncode, result.stdout + result.stderr))
    return runs


def test_an_unreachable_server_is_named_without_its_password(tmp_path: Path) -> None:
    uri = "postgresql://zaxy:pw-s3cret-0451@127.0.0.1:1/zaxy?password=pw-s3cret-0451&connect_timeout=2"
    for code, output in _outputs(tmp_path, {"ZAXY_BACKEND": uri}):
        assert code == 4, output  # unavailable
        assert "pw-s3cret-0451" not in output and "zaxy:***@127.0.0.1:1" in output, output
        assert "Traceback" not in output


def test_a_live_server_is_shown_without_its_password(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with postgres_schema(monkeypatch, select_backend=True) as dsn:
        password = urlsplit(dsn).password
        if not password:
            pytest.skip("the test server's DSN has no password: set ZAXY_TEST_POSTGRES_DSN to postgresql://user:pw@...")
        assert (
            run_zaxy("memory", "append", "a note", "-s", "s", "--eventloom-path", str(tmp_path / "loom")).returncode
            == 0
        )
        runs = _outputs(tmp_path, {})
        assert [code for code, _ in runs] == [0] * len(runs), runs
        for _, output in runs:  # the password may equal the user or database name: look for it as a password
            assert f":{password}@" not in output and f"password={password}" not in output, output
        assert any(":***@" in output for _, output in runs)
