"""The embedded graph store reads its column layout only through ``kuzu_layout``, at each use.

Why: tests open a graph file as an earlier release wrote it by patching ``kuzu_layout``'s names (its migrations,
the columns it stored) and the module-level helpers of ``kuzu_database``. A store module that bound such a name at
import (``from .kuzu_layout import MIGRATIONS``) would keep the current layout and the test would silently check
nothing; a test that patched a name no module reads would check nothing too. Both are caught here, on the source.
"""

from __future__ import annotations

import ast
from pathlib import Path

import zaxy_agents

FILES = Path(zaxy_agents.__file__).parent / "storage" / "files"
TESTS = Path(__file__).resolve().parents[1]
STORE_MODULES = ("kuzu_store", "kuzu_database", "kuzu_migrations", "kuzu_rows", "kuzu_writes", "kuzu_dump")
PATCHED_MODULES = ("kuzu_layout", "kuzu_database")


def _tree(module: str) -> ast.Module:
    path = FILES / f"{module}.py"
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _names_patched_in_tests(module: str) -> set[str]:
    """``NAME`` of every ``monkeypatch.setattr(<module>, "NAME", ...)`` (or ``.setattr`` of a patch context)."""
    found: set[str] = set()
    for path in TESTS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "setattr"
                and len(node.args) >= 2
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == module
                and isinstance(node.args[1], ast.Constant)
            ):
                found.add(node.args[1].value)
    return found


def _names_read(module: str) -> set[str]:
    """Names ``module`` reads at run time: bare names inside its functions, and ``<alias>.NAME`` in the store
    modules that import it as a module."""
    read = {
        node.id
        for function in ast.walk(_tree(module))
        if isinstance(function, ast.FunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    for other in STORE_MODULES:
        tree = _tree(other)
        aliases = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module is None
            for alias in node.names
            if alias.name == module
        }
        read |= {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
        }
    return read


def test_store_modules_read_the_layout_as_a_module_never_by_bound_names() -> None:
    bound = []
    for module in STORE_MODULES:
        for node in ast.walk(_tree(module)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").rsplit(".", 1)[-1] in {
                "kuzu_schema",
                "kuzu_layout",
            }:
                bound.append(f"{module}: from {node.module} import {', '.join(a.name for a in node.names)}")
    assert bound == []


def test_every_name_the_tests_patch_is_read_where_it_is_patched() -> None:
    for module in PATCHED_MODULES:
        patched = _names_patched_in_tests(module)
        assert patched, f"no test patches {module} (the check below would pass vacuously)"
        unread = sorted(patched - _names_read(module))
        assert unread == [], f"tests patch {module}.{unread} but no store module reads it there"
