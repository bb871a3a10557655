"""Reading and writing client config files safely: parse errors are structured, writes are atomic.

A half-written settings file would break the user's IDE, so every write goes to a temp file in the same
folder, is fsynced and renamed over the original (keeping its permissions).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from zaxy_agents.errors import InvalidRequestError


def load_json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; ``None`` when the file does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidRequestError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
            field=str(path),
            remediation="Fix the file (comments and trailing commas are not JSON), or merge the printed entry by "
            "hand: rerun without --install / with --print.",
        ) from exc
    if not isinstance(value, dict):
        raise InvalidRequestError(
            f"{path} does not hold a JSON object", field=str(path), remediation="The file must contain {...}."
        )
    return value


def dump_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically, creating parent folders and keeping the file's mode.

    Refused before anything is written when ``text`` cannot be UTF-8 (a path argument holding bytes that are not
    UTF-8, which reach Python as lone surrogates): client config files are UTF-8 JSON / TOML."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[max(exc.start - 30, 0) : exc.end + 10].encode("utf-8", "backslashreplace").decode()
        raise InvalidRequestError(
            f"cannot write {path}: it would hold bytes that are not UTF-8 (near {bad!r})",
            field="eventloom_path",
            remediation="Pass paths and names whose characters are valid UTF-8.",
        ) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def zaxy_command() -> list[str]:
    """The absolute command that runs this installation's ``zaxy`` (argv list, never relying on PATH).

    The console script next to the running interpreter is preferred (a venv's ``bin/zaxy``); otherwise the
    interpreter itself runs the entry module. The interpreter path is made absolute but symlinks are kept, so a
    venv's ``python`` stays the venv's.
    """
    interpreter = os.path.abspath(sys.executable)
    script = os.path.join(os.path.dirname(interpreter), "zaxy.exe" if os.name == "nt" else "zaxy")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [script]
    return [interpreter, "-m", "zaxy_agents.cli.entry"]


def shell_command(argv: list[str]) -> str:
    """``argv`` as one shell command line (hook commands are run through a shell)."""
    return " ".join(shlex.quote(part) for part in argv)


# How a shared (committed) config finds the workspace's root when the client offers no variable for it.
ROOT_SHELL = '"$(git rev-parse --show-toplevel 2>/dev/null || pwd)"'


def workspace_relative(path: str, workspace_root: str) -> str | None:
    """``path`` relative to the workspace (``.venv/bin/zaxy``), or ``None`` when it lies outside it."""
    absolute, root = os.path.abspath(path), os.path.abspath(workspace_root)
    try:
        inside = os.path.commonpath([absolute, root]) == root
    except ValueError:  # different drives
        return None
    return os.path.relpath(absolute, root) if inside else None


class PortableCommand:
    """The ``zaxy`` command for a config file, as portable as the file.

    A machine file (user or local scope) names the absolute executable. A team-shared file never does: a
    ``zaxy`` inside the workspace (its ``.venv``) is named relative to the workspace root (``root_prefix``: the
    client's variable where it has one, e.g. ``${workspaceFolder}``, else the git top level found at run time),
    and a ``zaxy`` elsewhere is named ``zaxy`` and found on ``PATH`` (``path_warning`` says when it is not).
    """

    def __init__(self, argv: list[str], *, relative: str | None, path_warning: str | None) -> None:
        self.argv, self.relative, self.path_warning = argv, relative, path_warning


def portable_zaxy(workspace_root: str, *, shared: bool, argv: list[str] | None = None) -> PortableCommand:
    """The command for a config file of a workspace (``argv``: this installation's ``zaxy``, for tests)."""
    import shutil

    argv = list(argv or zaxy_command())
    if not shared:
        return PortableCommand(argv, relative=None, path_warning=None)
    relative = workspace_relative(argv[0], workspace_root)
    if relative is not None:
        return PortableCommand([relative, *argv[1:]], relative=relative, path_warning=None)
    found = shutil.which("zaxy")
    warning = None
    if found is None:
        warning = (
            "`zaxy` is not on PATH here: the team-shared entry runs `zaxy` from PATH (install it with "
            "`pipx install zaxy-agents`), or keep a machine-specific entry out of the repository"
        )
    elif os.path.realpath(found) != os.path.realpath(argv[0]):
        warning = f"`zaxy` on PATH is {found}, not the one running now ({argv[0]})"
    return PortableCommand(["zaxy"], relative=None, path_warning=warning)
