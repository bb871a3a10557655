"""Install, inspect and remove Zaxy's hooks in Claude Code and Codex settings files.

Merge rules: foreign hooks and every other setting are preserved byte-for-byte in meaning (JSON is re-written
with two-space indentation); Zaxy's entries are recognised by their command (``... hook-event ...`` of a
``zaxy`` executable). Commands are as portable as their file: absolute in machine files (``local``, ``user``),
workspace-relative or found on PATH in team-shared ones (``project``), see :func:`hook_command`; an existing
Zaxy entry that differs from the manifest is replaced only with ``force``, otherwise nothing is written and a
conflict names the events. Manifests live in ``hooks/<client>.json``.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from zaxy_agents.assets import read_asset_text
from zaxy_agents.errors import ConflictError, InvalidRequestError

from .config_files import (
    ROOT_SHELL,
    atomic_write_text,
    dump_json,
    load_json_object,
    portable_zaxy,
    shell_command,
    workspace_relative,
)

SCOPES = {
    "claude-code": ("local", "project", "user"),
    "codex": ("project", "user"),
}
DEFAULT_SCOPE = {"claude-code": "local", "codex": "project"}


def settings_path(client: str, scope: str, workspace_root: str) -> Path:
    """The settings file a scope writes to."""
    root = Path(workspace_root)
    if client == "claude-code":
        config_dir = Path(os.path.expanduser(os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude"))
        return {
            "local": root / ".claude" / "settings.local.json",
            "project": root / ".claude" / "settings.json",
            "user": config_dir / "settings.json",
        }[scope]
    codex_home = Path(os.path.expanduser(os.environ.get("CODEX_HOME") or "~/.codex"))
    return {"project": root / ".codex" / "hooks.json", "user": codex_home / "hooks.json"}[scope]


def check_scope(client: str, scope: str) -> None:
    if scope not in SCOPES[client]:
        raise InvalidRequestError(
            f"unknown scope {scope!r} for {client}",
            field="--scope",
            remediation=f"Use one of: {', '.join(SCOPES[client])}.",
        )


def is_zaxy_handler(handler: object) -> bool:
    """True for a hook handler that runs ``zaxy hook-event`` (any install location of zaxy)."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    command = handler["command"]
    return " hook-event " in f" {command} " and ("zaxy" in command)


SHARED_SCOPE = "project"  # a file in the repository, shared with the team
# Where a shared hook command finds the workspace root: Claude Code gives hooks $CLAUDE_PROJECT_DIR; Codex runs
# them through a shell in the session's directory, so the git top level (else that directory) is used.
ROOT_IN_HOOK = {"claude-code": '"$CLAUDE_PROJECT_DIR"', "codex": ROOT_SHELL}


def hook_command(client: str, scope: str, workspace_root: str, argv: list[str] | None = None) -> str:
    """The zaxy command of a hook: absolute in a machine file (local/user scope); in a shared file relative to
    the workspace root when zaxy lives inside the workspace, else ``zaxy`` found on PATH."""
    command = portable_zaxy(workspace_root, shared=scope == SHARED_SCOPE, argv=argv)
    if command.relative is None:
        return shell_command(command.argv)
    return f"{ROOT_IN_HOOK[client]}/{shell_command([command.relative])} {shell_command(command.argv[1:])}".rstrip()


def hook_eventloom_path(scope: str, workspace_root: str, eventloom_path: str) -> str:
    """The ``--eventloom-path`` baked into hooks: relative to the workspace when inside it (the sink resolves a
    relative folder against the workspace root); a folder elsewhere only in a local-scope (machine) file."""
    relative = workspace_relative(eventloom_path, workspace_root)
    if relative is not None:
        return relative
    if scope != "local":
        raise InvalidRequestError(
            f"--eventloom-path {eventloom_path} is outside the workspace: a {scope}-scope settings file must not "
            "name a folder of this machine (and a user-scope one would tie every project to one memory)",
            field="--eventloom-path",
            remediation="Use a folder inside the workspace, set eventloom_path in <workspace>/.zaxy/hooks.json, "
            "or install with --scope local.",
        )
    return os.path.abspath(eventloom_path)


