"""``zaxy ide-config <client>``: the MCP server entry for ``zaxy serve`` in each client's own config shape.

Templates live in ``integrations/`` (one per client, in the client's real file format); ``{{name}}``,
``{{command}}`` and the ``"{{args}}"`` list element are filled with the server name, the ``zaxy`` command and
``serve --client <client>`` (plus ``--workspace`` where the client has a variable for it). The server finds
the workspace, its Eventloom and the client's session itself (``zaxy serve --client``), so:

* a team-shared file (project scope: ``.mcp.json``, ``.cursor/mcp.json``, ``.vscode/mcp.json``,
  ``.codex/config.toml``) holds no machine-specific path: a ``zaxy`` inside the workspace is named relative to
  it (``${workspaceFolder}`` for VS Code and Cursor, the git top level found at start for Claude Code and Codex),
  any other ``zaxy`` is found on ``PATH``;
* a user-scope file is workspace-neutral: the same entry serves whichever project the client opened, and never
  ties one project's memory to every project (Claude Desktop, which has no project, names one explicitly).

Merging keeps every other server and setting (TOML via ``tomlkit`` and YAML via ``ruamel.yaml`` keep the user's
comments and formatting); an existing entry of the same name is replaced only with ``force``. Nothing secret is
ever written: the entry carries no environment values.
"""

from __future__ import annotations

import copy
import io
import json
import os
import sys
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

CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode", "codex", "hermes")


class ClientSpec:
    """Where a client keeps MCP servers and in which format."""

    def __init__(self, template: str, fmt: str, container: str, scopes: tuple[str, ...]) -> None:
        self.template, self.format, self.container, self.scopes = template, fmt, container, scopes


SPECS = {
    "claude-code": ClientSpec("claude-code.mcp.json", "json", "mcpServers", ("project",)),
    "claude-desktop": ClientSpec("claude-desktop.json", "json", "mcpServers", ("user",)),
    "cursor": ClientSpec("cursor.mcp.json", "json", "mcpServers", ("project", "user")),
    "vscode": ClientSpec("vscode.mcp.json", "json", "servers", ("project",)),
    "codex": ClientSpec("codex.config.toml", "toml", "mcp_servers", ("project", "user")),
    "hermes": ClientSpec("hermes.config.yaml", "yaml", "mcp_servers", ("user",)),
}


def check_client(client: str) -> ClientSpec:
    spec = SPECS.get(client)
    if spec is None:
        raise InvalidRequestError(
            f"unknown client {client!r}", field="client", remediation=f"Use one of: {', '.join(CLIENTS)}."
        )
    return spec


def claude_desktop_config_path() -> Path:
    """Claude Desktop's config file for this OS (Linux has no official build; the common path is used)."""
    home = Path(os.path.expanduser("~"))
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if os.name == "nt":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude" / "claude_desktop_config.json"
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude" / "claude_desktop_config.json"


DESKTOP_PATHS = {
    "macOS": "~/Library/Application Support/Claude/claude_desktop_config.json",
    "Windows": "%APPDATA%\\Claude\\claude_desktop_config.json",
    "Linux (unofficial builds)": "~/.config/Claude/claude_desktop_config.json",
}


def config_path(client: str, scope: str, workspace_root: str) -> Path:
    root = Path(workspace_root)
    if client == "claude-code":
        return root / ".mcp.json"
    if client == "claude-desktop":
        return claude_desktop_config_path()
    if client == "cursor":
        return (root if scope == "project" else Path(os.path.expanduser("~"))) / ".cursor" / "mcp.json"
    if client == "vscode":
        return root / ".vscode" / "mcp.json"
    if client == "codex":
        home = Path(os.path.expanduser(os.environ.get("CODEX_HOME") or "~/.codex"))
        return (root / ".codex" if scope == "project" else home) / "config.toml"
    hermes_home = Path(os.path.expanduser(os.environ.get("HERMES_HOME") or "~/.hermes"))
    return hermes_home / "config.yaml"


WORKSPACE_VARIABLE = {"vscode": "${workspaceFolder}", "cursor": "${workspaceFolder}"}


def server_args(client: str, scope: str, workspace_root: str, eventloom_path: str | None = None) -> list[str]:
    """``serve --client <client>`` and where the workspace is, as portable as the file it goes into.

    ``eventloom_path`` (an explicit folder) is written relative to the workspace when it lies inside it; a folder
    elsewhere would tie a shared or user-scope file to this machine and is refused there.
    """
    args = ["serve", "--client", client]
    if client in WORKSPACE_VARIABLE:
        args += ["--workspace", WORKSPACE_VARIABLE[client]]
    elif client == "claude-desktop":  # no project in Claude Desktop: it serves the workspace named here
        args += ["--workspace", os.path.abspath(workspace_root)]
    if eventloom_path:
        relative = workspace_relative(eventloom_path, workspace_root)
        if relative is None and client != "claude-desktop" and scope in ("project", "user"):
            raise InvalidRequestError(
                f"--eventloom-path {eventloom_path} is outside the workspace: a {scope}-scope config must not name "
                "a folder of this machine",
                field="--eventloom-path",
                remediation="Use a folder inside the workspace (written relative to it), set eventloom_path in "
                "<workspace>/.zaxy/hooks.json, or leave it out.",
            )
        args += ["--eventloom-path", relative if relative is not None else os.path.abspath(eventloom_path)]
    return args


