"""The Typer application: registers each command group from its own module."""

from __future__ import annotations

import typer

from . import (
    backend_commands,
    benchmark_commands,
    capture_commands,
    causal_commands,
    checkout_commands,
    consolidation_commands,
    demo,
    doctor_command,
    eventloom_commands,
    hooks_commands,
    ide_config_commands,
    init_commands,
    integrity_commands,
    lane_commands,
    log_commands,
    projection_commands,
    ranking_lane_commands,
    retrieval_commands,
    serve_command,
    ui_command,
)
from .memory_app import memory_app

app = typer.Typer(
    name="zaxy",
    help="Zaxy Agents: cited, replayable memory for AI agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from zaxy_agents import __version__

        typer.echo(f"zaxy {__version__}")
        raise typer.Exit(0)


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", "-V", help="Print the version and exit.", callback=_version, is_eager=True
    ),
) -> None:
    """Zaxy Agents: cited, replayable memory for AI agents."""


log_commands.register(app)
demo.register(app)
projection_commands.register(app, memory_app)
retrieval_commands.register(memory_app)
causal_commands.register(memory_app)
consolidation_commands.register(memory_app)
lane_commands.register(benchmark_commands.benchmark_app)
ranking_lane_commands.register(benchmark_commands.benchmark_app)
benchmark_commands.register(app)
serve_command.register(app)
checkout_commands.register(memory_app)
app.add_typer(memory_app)
hooks_commands.register(app)
capture_commands.register(app)
ide_config_commands.register(app)
backend_commands.register(app)
eventloom_commands.register(app)
init_commands.register(app)
doctor_command.register(app)
integrity_commands.register(app, memory_app)
ui_command.register(app)
