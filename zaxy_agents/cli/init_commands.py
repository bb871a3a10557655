"""`zaxy init --template NAME DIR`: start a project from one of the runnable agent templates.

The templates are the runnable agents of the top-level ``examples/`` folder (shipped in the wheel, read through
:mod:`zaxy_agents.assets`); each is a folder with a README whose first heading names it.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from zaxy_agents.errors import InvalidRequestError, NotFoundError

from .common import JsonFlag, console, emit_json, handled

_SKIPPED = {"__pycache__", ".eventloom", ".zaxy"}


def register(app: typer.Typer) -> None:
    app.command("init")(init_command)


def init_command(
    directory: Annotated[Path | None, typer.Argument(help="New project folder (must not exist or be empty).")] = None,
    template: Annotated[str | None, typer.Option("--template", "-t", help="Template name (see --list).")] = None,
    list_templates: Annotated[bool, typer.Option("--list", help="List the templates and exit.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Write into a non-empty folder, replacing files.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """Copy a runnable agent template (memory, tools, a scripted model for offline runs) into DIRECTORY."""
    with handled(json_output):
        available = templates()
        if list_templates:
            _print_templates(available, json_output)
            return
        if template is None or directory is None:
            raise InvalidRequestError(
                "init needs --template NAME and a DIRECTORY",
                field="--template" if template is None else "DIRECTORY",
                remediation="Run `zaxy init --list` to see templates, then `zaxy init --template NAME DIR`.",
            )
        if template not in available:
            raise NotFoundError(
                f"no template {template!r}",
                field="--template",
                remediation=f"Choose one of: {', '.join(sorted(available))}.",
            )
        target = directory.expanduser()
        if target.exists() and (not target.is_dir() or (any(target.iterdir()) and not force)):
            raise InvalidRequestError(
                f"{target} exists and is not an empty folder",
                field="DIRECTORY",
                remediation="Pick a new folder, or pass --force to write the template's files into it.",
            )
        written = _copy(available[template]["source"], target)
        from zaxy_agents.capture.gitignore import ignore_eventloom

        if (
            ignore_eventloom(str(target), str(target / ".eventloom"))["action"] == "added"
            and ".gitignore" not in written
        ):
            written.append(".gitignore")
        if json_output:
            emit_json({"template": template, "path": str(target.resolve()), "files": written})
            return
        console.print(f"created [bold]{target}[/] from template [cyan]{template}[/] ({len(written)} files)")
        python = shlex.quote(sys.executable)  # the interpreter that has zaxy-agents (a bare `python` may not)
        console.print(
            f"next: [bold]cd {shlex.quote(str(target))} && {python} agent.py[/]  (offline; README.md: a real model)",
            soft_wrap=True,
            highlight=False,
        )


def templates() -> dict[str, dict[str, Any]]:
    """Template name -> ``{"title", "description", "source"}``: the runnable agents of ``examples/``.

    The examples are the templates (shipped in the wheel as package data), so what ``zaxy init`` writes is
    exactly what the test suite runs.
    """
    from zaxy_agents.assets import asset

    found: dict[str, dict[str, Any]] = {}
    root = asset("examples")
    for entry in sorted(root.iterdir(), key=lambda item: item.name):
        readme = entry / "README.md"
        if not entry.is_dir() or entry.name in _SKIPPED or not readme.is_file():
            continue
        title, description = _summary(readme.read_text(encoding="utf-8"))
        found[entry.name] = {"title": title, "description": description, "source": entry}
    return found


def _summary(readme: str) -> tuple[str, str]:
    lines = readme.splitlines()
    title = next((line.lstrip("# ").strip() for line in lines if line.startswith("# ")), "")
    paragraph: list[str] = []
    for line in lines[1:]:
        if line.strip() and not line.startswith("#"):
            paragraph.append(line.strip())
        elif paragraph:
            break
    return title, " ".join(paragraph)


def _copy(source: Any, target: Path, prefix: str = "") -> list[str]:
    target.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    for entry in sorted(source.iterdir(), key=lambda item: item.name):
        if entry.name in _SKIPPED or entry.name.endswith(".pyc"):
            continue
        if entry.is_dir():
            written += _copy(entry, target / entry.name, f"{prefix}{entry.name}/")
        else:
            (target / entry.name).write_bytes(entry.read_bytes())
            written.append(prefix + entry.name)
    return written


def _print_templates(available: dict[str, dict[str, Any]], json_output: bool) -> None:
    if json_output:
        emit_json(
            {
                "templates": [
                    {"name": name, **{k: v for k, v in info.items() if k != "source"}}
                    for name, info in available.items()
                ]
            }
        )
        return
    table = Table(title="zaxy init --template NAME DIR")
    for column in ("name", "title", "description"):
        table.add_column(column, overflow="fold")
    for name, info in available.items():
        table.add_row(name, info["title"], info["description"])
    console.print(table)
