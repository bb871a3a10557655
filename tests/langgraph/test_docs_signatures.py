"""docs/langgraph.md states the signatures of the memory nodes, `memory_tools` and the middleware's options:
every parameter and default it writes down must be the code's, and no keyword of the code may go unmentioned."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyMemoryMiddleware, memory_tools, nodes

PAGE = (REPO_ROOT / "docs" / "langgraph.md").read_text()
SCOPING = {"scope", "session", "session_prefix"}  # "all take `scope`, `session` and `session_prefix`"
FUNCTIONS = {
    "memory_tools": memory_tools,
    "checkout_node": nodes.checkout_node,
    "capture_node": nodes.capture_node,
    "compaction_node": nodes.compaction_node,
    "feedback_node": nodes.feedback_node,
}


def _documented(name: str) -> dict[str, object]:
    """Parameters of the first ``name(memory, ...)`` written on the page: name -> default (``...`` for none)."""
    match = re.search(rf"`{name}\((memory[^`]*)\)`", PAGE)
    assert match, f"docs/langgraph.md does not state {name}(...)"
    call = ast.parse(f"f({' '.join(match.group(1).split())})", mode="eval").body
    params: dict[str, object] = {arg.id: ... for arg in call.args[1:]}  # type: ignore[attr-defined]
    params |= {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}  # type: ignore[attr-defined]
    return params


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_documented_signature_is_the_code(name: str) -> None:
    documented = _documented(name)
    actual = {n: p.default for n, p in inspect.signature(FUNCTIONS[name]).parameters.items() if n != "fabric"}
    for param, default in documented.items():
        assert param in actual, f"{name}: documented {param} does not exist"
        if default is not ...:
            assert actual[param] == default, f"{name}: {param} defaults to {actual[param]!r}, docs say {default!r}"
    undocumented = set(actual) - set(documented) - SCOPING
    assert not undocumented, f"{name}: docs/langgraph.md does not mention {sorted(undocumented)}"


def test_middleware_options_are_the_code() -> None:
    section = PAGE.split("Options: `checkout_tokens", 1)[1].split("work.\n", 1)[0]
    options = re.findall(r"`(\w+)(?:=([^`]+))?`", "`checkout_tokens" + section)
    actual = {n: p.default for n, p in inspect.signature(ZaxyMemoryMiddleware.__init__).parameters.items()}
    named = {}
    for option, default in options:
        if option in actual and option not in named:
            named[option] = default
            if default:
                assert actual[option] == ast.literal_eval(default), f"{option}: docs say {default}"
    assert set(actual) - {"self", "fabric"} == set(named), sorted(set(actual) - set(named))


def test_memory_tool_table_names_every_argument(tmp_path: Path) -> None:
    """The memory tools table lists each default tool's arguments: the names in its second column are exactly the
    fields of the tool's argument model."""
    table = PAGE.split("### The memory tools", 1)[1]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| (.*?) \| ", table, re.MULTILINE)}
    with MemoryFabric.from_path(tmp_path / "eventloom") as memory:
        for tool in memory_tools(memory):
            arguments = re.sub(r"\([^)]*\)", "", rows[tool.name])  # drop the notes: (64-8000, ...), (`used`, ...)
            documented = set(re.findall(r"`(\w+)`", arguments))
            assert documented == set(tool.args_schema.model_fields), (tool.name, sorted(documented))
