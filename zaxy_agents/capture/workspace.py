"""Which workspace an IDE event belongs to, which memory session it goes to, and whether capture is on.

Isolation is the point: one memory session per workspace (``<client>.<folder-name>-<8 hex of the resolved
path>``), so two projects, or two git worktrees of one project, never share memory unless a workspace config
names a shared session on purpose. The workspace root is the nearest folder, from the starting directory
upwards, holding ``.eventloom/``, ``.zaxy/`` or ``.git`` (a git worktree has its own ``.git`` file, so each
worktree is its own workspace); without any marker it is the starting directory itself.

Opt-out, honoured by every capture path: ``ZAXY_HOOKS_DISABLED=1`` in the environment, or
``{"enabled": false}`` in ``<workspace>/.zaxy/hooks.json`` (``zaxy hooks disable``).

Stdlib only, no pathlib: this runs inside ``zaxy hook-event`` on every IDE event.
"""

from __future__ import annotations

import json
import os
import re

from zaxy_agents.eventloom.canonical import sha256

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

ENV_HOOKS_DISABLED = "ZAXY_HOOKS_DISABLED"
ENV_HOOKS_SESSION = "ZAXY_HOOKS_SESSION"
ENV_EVENTLOOM_PATH = "ZAXY_EVENTLOOM_PATH"
WORKSPACE_MARKERS = (".eventloom", ".zaxy", ".git")
WORKSPACE_CONFIG_DIR = ".zaxy"
WORKSPACE_CONFIG_FILE = "hooks.json"
CLIENTS = ("claude-code", "codex")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_TRUTHY = ("1", "true", "yes", "on")


def find_workspace_root(start: str) -> str:
    """The nearest ancestor of ``start`` (inclusive) holding a workspace marker, else ``start`` (absolute)."""
    current = os.path.realpath(start or os.getcwd())
    probe = current
    while True:
        for marker in WORKSPACE_MARKERS:
            if os.path.exists(os.path.join(probe, marker)):
                return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return current
        probe = parent


def workspace_slug(root: str) -> str:
    """``<folder-name>-<first 8 hex of sha256(resolved path)>``: readable and unique per checkout."""
    resolved = os.path.realpath(root)
    name = _UNSAFE.sub("-", os.path.basename(resolved) or "root").strip("-.") or "root"
    digest = sha256(resolved.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{name[:48]}-{digest}"


def default_session_id(client: str, root: str) -> str:
    """The memory session for ``client`` in the workspace at ``root``, e.g. ``claude-code.shop-1a2b3c4d``."""
    return f"{client}.{workspace_slug(root)}"


def load_workspace_config(root: str) -> dict[str, Any]:
    """``<root>/.zaxy/hooks.json`` as a dict (``{}`` when absent or unreadable: capture must never fail here)."""
    path = os.path.join(root, WORKSPACE_CONFIG_DIR, WORKSPACE_CONFIG_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def workspace_config_path(root: str) -> str:
    return os.path.join(root, WORKSPACE_CONFIG_DIR, WORKSPACE_CONFIG_FILE)


class Workspace:
    """Resolved capture settings for one workspace (plain class: no dataclasses on the hook path)."""

    __slots__ = ("config", "disabled_by", "eventloom_path", "root")

    def __init__(self, root: str, eventloom_path: str, config: dict[str, Any], disabled_by: str | None) -> None:
        self.root = root
        self.eventloom_path = eventloom_path
        self.config = config
        self.disabled_by = disabled_by  # "env" | "workspace-config" | None

    @property
    def enabled(self) -> bool:
        return self.disabled_by is None

    def session_for(self, client: str) -> str:
        """The memory session: ``ZAXY_HOOKS_SESSION``, else the config's ``session``, else per workspace."""
        override = os.environ.get(ENV_HOOKS_SESSION) or self.config.get("session")
        if isinstance(override, str) and override:
            return override
        return default_session_id(client, self.root)

    def to_dict(self, client: str | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {
            "root": self.root,
            "eventloom_path": self.eventloom_path,
            "enabled": self.enabled,
            "disabled_by": self.disabled_by,
            "config_path": workspace_config_path(self.root),
        }
        if client is not None:
            data["session"] = self.session_for(client)
        return data


def resolve_workspace(start: str | None = None, eventloom_path: str | None = None) -> Workspace:
    """Workspace root, Eventloom folder and opt-out state for an event whose working directory is ``start``.

    Eventloom folder precedence: explicit argument, ``ZAXY_EVENTLOOM_PATH``, the workspace config's
    ``eventloom_path`` (relative to the root), then ``<root>/.eventloom``.
    """
    root = find_workspace_root(start or os.getcwd())
    config = load_workspace_config(root)
    if os.environ.get(ENV_HOOKS_DISABLED, "").strip().lower() in _TRUTHY:
        disabled_by: str | None = "env"
    elif config.get("enabled") is False:
        disabled_by = "workspace-config"
    else:
        disabled_by = None
    configured = config.get("eventloom_path") if isinstance(config.get("eventloom_path"), str) else None
    path = eventloom_path or os.environ.get(ENV_EVENTLOOM_PATH) or configured or ".eventloom"
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        # Relative paths from the environment or config are relative to the workspace, not to wherever the
        # client happened to start the hook process.
        path = os.path.join(root, path)
    return Workspace(root, os.path.normpath(path), config, disabled_by)
