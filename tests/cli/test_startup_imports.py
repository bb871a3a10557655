"""Start-up stays light: each CLI command imports only what it needs (issue 24, start-up).

Checked on the real CLI in a subprocess through ``PYTHONPROFILEIMPORTTIME`` (``-X importtime``), which names every
module the process imported, so no timing is asserted: a heavy module showing up where a command does not need it
fails the test, whatever the machine's load.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_zaxy

# Never needed to print help or the version, nor to answer a checkout from the CLI.
SERVER_AND_FRAMEWORKS = ("kuzu", "pyarrow", "mcp", "langgraph", "langchain_core", "httpx", "starlette", "uvicorn")
# What help and `--version` must not load either: the fabric and the numeric / tokenizer stacks. (Typer itself
# loads pydantic to build a command group's parameters, so `zaxy memory --help` may; `zaxy --help` does not.)
# (`zaxy_agents.fabric` loads its core through importlib, which -X importtime does not log: a service module stands
# for it.)
MEMORY_STACK = ("numpy", "tiktoken", "zaxy_agents.fabric.checkout_ops", "zaxy_agents.projection.projector")


def _imported(*args: str) -> set[str]:
    result = run_zaxy(*args, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    modules = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                modules.add(name)
    assert "zaxy_agents" in modules, "the import log was not produced: the check would prove nothing"
    return modules


def _heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(name for name in names if name in modules)


def test_help_and_version_load_no_memory_stack() -> None:
    for args, also in ((("--help",), ("pydantic",)), (("--version",), ("pydantic",)), (("memory", "--help"), ())):
        modules = _imported(*args)
        assert _heavy(modules, SERVER_AND_FRAMEWORKS + MEMORY_STACK + also) == [], args


def test_cli_checkout_loads_neither_the_graph_nor_a_server(tmp_path: Path) -> None:
    root = ["--eventloom-path", str(tmp_path / "loom"), "-s", "proj"]
    appended = run_zaxy("memory", "append", "the API runs on port 8080", "--key", "api.port", *root)
    assert appended.returncode == 0, appended.stderr
    modules = _imported("memory", "checkout", "which port does the API use?", "--json", *root)
    # the control: a checkout really ran (the fabric and the token counter were loaded) ...
    assert {"zaxy_agents.fabric.checkout_ops", "tiktoken"} <= modules
    # ... without the embedded graph, the MCP SDK or an agent framework
    assert _heavy(modules, SERVER_AND_FRAMEWORKS) == []
