"""The `zaxy memory ...` command group; feature modules register their subcommands on it."""

from __future__ import annotations

import typer

memory_app = typer.Typer(
    name="memory", help="Query, inspect and maintain memory (checkout, status, feedback, ...).", no_args_is_help=True
)