def server_command(client: str, scope: str, workspace_root: str, args: list[str]) -> tuple[str, list[str], str | None]:
    """``(command, args, warning)`` of the entry: portable in a shared file, absolute in a machine file."""
    shared = scope == "project" and client != "claude-desktop"
    command = portable_zaxy(workspace_root, shared=shared)
    if command.relative is None:
        return command.argv[0], [*command.argv[1:], *args], command.path_warning
    rest = [*command.argv[1:], *args]
    if client in WORKSPACE_VARIABLE:
        return f"{WORKSPACE_VARIABLE[client]}/{command.relative}", rest, None
    # Claude Code and Codex expand no variable in an MCP command: find the workspace root when the server starts.
    return "sh", ["-c", f"exec {ROOT_SHELL}/{shell_command([command.relative])} {shell_command(rest)}"], None


def _fill(value: Any, name: str, command: str, args: list[str]) -> Any:
    if isinstance(value, dict):
        return {(name if key == "{{name}}" else key): _fill(item, name, command, args) for key, item in value.items()}
    if isinstance(value, list):
        filled: list[Any] = []
        for item in value:
            filled.extend(args if item == "{{args}}" else [_fill(item, name, command, args)])
        return filled
    if value == "{{command}}":
        return command
    return value


def server_entry(
    client: str, name: str, scope: str, workspace_root: str, eventloom_path: str | None = None
) -> tuple[dict[str, Any], str | None]:
    """The plain-dict server entry (what goes under the client's container key) and a PATH warning, if any."""
    spec = check_client(client)
    text = read_asset_text("integrations", spec.template)
    template = _parse(spec.format, text)
    entries = template[spec.container]
    entry = _plain(next(iter(entries.values())))
    command, args, warning = server_command(
        client, scope, workspace_root, server_args(client, scope, workspace_root, eventloom_path)
    )
    return _fill(entry, name, command, args), warning


def _plain(value: Any) -> Any:
    """tomlkit / ruamel containers as plain dicts and lists."""
    if hasattr(value, "unwrap"):
        return value.unwrap()
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _parse(fmt: str, text: str) -> Any:
    if fmt == "json":
        return json.loads(text)
    if fmt == "toml":
        import tomlkit

        return tomlkit.parse(text)
    from ruamel.yaml import YAML

    return YAML(typ="rt").load(text)


def snippet(client: str, name: str, entry: dict[str, Any]) -> str:
    """The config text to paste: just Zaxy's entry inside the client's container key."""
    spec = check_client(client)
    if spec.format == "json":
        return dump_json({spec.container: {name: entry}})
    if spec.format == "toml":
        import tomlkit

        document = tomlkit.document()
        servers = tomlkit.table(is_super_table=True)
        servers.add(name, _toml_table(entry))
        document.add(spec.container, servers)
        return tomlkit.dumps(document)
    return _yaml_dump({spec.container: {name: entry}})


def _toml_table(entry: dict[str, Any]) -> Any:
    import tomlkit

    table = tomlkit.table()
    for key, value in entry.items():
        if isinstance(value, dict) and not value:
            continue  # no empty env tables in TOML
        table.add(key, value)
    return table


def _yaml_dump(value: Any) -> str:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    buffer = io.StringIO()
    yaml.dump(value, buffer)
    return buffer.getvalue()


def cli_commands(client: str, name: str, entry: dict[str, Any]) -> list[str]:
    """Equivalent commands of the client's own CLI, where it has one.

    ``claude mcp add --scope local`` and ``codex mcp add`` write machine files (not the repository), so they name
    this installation's absolute ``zaxy``; the server still finds the workspace when it starts.
    """
    argv = [entry["command"], *entry.get("args", [])]
    machine = [*portable_zaxy("/", shared=False).argv, "serve", "--client", client]
    if client == "claude-code":
        return [
            f"claude mcp add --scope project {shell_command([name])} -- {shell_command(argv)}",
            f"claude mcp add --scope local {shell_command([name])} -- {shell_command(machine)}",
        ]
    if client == "codex":
        return [f"codex mcp add {shell_command([name])} -- {shell_command(machine)}"]
    if client == "vscode":
        payload = json.dumps({"name": name, **entry}, separators=(",", ":"))
        return [f"code --add-mcp {shell_command([payload])}"]
    return []