def manifest_hooks(
    client: str,
    eventloom_path: str | None = None,
    *,
    scope: str | None = None,
    workspace_root: str | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """The manifest's ``hooks`` object with the zaxy command filled in for ``scope`` (see :func:`hook_command`)."""
    manifest = json.loads(read_asset_text("hooks", f"{client}.json"))
    scope = scope or DEFAULT_SCOPE[client]
    root = workspace_root or os.getcwd()
    zaxy = hook_command(client, scope, root)
    hooks: dict[str, list[dict[str, Any]]] = manifest["hooks"]
    for groups in hooks.values():
        for group in groups:
            for handler in group["hooks"]:
                command = handler["command"].replace("{{ZAXY}}", zaxy)
                if eventloom_path:
                    command += " --eventloom-path " + shell_command([hook_eventloom_path(scope, root, eventloom_path)])
                handler["command"] = command
    return hooks


def _zaxy_groups(groups: list[Any]) -> list[dict[str, Any]]:
    """The Zaxy handlers of one event, each with the matcher of its group."""
    found = []
    for group in groups:
        if isinstance(group, dict):
            for handler in group.get("hooks") or []:
                if is_zaxy_handler(handler):
                    entry = {"handler": handler}
                    if "matcher" in group:
                        entry["matcher"] = group["matcher"]
                    found.append(entry)
    return found


def _strip_zaxy(groups: list[Any]) -> list[Any]:
    """``groups`` without Zaxy handlers; groups left without handlers are dropped."""
    kept = []
    for group in groups:
        if not isinstance(group, dict):
            kept.append(group)
            continue
        handlers = [handler for handler in group.get("hooks") or [] if not is_zaxy_handler(handler)]
        if handlers or not group.get("hooks"):
            kept.append({**group, "hooks": handlers} if "hooks" in group else group)
    return kept


def merge_hooks(
    settings: dict[str, Any], wanted: dict[str, list[dict[str, Any]]], *, force: bool
) -> tuple[dict[str, Any], dict[str, str]]:
    """``settings`` with Zaxy's hooks merged in, and per event ``added`` / ``unchanged`` / ``replaced``.

    Raises :class:`ConflictError` (nothing changed) when a different Zaxy entry exists and ``force`` is off.
    """
    merged = copy.deepcopy(settings)
    hooks = merged.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidRequestError(
            "the settings file's 'hooks' is not an object", field="hooks", remediation="Fix or remove 'hooks'."
        )
    actions: dict[str, str] = {}
    conflicts = []
    for event, groups in wanted.items():
        existing = hooks.get(event) or []
        if not isinstance(existing, list):
            raise InvalidRequestError(
                f"hooks.{event} is not a list", field=f"hooks.{event}", remediation="Fix the settings file."
            )
        current = _zaxy_groups(existing)
        desired = _zaxy_groups(groups)
        if current == desired:
            actions[event] = "unchanged"
            continue
        if current and not force:
            conflicts.append(event)
            continue
        hooks[event] = _strip_zaxy(existing) + copy.deepcopy(groups)
        actions[event] = "replaced" if current else "added"
    if conflicts:
        raise ConflictError(
            f"a different Zaxy hook is already installed for: {', '.join(conflicts)}",
            field="--force",
            remediation="Rerun with --force to replace Zaxy's entries (other hooks are kept).",
            details={"events": conflicts},
        )
    return merged, actions


def remove_hooks(settings: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``settings`` without any Zaxy hook handler, and the events they were removed from."""
    merged = copy.deepcopy(settings)
    hooks = merged.get("hooks")
    removed: list[str] = []
    if not isinstance(hooks, dict):
        return merged, removed
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list) or not _zaxy_groups(groups):
            continue
        removed.append(event)
        kept = _strip_zaxy(groups)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del merged["hooks"]
    return merged, removed


def install(
    client: str, scope: str, workspace_root: str, *, force: bool, write: bool, eventloom_path: str | None = None
) -> dict[str, Any]:
    """Merge Zaxy's hooks into the scope's settings file (or only compute it when ``write`` is off)."""
    check_scope(client, scope)
    path = settings_path(client, scope, workspace_root)
    wanted = manifest_hooks(client, eventloom_path, scope=scope, workspace_root=workspace_root)
    existing = load_json_object(path)
    merged, actions = merge_hooks(existing or {}, wanted, force=force)
    changed = any(action != "unchanged" for action in actions.values())
    if write and changed:
        atomic_write_text(path, dump_json(merged))
    warning = portable_zaxy(workspace_root, shared=scope == SHARED_SCOPE).path_warning
    return {
        "client": client,
        "scope": scope,
        "path": str(path),
        "written": bool(write and changed),
        "created": existing is None and bool(write and changed),
        "events": actions,
        "hooks": wanted,
        "shared": scope == SHARED_SCOPE,
        "warnings": [warning] if warning else [],
    }


def uninstall(client: str, scope: str, workspace_root: str) -> dict[str, Any]:
    check_scope(client, scope)
    path = settings_path(client, scope, workspace_root)
    existing = load_json_object(path)
    if existing is None:
        return {"client": client, "scope": scope, "path": str(path), "removed": [], "written": False}
    merged, removed = remove_hooks(existing)
    if removed:
        atomic_write_text(path, dump_json(merged))
    return {"client": client, "scope": scope, "path": str(path), "removed": removed, "written": bool(removed)}


def installed(client: str, workspace_root: str) -> list[dict[str, Any]]:
    """Per scope: the settings file, the events with Zaxy hooks, and whether their executable still exists."""
    rows = []
    for scope in SCOPES[client]:
        path = settings_path(client, scope, workspace_root)
        row: dict[str, Any] = {"scope": scope, "path": str(path), "exists": path.exists(), "events": []}
        try:
            settings = load_json_object(path) or {}
        except InvalidRequestError as exc:
            row["error"] = exc.message
            rows.append(row)
            continue
        hooks = settings.get("hooks") if isinstance(settings.get("hooks"), dict) else {}
        commands = set()
        for event, groups in hooks.items():
            found = _zaxy_groups(groups) if isinstance(groups, list) else []
            if found:
                row["events"].append(event)
                commands.update(entry["handler"]["command"] for entry in found)
        executables = {_first_word(command) for command in commands}
        row["executables"] = sorted(executables)
        row["stale"] = [exe for exe in sorted(executables) if exe and not _runnable(exe, workspace_root)]
        rows.append(row)
    return rows


def _runnable(executable: str, workspace_root: str) -> bool:
    """Whether a hook's executable exists: absolute, relative to the workspace root, or on PATH."""
    import shutil

    for variable in (ROOT_SHELL.strip('"'), "$CLAUDE_PROJECT_DIR", "${CLAUDE_PROJECT_DIR}"):
        executable = executable.replace(variable, workspace_root)
    if "/" not in executable:
        return shutil.which(executable) is not None
    return os.path.exists(executable if os.path.isabs(executable) else os.path.join(workspace_root, executable))


def _first_word(command: str) -> str:
    import shlex

    try:
        return shlex.split(command)[0]
    except (ValueError, IndexError):
        return ""
