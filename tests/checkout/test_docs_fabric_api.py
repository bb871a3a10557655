"""docs/checkout.md's "Fabric API" table: a row that spells out a method's parameters (no `...`) names exactly
the method's parameters, so a keyword written on the page works and none is left out."""

from __future__ import annotations

import inspect
import re

import pytest

from tests.conftest import REPO_ROOT
from zaxy_agents.fabric import MemoryFabric

TEXT = (REPO_ROOT / "docs" / "checkout.md").read_text().split("## Fabric API", 1)[1].split("\n## ", 1)[0]
ROWS = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)\(([^)]*)\)`", TEXT, re.MULTILINE)}


@pytest.mark.parametrize("name", sorted(name for name, args in ROWS.items() if "..." not in args))
def test_documented_parameters_are_the_methods(name: str) -> None:
    documented = {arg.strip().lstrip("*").split("=")[0] for arg in ROWS[name].split(",")} - {"", "*"}
    actual = set(inspect.signature(getattr(MemoryFabric, name)).parameters) - {"self"}
    assert documented == actual, f"{name}: docs say {sorted(documented)}, code has {sorted(actual)}"
