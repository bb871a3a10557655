"""Shared CLI plumbing: common options, opening the fabric, JSON vs. human output, exit codes."""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from rich.console import Console

from zaxy_agents.errors import InvalidRequestError, NotFoundError, ZaxyError

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_INVALID = 2
EXIT_NOT_FOUND = 3
EXIT_UNAVAILABLE = 4
EXIT_INTEGRITY = 5
EXIT_INTERNAL = 70
EXIT_PERMISSION = 77  # sysexits.h EX_NOPERM
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report it

EXIT_BY_CODE = {
    "invalid_request": EXIT_INVALID,
    "not_found": EXIT_NOT_FOUND,
    "locked": EXIT_UNAVAILABLE,
    "unavailable": EXIT_UNAVAILABLE,
    "schema_mismatch": EXIT_UNAVAILABLE,
    "unauthorized": EXIT_INVALID,
    "conflict": EXIT_CHECK_FAILED,
    "integrity_error": EXIT_INTEGRITY,
    "permission_denied": EXIT_PERMISSION,
    "storage_full": EXIT_INTERNAL,
}

EventloomPath = Annotated[
    Path | None,
    typer.Option(
        "--eventloom-path",
        envvar="ZAXY_EVENTLOOM_PATH",
        help="Folder holding the session logs (default: the nearest .eventloom from here upwards, like git finds "
        ".git; else <workspace>/.eventloom).",
        show_default=False,
    ),
]
BackendOption = Annotated[
    str | None,
    typer.Option(
        "--backend",
        help="Where memory lives: 'jsonl' (embedded files, default) or postgresql://user:pass@host/db "
        "(default: $ZAXY_BACKEND).",
        show_default=False,
    ),
]
AsOf = Annotated[
    str | None,
    typer.Option(
        "--as-of",
        help="Read memory as it was then: an ISO-8601 instant or date (2026-03-12 means its end), 'now', "
        "'3 days ago', 'yesterday', 'last week', 'last Tuesday'.",
        show_default=False,
    ),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")]
RetrievalProfileOption = Annotated[
    str | None,
    typer.Option(
        "--retrieval-profile",
        help="Which 2.2 ranking features apply: plain (none), balanced (the measured default), full (all).",
    ),
]
CueOption = Annotated[
    list[str] | None,
    typer.Option(
        "--cue",
        help="Your context as key=value (repeatable): mission (or task), workspace (or repo), tool, phase. "
        "Memories recorded with the same cues rank higher under --retrieval-profile full.",
        show_default=False,
    ),
]
SessionId = Annotated[str, typer.Option("--session-id", "-s", help="Session (thread) id.")]

console = Console()
err_console = Console(stderr=True)


def parse_cues(values: list[str] | None) -> dict[str, str] | None:
    """``--cue key=value`` options -> ``{name: value}`` (``repo`` = ``workspace``, ``task`` = ``mission``); an
    unknown or repeated name is a structured error naming ``cues.<name>``."""
    if not values:
        return None
    cues: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition("=")
        name, text = name.strip(), text.strip()
        if not sep or not name or not text:
            raise InvalidRequestError(
                f"--cue {value!r} is not key=value",
                field="--cue",
                remediation="Write --cue repo=zaxy --cue tool=pytest (names: mission or task, workspace or repo, "
                "tool, phase).",
            )
        if name in cues:
            raise InvalidRequestError(
                f"--cue {name} is given twice", field=f"cues.{name}", remediation="Give each cue once."
            )
        cues[name] = text
    from zaxy_agents.retrieval.cues import checked_cues  # names checked before any memory is opened

    return checked_cues(cues)


def emit_json(value: Any) -> None:
    """Print one JSON document on stdout (pydantic models are dumped in JSON mode)."""
    sys.stdout.write(json.dumps(_plain(value), ensure_ascii=False, indent=2, sort_keys=False) + "\n")


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


@contextmanager
def handled(json_mode: bool) -> Iterator[None]:
    """Turn ZaxyErrors into a structured message and a stable exit code; never print a traceback.

    Anything else that escapes a command is a bug: it is reported as ``internal_error`` (exit 70) with the
    exception's type and message; ``ZAXY_DEBUG=1`` re-raises it with its traceback.
    """
    try:
        yield
    except (typer.Exit, typer.Abort, click.ClickException, KeyboardInterrupt):
        raise
    except Exception as exc:
        if isinstance(exc, ZaxyError):
            error = exc
        elif os.environ.get("ZAXY_DEBUG", "").strip() not in ("", "0"):
            raise
        elif isinstance(exc, OSError) and exc.errno in _OS_ERRORS:
            code, remediation = _OS_ERRORS[exc.errno]
            where = f" ({str(exc.filename)[:200]})" if exc.filename else ""
            error = ZaxyError(f"{exc.strerror}{where}", code=code, remediation=remediation)
        else:
            error = ZaxyError(
                f"{type(exc).__name__}: {str(exc)[:300]}",
                code="internal_error",
                remediation="This is a bug; rerun with ZAXY_DEBUG=1 for the traceback and report it.",
            )
        _report(error, json_mode)
        raise typer.Exit(EXIT_BY_CODE.get(error.code, EXIT_INTERNAL)) from None


_PATHS = "Check the paths you passed (--eventloom-path, files, folders) and run the command again."
_OS_ERRORS = {  # an environment problem a user can fix, not a bug
    errno.ENAMETOOLONG: ("invalid_request", _PATHS),
    errno.ENOTDIR: ("invalid_request", _PATHS),
    errno.EISDIR: ("invalid_request", _PATHS),
    errno.ELOOP: ("invalid_request", _PATHS),
    errno.ENOENT: ("not_found", _PATHS),
    errno.EACCES: ("permission_denied", "Use paths this user may read and write, or fix their permissions."),
    errno.EPERM: ("permission_denied", "Use paths this user may read and write, or fix their permissions."),
    errno.EROFS: ("permission_denied", "The file system is read-only: point Zaxy at a writable folder."),
    errno.ENOSPC: ("storage_full", "Free disk space where the memory lives, then run the command again."),
}


def _report(exc: ZaxyError, json_mode: bool) -> None:
    if json_mode:
        emit_json(exc.to_dict())
    else:
        field = f" (field: {exc.field})" if exc.field else ""
        err_console.print(f"[bold red]error[/] [red]{exc.code}[/]{field}: {exc.message}", markup=True, highlight=False)
        err_console.print(f"[dim]fix:[/] {exc.remediation}")


def open_fabric(
    eventloom_path: Path | None,
    *,
    reads: bool = False,
    sessions: list[str] | str | None = None,
    check_as_of: str | None = None,
    **overrides: Any,
) -> Any:
    """Open the MemoryFabric for a command (imported lazily to keep `zaxy --help` fast).

    ``reads``: the command only reads memory, so it never creates a folder or a database: without an Eventloom
    it fails with ``not_found``. ``sessions`` must already exist (``not_found`` names the first that does not,
    instead of silently reading, or creating, an empty one). ``check_as_of`` is validated as ``--as-of`` first.
    """
    from zaxy_agents.config import ZaxySettings
    from zaxy_agents.fabric import MemoryFabric

    if check_as_of is not None:
        from zaxy_agents.instants import parse_instant

        parse_instant(check_as_of, field="--as-of")
    settings = ZaxySettings.resolve(eventloom_path, **_settings_overrides(overrides))
    from zaxy_agents.fabric.location import memory_in_folder

    if memory_in_folder(settings):
        settings = ZaxySettings.resolve(locate_eventloom(eventloom_path, reads=reads), **_settings_overrides(overrides))
    fabric = MemoryFabric.from_path(settings.eventloom_path, **overrides)
    try:
        for name in [sessions] if isinstance(sessions, str) else sessions or []:
            if not fabric.log.has_session(name):
                raise NotFoundError(
                    f"no such session {name!r} in {fabric.location}",
                    field="--session-id",
                    remediation="List the sessions with `zaxy sessions`; a session starts with its first append "
                    "(`zaxy memory append TEXT -s ID`).",
                )
    except BaseException:
        fabric.close()
        raise
    return fabric


def _settings_overrides(overrides: dict[str, Any]) -> dict[str, Any]:
    return {key: overrides[key] for key in ("backend", "durability", "max_payload_bytes") if key in overrides}


def locate_eventloom(eventloom_path: Path | None, *, reads: bool) -> Path:
    """The Eventloom folder a command uses, checked before anything opens it.

    Explicit (``--eventloom-path`` / ``ZAXY_EVENTLOOM_PATH``): used as given (relative to the current folder).
    Otherwise found the way git finds ``.git``: the nearest ``.eventloom`` from the current folder upwards,
    stopping at the workspace root (a folder holding ``.git`` or ``.zaxy``, as the IDE hooks do), else
    ``<workspace>/.eventloom``; a writing command says on stderr that it is creating a new one there.
    A file, a missing parent or a folder without permission is a structured error, never a traceback.
    """
    import os

    explicit = eventloom_path is not None
    if explicit:
        path = Path(os.path.expanduser(os.fspath(eventloom_path)))
        field = "--eventloom-path"
    else:
        from zaxy_agents.capture.workspace import resolve_workspace

        path = Path(resolve_workspace(os.getcwd()).eventloom_path)
        field = "eventloom_path"
    try:
        return _checked_location(path, field, explicit, reads)
    except OSError as exc:  # a name too long, a loop of symlinks...: the path cannot be used at all
        raise InvalidRequestError(
            f"the Eventloom path cannot be used: {exc.strerror or exc}",
            field=field,
            remediation="Point --eventloom-path / ZAXY_EVENTLOOM_PATH at an ordinary folder path.",
        ) from None


def _checked_location(path: Path, field: str, explicit: bool, reads: bool) -> Path:
    import os

    from zaxy_agents.config import not_a_folder, permission_denied

    if path.exists() and not path.is_dir():
        raise not_a_folder(str(path), field)
    if path.is_dir():
        if not os.access(path, os.R_OK | os.X_OK if reads else os.R_OK | os.W_OK | os.X_OK):
            raise permission_denied(str(path), "read" if reads else "write to", field)
        if reads and not _holds_memory(path):
            raise _no_memory(path, explicit)
        return path
    if reads:
        raise _no_memory(path, explicit)
    parent = path.absolute().parent
    if not parent.is_dir():
        raise InvalidRequestError(
            f"cannot create the Eventloom folder {path}: its parent {parent} "
            + ("is a file" if parent.exists() else "does not exist"),
            field=field,
            remediation="Create the parent folder first, or point --eventloom-path at a folder inside an existing one.",
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise permission_denied(str(path), "create", field)
    where = "" if explicit else f" (no .eventloom from {os.getcwd()} up to the workspace root)"
    err_console.print(
        f"zaxy: new memory: no Eventloom yet; the first write creates it at {path}{where}",
        markup=False,
        highlight=False,
    )
    return path


def _holds_memory(path: Path) -> bool:
    """Whether a folder is an Eventloom with something in it (session logs or derived state)."""
    return (path / ".zaxy").is_dir() or any(path.glob("*.jsonl"))


def _no_memory(path: Path, explicit: bool) -> NotFoundError:
    import os

    searched = "" if explicit else f" (searched from {os.getcwd()} up to the workspace root)"
    return NotFoundError(
        f"no memory at {path}{searched}: nothing has been remembered there yet",
        field="--eventloom-path" if explicit else "eventloom_path",
        remediation="Run this where the memory lives (or pass --eventloom-path DIR); `zaxy memory append` or "
        "`zaxy hooks claude-code` start one. Read-only commands never create a folder or a database.",
    )


def parse_json_option(raw: str, *, field: str) -> Any:
    """Parse a JSON-valued option into a value, or raise a structured error naming the option."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise InvalidRequestError(
            f"{field} nests too deeply to be read",
            field=field,
            remediation="Flatten the value: at most 100 levels of objects and arrays are accepted.",
        ) from None
    except json.JSONDecodeError as exc:
        raise InvalidRequestError(
            f"{field} is not valid JSON: {exc.msg} at position {exc.pos}",
            field=field,
            remediation=f'Quote the JSON for your shell, e.g. {field} \'{{"text": "hello"}}\'.',
        ) from exc
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise InvalidRequestError(
            f"{field} holds a value that cannot be read: {exc}",
            field=field,
            remediation="Integers must have an absolute value below 2**128; store bigger numbers as strings.",
        ) from None
