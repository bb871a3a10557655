"""Console-script entry point.

Kept import-light: commands on a hot path (hook sinks run on every IDE event) are dispatched before Typer,
Rich or pydantic are imported.
"""

from __future__ import annotations

import sys

# Commands on an agent's start-up path run in a Typer app holding only that command: `zaxy serve` is what every
# MCP client spawns, `zaxy memory checkout` what a script runs per question. Building the Click objects of every
# command (the full app) costs them ~0.05 s of CPU each time. Same options, same errors, same exit codes
# (tests/cli/test_startup_imports.py); `--help` still goes through the full app.
SINGLE_COMMANDS = {
    ("serve",): ("zaxy_agents.cli.serve_command", "serve_command"),
    ("memory", "checkout"): ("zaxy_agents.cli.checkout_commands", "checkout_command"),
}


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "hook-event" and "--help" not in args and "-h" not in args:
        from zaxy_agents.capture.hook_sink import run

        sys.exit(run(args[1:]))
    if args in (["--version"], ["-V"]):  # answered without importing Typer
        from zaxy_agents import __version__

        sys.stdout.write(f"zaxy {__version__}\n")
        sys.exit(0)
    try:
        single = _single_command(args)
        if single is not None:
            from zaxy_agents.cli import startup_collector

            try:
                single()
            finally:
                startup_collector.resume()
            return
        from zaxy_agents.cli.app import app

        app(args=args, prog_name="zaxy")
    except KeyboardInterrupt:  # Ctrl-C anywhere: say so instead of exiting silently (commands explain their state)
        sys.stderr.write("zaxy: interrupted\n")
        sys.exit(130)


def _single_command(args: list[str]) -> object | None:
    """A callable running ``args`` in a one-command Typer app, when ``args`` invoke one of SINGLE_COMMANDS."""
    for words, (module_name, function_name) in SINGLE_COMMANDS.items():
        if tuple(args[: len(words)]) != words or "--help" in args:
            continue
        from zaxy_agents.cli import startup_collector

        startup_collector.pause()  # start-up's objects live as long as the process (see the module)
        import importlib

        import typer

        function = getattr(importlib.import_module(module_name), function_name)
        single = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
        single.command(words[-1])(function)
        prog_name = " ".join(("zaxy", *words))
        return lambda: single(args=args[len(words) :], prog_name=prog_name)
    return None


if __name__ == "__main__":
    main()
