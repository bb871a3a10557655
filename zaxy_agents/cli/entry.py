"""Console-script entry point.

Kept import-light: commands on a hot path (hook sinks run on every IDE event) are dispatched before Typer,
Rich or pydantic are imported.
"""

from __future__ import annotations

import sys


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
        from zaxy_agents.cli.app import app

        app(args=args, prog_name="zaxy")
    except KeyboardInterrupt:  # Ctrl-C anywhere: say so instead of exiting silently (commands explain their state)
        sys.stderr.write("zaxy: interrupted\n")
        sys.exit(130)


if __name__ == "__main__":
    main()
