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
    """Replace ``path`` with ``text`` atomically, creating parent folders and keeping the file's mode."""
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