def describe(
    client: str,
    scope: str | None,
    workspace_root: str,
    name: str,
    eventloom_path: str | None = None,
) -> dict[str, Any]:
    """What ``zaxy ide-config`` prints: target path, entry, snippet and the client's own install command.

    ``eventloom_path``: only an explicitly chosen folder (the server finds the workspace's own by itself).
    """
    spec = check_client(client)
    scope = scope or spec.scopes[0]
    if scope not in spec.scopes:
        raise InvalidRequestError(
            f"{client} has no {scope!r} scope", field="--scope", remediation=f"Use one of: {', '.join(spec.scopes)}."
        )
    entry, warning = server_entry(client, name, scope, workspace_root, eventloom_path)
    info: dict[str, Any] = {
        "client": client,
        "scope": scope,
        "name": name,
        "path": str(config_path(client, scope, workspace_root)),
        "format": spec.format,
        "container": spec.container,
        "entry": entry,
        "snippet": snippet(client, name, entry),
        "commands": cli_commands(client, name, entry),
        "shared": scope == "project" and client != "claude-desktop",
        "warnings": [warning] if warning else [],
    }
    if client == "claude-desktop":
        info["documented_paths"] = DESKTOP_PATHS
    return info


def install(info: dict[str, Any], *, force: bool) -> dict[str, Any]:
    """Merge ``info["entry"]`` into the client's file; returns ``{"action": added|replaced|unchanged, ...}``."""
    path = Path(info["path"])
    merge = {"json": _merge_json, "toml": _merge_toml, "yaml": _merge_yaml}[info["format"]]
    action = merge(path, info["container"], info["name"], info["entry"], force)
    return {**info, "action": action, "written": action != "unchanged"}


def _decide(existing: Any, entry: dict[str, Any], name: str, path: Path, force: bool) -> str:
    if existing is None:
        return "added"
    if _plain(existing) == entry:
        return "unchanged"
    if not force:
        raise ConflictError(
            f"{path} already has an MCP server named {name!r} with different settings",
            field="--force",
            remediation=f"Rerun with --force to replace it, or pick another name with --name (e.g. {name}-2).",
        )
    return "replaced"


def _container(document: Any, key: str, path: Path) -> Any:
    servers = document.get(key)
    if servers is not None and not isinstance(servers, dict):
        raise InvalidRequestError(
            f"{path}: {key!r} is not a table/object", field=key, remediation=f"Fix {key!r} in {path}."
        )
    return servers


def _merge_json(path: Path, container: str, name: str, entry: dict[str, Any], force: bool) -> str:
    document = load_json_object(path) or {}
    servers = _container(document, container, path) or {}
    action = _decide(servers.get(name), entry, name, path, force)
    if action != "unchanged":
        merged = copy.deepcopy(document)
        merged[container] = {**servers, name: entry}
        atomic_write_text(path, dump_json(merged))
    return action


def _merge_toml(path: Path, container: str, name: str, entry: dict[str, Any], force: bool) -> str:
    import tomlkit
    from tomlkit.exceptions import ParseError

    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        document = tomlkit.parse(text)
    except ParseError as exc:
        raise InvalidRequestError(
            f"{path} is not valid TOML ({exc})",
            field=str(path),
            remediation="Fix the file, or merge the printed entry by hand.",
        ) from exc
    servers = _container(document, container, path)
    plain_entry = {key: value for key, value in entry.items() if not (isinstance(value, dict) and not value)}
    action = _decide(servers.get(name) if servers is not None else None, plain_entry, name, path, force)
    if action != "unchanged":
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            document.add(container, servers)
        if name in servers:
            del servers[name]
        servers.add(name, _toml_table(entry))
        atomic_write_text(path, tomlkit.dumps(document))
    return action


def _merge_yaml(path: Path, container: str, name: str, entry: dict[str, Any], force: bool) -> str:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    try:
        document = yaml.load(path.read_text(encoding="utf-8")) if path.exists() else None
    except YAMLError as exc:
        raise InvalidRequestError(
            f"{path} is not valid YAML ({exc})",
            field=str(path),
            remediation="Fix the file, or merge the printed entry by hand.",
        ) from exc
    if document is None:
        from ruamel.yaml.comments import CommentedMap

        document = CommentedMap()
    if not isinstance(document, dict):
        raise InvalidRequestError(f"{path} is not a YAML mapping", field=str(path), remediation="Fix the file.")
    servers = _container(document, container, path)
    action = _decide(servers.get(name) if servers is not None else None, entry, name, path, force)
    if action != "unchanged":
        if servers is None:
            document[container] = servers = {}
        servers[name] = entry
        buffer = io.StringIO()
        yaml.dump(document, buffer)
        atomic_write_text(path, buffer.getvalue())
    return action
