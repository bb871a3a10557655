"""Helpers for capture tests: an isolated workspace and home, recorded hook payloads, the real hook CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, run_zaxy
from zaxy_agents.capture.workspace import default_session_id

FIXTURES = REPO_ROOT / "tests" / "fixtures"


class Env:
    """An isolated workspace (a git-like checkout) plus private HOME / CODEX_HOME / Claude config dir."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.workspace = root / "shop"
        (self.workspace / ".git").mkdir(parents=True)
        self.home = root / "home"
        self.home.mkdir()
        self.codex_home = self.home / ".codex"
        self.claude_dir = self.home / ".claude"

    @property
    def eventloom(self) -> Path:
        return self.workspace / ".eventloom"

    def vars(self, **extra: str) -> dict[str, str]:
        # Empty strings neutralise whatever the developer's shell exports.
        return {
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "CLAUDE_CONFIG_DIR": str(self.claude_dir),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "ZAXY_EVENTLOOM_PATH": "",
            "ZAXY_HOOKS_DISABLED": "",
            "ZAXY_HOOKS_SESSION": "",
            "CLAUDE_PROJECT_DIR": "",
            **extra,
        }

    def session(self, client: str, workspace: Path | None = None) -> str:
        return default_session_id(client, str((workspace or self.workspace).resolve()))

    def zaxy(self, *args: str, stdin: str | None = None, cwd: Path | None = None, **extra: str):
        return run_zaxy(*args, env=self.vars(**extra), stdin=stdin, cwd=cwd or self.workspace)

    def zaxy_json(self, *args: str, cwd: Path | None = None, **extra: str) -> tuple[int, dict]:
        result = self.zaxy(*args, "--json", cwd=cwd, **extra)
        try:
            return result.returncode, json.loads(result.stdout)
        except json.JSONDecodeError as exc:  # pragma: no cover - shows the real output on failure
            raise AssertionError(f"not JSON (rc={result.returncode}): {result.stdout!r} {result.stderr!r}") from exc

    def hook(
        self, client: str, name: str, *, cwd: Path | None = None, fields: dict | None = None, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        """Feed a recorded payload to the real `zaxy hook-event` exactly as the client would.

        ``fields`` replaces fields of the recorded payload (a prompt, a summary, a last message...)."""
        payload = hook_payload(client, name, cwd or self.workspace, self.home)
        if fields:
            payload = json.dumps({**json.loads(payload), **fields})
        event = json.loads(payload)["hook_event_name"]
        return self.zaxy("hook-event", event, "--client", client, stdin=payload, cwd=cwd or self.workspace, **extra)

    def events(self, session: str, eventloom: Path | None = None) -> list[dict]:
        path = (eventloom or self.eventloom) / f"{session}.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]


def hook_payload(client: str, name: str, cwd: Path, home: Path) -> str:
    """A recorded hook payload with the recording machine's paths replaced by this test's."""
    text = (FIXTURES / "hooks" / client / f"{name}.json").read_text()
    return (
        text.replace("__CWD__", str(cwd)).replace("__HOME__", str(home)).replace("__CODEX_HOME__", str(home / ".codex"))
    )


def fixture_text(name: str, cwd: Path, home: Path) -> str:
    text = (FIXTURES / "transcripts" / name).read_text()
    return (
        text.replace("__CWD__", str(cwd)).replace("__HOME__", str(home)).replace("__CODEX_HOME__", str(home / ".codex"))
    )


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)
