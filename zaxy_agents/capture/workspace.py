"""Which workspace an IDE event belongs to, which memory session it goes to, and whether capture is on.

Isolation is the point: one memory session per workspace (``<client>.<folder-name>-<8 hex of the resolved
path>``), so two projects, or two git worktrees of one project, never share memory unless a workspace config
names a shared session on purpose. The workspace root is the nearest folder, from the starting directory
upwards, holding ``.eventloom/``, ``.zaxy/`` or ``.git`` (a git worktree has its own ``.git`` file, so each
worktree is its own workspace); without any marker it is the starting directory itself.

Opt-out, honoured by every capture path: ``ZAXY_HOOKS_DISABLED=1`` in the environment, or
``{"enabled": false}`` in ``<workspace>/.zaxy/hooks.json`` (``zaxy hooks disable``).

One workspace, one memory: each client writes its own session (``claude-code.shop-1a2b3c4d``,
``codex.shop-1a2b3c4d``, ``cursor.shop-1a2b3c4d``), and by default the sessions of one workspace are
discovered (:meth:`Workspace.shared_sessions`) and recalled together, every item citing the session it comes
from. Opt out with ``ZAXY_WORKSPACE_SHARING=0`` or ``{"workspace_sharing": false}`` in the workspace config
(``zaxy hooks sharing off``).

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
ENV_WORKSPACE_SHARING = "ZAXY_WORKSPACE_SHARING"
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

    # Session names a workspace's clients use: ``<client>.<slug>`` (no dot in the client part).
    _CLIENT_PART = re.compile(r"^[a-z0-9][a-z0-9-]*$")

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

    @property
    def session_forced(self) -> bool:
        """True when one session is named for every client (env or config): they share it already."""
        override = os.environ.get(ENV_HOOKS_SESSION) or self.config.get("session")
        return isinstance(override, str) and bool(override)

    @property
    def sharing(self) -> bool:
        """Whether the sessions of this workspace's clients are recalled together (default: yes)."""
        raw = os.environ.get(ENV_WORKSPACE_SHARING, "").strip().lower()
        if raw:
            return raw in _TRUTHY
        return self.config.get("workspace_sharing") is not False

    @property
    def sharing_disabled_by(self) -> str | None:
        if os.environ.get(ENV_WORKSPACE_SHARING, "").strip():
            return None if self.sharing else "env"
        return "workspace-config" if self.config.get("workspace_sharing") is False else None

    def is_workspace_session(self, session: str) -> bool:
        """``<client>.<this workspace's slug>``: a session some client of this workspace writes."""
        client, dot, rest = session.partition(".")
        return bool(dot) and rest == workspace_slug(self.root) and bool(self._CLIENT_PART.match(client))

    def shared_sessions(self, session: str, names: list[str]) -> list[str]:
        """The other sessions of this workspace among ``names`` (every session of the Eventloom), sorted.

        Empty when sharing is off, or when a forced session already holds every client's memory.
        """
        if not self.sharing or self.session_forced:
            return []
        return sorted(name for name in names if name != session and self.is_workspace_session(name))

    def to_dict(self, client: str | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {
            "root": self.root,
            "eventloom_path": self.eventloom_path,
            "enabled": self.enabled,
            "disabled_by": self.disabled_by,
            "config_path": workspace_config_path(self.root),
            "workspace_sharing": self.sharing,
            "sharing_disabled_by": self.sharing_disabled_by,
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
