"""Every `zaxy ...` command and `--flag` that docs/cli.md's tables name exists (alternatives such as
`successors\\|predecessors` are checked one by one), and a command's row mentions each of its options except the
ones every command shares."""

from __future__ import annotations

import re
from typing import Any

from typer.main import get_command

from tests.conftest import REPO_ROOT
from zaxy_agents.cli.app import app

ROOT = get_command(app)
SHARED = {"--help", "--json", "--eventloom-path", "--backend", "--session-id", "--version"}
DOCUMENTED_ELSEWHERE = {"hooks", "capture", "benchmark"}  # hooks.md, retrieval.md / benchmarks.md
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)")


def _rows() -> list[tuple[str, str]]:
    """(the command cell's first `zaxy ...` spec, the whole row) of every command row."""
    text = (REPO_ROOT / "docs" / "cli.md").read_text().replace("\\|", "|")
    return [(m.group(1), m.group(0)) for m in re.finditer(r"^\| `zaxy ([^`]+)`.*$", text, re.MULTILINE)]


def _commands(spec: str) -> list[tuple[str, Any]]:
    """The commands a row names: words are followed down the command tree; `a|b` forks."""
    found = [("", ROOT)]
    for word in spec.split():
        groups = [(path, cmd) for path, cmd in found if hasattr(cmd, "commands")]
        if not groups or not re.fullmatch(r"[a-z][a-z-]*(\|[a-z][a-z-]*)*", word):
            break
        if not all(w in cmd.commands for _, cmd in groups for w in word.split("|")):
            break
        found = [(f"{path} {w}".strip(), cmd.commands[w]) for path, cmd in groups for w in word.split("|")]
    return [(path, cmd) for path, cmd in found if path]


def _long_options(param: Any) -> set[str]:
    return {opt for opt in [*param.opts, *getattr(param, "secondary_opts", [])] if opt.startswith("--")}


def test_every_flag_in_the_tables_exists_and_no_option_goes_unmentioned() -> None:
    unknown, unmentioned = [], []
    for spec, row in _rows():
        if spec == "--version":
            assert any("--version" in _long_options(param) for param in ROOT.params)
            continue
        commands = _commands(spec)
        assert commands, f"docs/cli.md names a command that does not exist: zaxy {spec}"
        for path, command in commands:
            if (command.context_settings or {}).get("ignore_unknown_options"):
                continue  # `zaxy hook-event` parses its own arguments on the hook fast path, before Typer
            options = [_long_options(param) for param in command.params]
            known = set().union(*options) if options else set()
            unknown += [f"zaxy {path} {flag}" for flag in sorted(set(FLAG.findall(spec)) - known)]
            if path.split()[0] not in DOCUMENTED_ELSEWHERE:
                mentioned = set(FLAG.findall(row))
                unmentioned += [
                    f"zaxy {path} {sorted(opts)[0]}" for opts in options if opts and not opts & (mentioned | SHARED)
                ]
    assert not unknown, f"docs/cli.md names options that do not exist: {unknown}"
    assert not unmentioned, f"docs/cli.md does not mention: {unmentioned}"


def test_eventloom_page_cli_block_commands_take_the_shared_options() -> None:
    """docs/eventloom.md: the commands of its CLI block accept --eventloom-path, --backend and --json, except
    `zaxy demo` (no --backend)."""
    text = (REPO_ROOT / "docs" / "eventloom.md").read_text().split("## CLI", 1)[1].split("\n## ", 1)[0]
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    for line in block.splitlines():
        words = line.split("#")[0].split()[1:]
        (path, command), *_ = _commands(" ".join(words))
        expected = {"--eventloom-path", "--json"} | (set() if path == "demo" else {"--backend"})
        options = set().union(*(_long_options(param) for param in command.params))
        assert expected <= options, (path, expected - options)
        if path == "demo":
            assert "--backend" not in options  # the page says so: update it if demo learns --backend
