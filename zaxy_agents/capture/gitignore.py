"""Keep a workspace's memory out of its git history: ``.eventloom/`` goes into the workspace's ``.gitignore``.

``zaxy hooks``, ``zaxy ide-config --install`` and ``zaxy init`` set a workspace up to remember things; the
memory can hold prompts, command output and anything an agent saw, so they also make sure git ignores it (the
Eventloom folder ignores itself too, from its own ``.gitignore``, once it exists). An entry already there, in any
of its usual spellings, is left alone; a memory folder outside the workspace needs no entry.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

COMMENT = "# Zaxy memory (session logs can hold private data)"


def ignore_eventloom(workspace_root: str, eventloom_path: str) -> dict[str, Any]:
    """Add the Eventloom folder to ``<workspace_root>/.gitignore``; returns ``{"path", "entry", "action"}`` with
    action ``added``, ``present`` or ``outside`` (the folder is not inside the workspace: nothing to ignore)."""
    root = os.path.realpath(workspace_root)
    target = os.path.realpath(eventloom_path)
    path = os.path.join(root, ".gitignore")
    relative = os.path.relpath(target, root)
    if relative == "." or relative.startswith(".."):
        return {"path": path, "entry": None, "action": "outside"}
    entry = "/" + relative.replace(os.sep, "/") + "/"
    try:
        with open(path, encoding="utf-8") as handle:
            existing = handle.read()
    except FileNotFoundError:
        existing = ""
    if _already_ignored(existing, relative.replace(os.sep, "/")):
        return {"path": path, "entry": entry, "action": "present"}
    prefix = "" if not existing or existing.endswith("\n") else "\n"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(f"{prefix}{COMMENT}\n{entry}\n")
    return {"path": path, "entry": entry, "action": "added"}


def _already_ignored(text: str, relative: str) -> bool:
    name = relative.rsplit("/", 1)[-1]
    spellings = {relative, f"{relative}/", f"/{relative}", f"/{relative}/", f"**/{relative}", f"**/{relative}/"}
    if "/" not in relative:
        spellings |= {name, f"{name}/"}
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and stripped in spellings:
            return True
    return False
