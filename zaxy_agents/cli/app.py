"""The Typer application: registers each command group from its own module."""

from __future__ import annotations

import typer

from . import backend_commands, demo, eventloom_commands, log_commands

app = typer.Typer(
    name="zaxy",
    help="Zaxy Agents: cited, replayable memory for AI agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

log_commands.register(app)
demo.register(app)
backend_commands.register(app)
eventloom_commands.register(app)
