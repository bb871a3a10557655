"""Labelled functions: how Zaxy builds registries without import side effects.

A decorator such as ``@register("task.created")`` (extractors) or ``@tool("memory_query", ...)`` (MCP) only puts
a label on the function it decorates. A table is then built explicitly from a list of modules (written out in one
place: ``zaxy_agents.fabric.features``, ``zaxy_agents.mcp.tools``), so importing a module never changes what
any table holds, and what a process can do is readable in one list.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import FunctionType, ModuleType
from typing import Any


def put_label(function: Any, key: str, value: Any) -> None:
    """Attach ``value`` under ``key`` to ``function`` (the decorator's only effect)."""
    vars(function)[key] = value


def label_of(function: Any, key: str) -> Any:
    return vars(function)[key]


def labelled(modules: Iterable[ModuleType], key: str) -> list[Any]:
    """The functions defined in ``modules`` (not merely imported into them) that carry ``key``, in order."""
    found = []
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, FunctionType) and key in vars(value) and value.__module__ == module.__name__:
                found.append(value)
    return found
