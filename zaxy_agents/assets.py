"""Access to non-Python assets (integrations/, hooks/, templates/, examples/) in a wheel or a source checkout.

In a built wheel they live under ``zaxy_agents/_assets/<name>``; in an editable/source checkout they are the
top-level folders of the repository. Callers never care which.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

ASSET_ROOTS = ("integrations", "hooks", "templates", "examples")


def asset(root: str, *parts: str) -> Traversable:
    """The asset ``<root>/<parts...>``; ``root`` is one of :data:`ASSET_ROOTS`."""
    if root not in ASSET_ROOTS:
        raise ValueError(f"unknown asset root {root!r}; expected one of {ASSET_ROOTS}")
    packaged = resources.files("zaxy_agents") / "_assets" / root
    base: Traversable = packaged if packaged.is_dir() else Path(__file__).resolve().parents[1] / root
    for part in parts:
        base = base / part
    return base


def read_asset_text(root: str, *parts: str) -> str:
    return asset(root, *parts).read_text(encoding="utf-8")
