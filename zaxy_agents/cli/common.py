"""Shared CLI plumbing: common options, opening the fabric, JSON vs. human output, exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from zaxy_agents.errors import ZaxyError

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_INVALID = 2
EXIT_NOT_FOUND = 3
EXIT_UNAVAILABLE = 4
EXIT_INTEGRITY = 5
EXIT_INTERNAL = 70

EXIT_BY_CODE = {
    "invalid_request": EXIT_INVALID,
    "not_found": EXIT_NOT_FOUND,
    "locked": EXIT_UNAVAILABLE,
    "unavailable": EXIT_UNAVAILABLE,
    "schema_mismatch": EXIT_UNAVAILABLE,
    "unauthorized": EXIT_INVALID,
    "conflict": EXIT_CHECK_FAILED,
    "integrity_error": EXIT_INTEGRITY,
    "storage_full": EXIT_INTERNAL,
}

EventloomPath = Annotated[
    Path | None,
    typer.Option(
        "--eventloom-path",
        envvar="ZAXY_EVENTLOOM_PATH",
        help="Folder holding the session logs (default: ./.eventloom).",
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
JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")]
SessionId = Annotated[str, typer.Option("--session-id", "-s", help="Session (thread) id.")]

console = Console()
err_console = Console(stderr=True)


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
    """Turn ZaxyErrors into a structured message and a stable exit code; never print a traceback for them."""
    try:
        yield
    except ZaxyError as exc:
        if json_mode:
            emit_json(exc.to_dict())
        else:
            field = f" (field: {exc.field})" if exc.field else ""
            err_console.print(f"[bold red]error[/] [red]{exc.code}[/]{field}: {exc.message}")
            err_console.print(f"[dim]fix:[/] {exc.remediation}")
        raise typer.Exit(EXIT_BY_CODE.get(exc.code, EXIT_INTERNAL)) from None


def open_fabric(eventloom_path: Path | None, **overrides: Any) -> Any:
    """Open the MemoryFabric for a command (imported lazily to keep `zaxy --help` fast)."""
    from zaxy_agents.fabric import MemoryFabric

    return MemoryFabric.from_path(eventloom_path, **overrides)


def parse_json_option(raw: str, *, field: str) -> Any:
    """Parse a JSON-valued option into a value, or raise a structured error naming the option."""
    from zaxy_agents.errors import InvalidRequestError

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
