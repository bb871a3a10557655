"""Server configuration: arguments first, then environment, then defaults (validated once, at start-up)."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zaxy_agents.config import ZaxySettings
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.validation import validate_session_id

ENV_PROFILE = "MCP_TOOL_PROFILE"
ENV_CAPTURE = "MCP_LIFECYCLE_CAPTURE_ENABLED"
ENV_SESSION = "ZAXY_SESSION_ID"
ENV_AUTH_TOKEN = "ZAXY_AUTH_TOKEN"
ENV_AUTH_TOKEN_FILE = "ZAXY_AUTH_TOKEN_FILE"
ENV_ADMIN_TOKEN = "ZAXY_ADMIN_TOKEN"
ENV_ADMIN_TOKEN_FILE = "ZAXY_ADMIN_TOKEN_FILE"
ENV_SESSION_TOKENS_FILE = "ZAXY_SESSION_TOKENS_FILE"
ENV_RATE_LIMIT = "ZAXY_RATE_LIMIT_PER_MINUTE"
ENV_SHARE = "ZAXY_SHARE_GRAPH"
DEFAULT_SESSION = "default"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_RATE_LIMIT = 600
MIN_TOKEN_LENGTH = 16
SESSION_HEADER = "x-zaxy-session-id"


@dataclass
class ServerConfig:
    settings: ZaxySettings
    profile: str = "core"
    default_session: str = DEFAULT_SESSION
    capture: bool = True
    share: bool = True
    transport: str = "stdio"
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    insecure_local: bool = False
    auth_token: str | None = field(default=None, repr=False)
    admin_token: str | None = field(default=None, repr=False)
    session_tokens: dict[str, str] = field(default_factory=dict, repr=False)  # token -> the one session it may use
    rate_limit_per_minute: int = DEFAULT_RATE_LIMIT
    workspace: Any = None  # capture.workspace.Workspace when started for a workspace (--client / --workspace)
    client: str | None = None

    def shared_sessions(self) -> list[str]:
        """The workspace's other sessions recalled with the default session (empty when sharing is off)."""
        if self.workspace is None or self.transport != "stdio":
            return []
        from zaxy_agents.fabric.light import light_session_names

        names = light_session_names(eventloom_path=self.settings.eventloom_dir)
        return self.workspace.shared_sessions(self.default_session, names)

    @classmethod
    def resolve(
        cls,
        eventloom_path: str | os.PathLike[str] | None = None,
        *,
        profile: str | None = None,
        session_id: str | None = None,
        capture: bool | None = None,
        share: bool | None = None,
        transport: str = "stdio",
        host: str | None = None,
        port: int | None = None,
        insecure_local: bool = False,
        rate_limit_per_minute: int | None = None,
        client: str | None = None,
        workspace: str | os.PathLike[str] | None = None,
    ) -> ServerConfig:
        """Resolve the configuration. ``client`` / ``workspace`` start the server *for a workspace*: the
        workspace is found from ``workspace`` (or the working directory) the way git finds ``.git``, memory is
        its Eventloom, the default session is ``<client>.<workspace>-<hash>`` (the one that client's hooks
        write), and the workspace's other clients' sessions are recalled with it (docs/ide-config.md). That
        is what lets a team-shared config carry no machine-specific path."""
        chosen_profile = (profile or os.environ.get(ENV_PROFILE) or "core").strip().lower()
        if chosen_profile not in ("core", "full"):
            raise InvalidRequestError(
                f"unknown tool profile {chosen_profile!r}",
                field="--profile",
                remediation=f"Use core or full (flag --profile or {ENV_PROFILE}).",
            )
        if transport not in ("stdio", "http"):
            raise InvalidRequestError(
                f"unknown transport {transport!r}", field="--transport", remediation="Use stdio or http."
            )
        resolved_workspace = None
        if client is not None or workspace is not None:
            resolved_workspace = _resolve_workspace(workspace, eventloom_path, client)
            eventloom_path = resolved_workspace.eventloom_path  # a relative folder is relative to the workspace
        if client is not None:
            validate_session_id(client, field="--client")
            if "." in client:
                raise InvalidRequestError(
                    f"--client {client!r} contains a dot",
                    field="--client",
                    remediation="Use the client's plain name: claude-code, codex, cursor, vscode...",
                )
        session = session_id or os.environ.get(ENV_SESSION)
        if session is None and client is not None and resolved_workspace is not None:
            session = resolved_workspace.session_for(client)
        session = session or DEFAULT_SESSION
        validate_session_id(session, field="--session-id")
        config = cls(
            settings=ZaxySettings.resolve(eventloom_path),
            workspace=resolved_workspace,
            client=client,
            profile=chosen_profile,
            default_session=session,
            capture=_flag(ENV_CAPTURE, True) if capture is None else capture,
            share=_flag(ENV_SHARE, True) if share is None else share,
            transport=transport,
            host=host or DEFAULT_HOST,
            port=DEFAULT_PORT if port is None else port,
            insecure_local=insecure_local,
            auth_token=read_token(ENV_AUTH_TOKEN, ENV_AUTH_TOKEN_FILE),
            admin_token=read_token(ENV_ADMIN_TOKEN, ENV_ADMIN_TOKEN_FILE),
            session_tokens=read_session_tokens(os.environ.get(ENV_SESSION_TOKENS_FILE)),
            rate_limit_per_minute=rate_limit_per_minute or _int(ENV_RATE_LIMIT, DEFAULT_RATE_LIMIT),
        )
        if transport == "http":
            config.check_http_security()
        return config

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def check_http_security(self) -> None:
        """Refuse configurations that would expose memory: no token off loopback, no accidental 0.0.0.0."""
        if self.insecure_local and not self.loopback:
            raise InvalidRequestError(
                f"--insecure-local only works on a loopback address, not {self.host}",
                field="--host",
                remediation="Bind 127.0.0.1 (the default), or set ZAXY_AUTH_TOKEN and drop --insecure-local.",
            )
        if not (self.auth_token or self.admin_token or self.session_tokens) and not self.insecure_local:
            raise InvalidRequestError(
                "HTTP transport needs a bearer token",
                field=ENV_AUTH_TOKEN,
                remediation=f"Set {ENV_AUTH_TOKEN} or {ENV_AUTH_TOKEN_FILE} (at least {MIN_TOKEN_LENGTH} characters), "
                "or pass --insecure-local on 127.0.0.1 for local experiments.",
            )
        check_token_lengths(self.auth_token, self.admin_token, self.session_tokens)
        if not 1 <= self.rate_limit_per_minute <= 1_000_000:
            raise InvalidRequestError(
                "rate limit must be between 1 and 1000000 requests per minute",
                field="--rate-limit",
                remediation=f"Use e.g. {DEFAULT_RATE_LIMIT}.",
            )


def _resolve_workspace(workspace: str | os.PathLike[str] | None, eventloom_path: object, client: str | None) -> Any:
    """The workspace from ``--workspace``, else the project folder Claude Code gives its MCP servers
    (``CLAUDE_PROJECT_DIR``), else the working directory; the root is found upwards like git finds ``.git``."""
    from zaxy_agents.capture.workspace import resolve_workspace

    project_dir = os.environ.get("CLAUDE_PROJECT_DIR") if client == "claude-code" else None
    start = os.fspath(workspace) if workspace is not None else (project_dir or os.getcwd())
    if workspace is not None and not os.path.isdir(start):
        raise InvalidRequestError(
            f"--workspace {start!r} is not a folder",
            field="--workspace",
            remediation="Pass the project folder (a client variable such as ${workspaceFolder} must be expanded).",
        )
    return resolve_workspace(start, os.fspath(eventloom_path) if eventloom_path is not None else None)


def _flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    return raw.strip().lower() not in {"0", "false", "no", "off"}


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise InvalidRequestError(
            f"{name}={raw!r} is not an integer", field=name, remediation="Use a whole number of requests per minute."
        ) from exc


def check_token_lengths(auth_token: str | None, admin_token: str | None, session_tokens: dict[str, str]) -> None:
    """Refuse a configured token shorter than :data:`MIN_TOKEN_LENGTH`, naming where it came from."""
    named = [(ENV_AUTH_TOKEN, auth_token), (ENV_ADMIN_TOKEN, admin_token)]
    named += [(f"{ENV_SESSION_TOKENS_FILE} ({session})", token) for token, session in session_tokens.items()]
    for name, token in named:
        if token is not None and len(token) < MIN_TOKEN_LENGTH:
            raise InvalidRequestError(
                f"{name} is shorter than {MIN_TOKEN_LENGTH} characters",
                field=name,
                remediation="Use a long random token: python -c 'import secrets; print(secrets.token_urlsafe(32))'",
            )


def read_session_tokens(path: str | None) -> dict[str, str]:
    """``<session> <token>`` per line (``#`` comments): tokens that only ever unlock their own session."""
    if not path:
        return {}
    try:
        lines = Path(path).expanduser().read_text().splitlines()
    except OSError as exc:
        raise InvalidRequestError(
            f"cannot read {ENV_SESSION_TOKENS_FILE}={path!r}: {exc.strerror}",
            field=ENV_SESSION_TOKENS_FILE,
            remediation="Point it at a readable file with one '<session-id> <token>' per line.",
        ) from exc
    tokens: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.split()
        if len(parts) != 2:
            raise InvalidRequestError(
                f"{ENV_SESSION_TOKENS_FILE} line {number} is not '<session-id> <token>'",
                field=ENV_SESSION_TOKENS_FILE,
                remediation="Write one session id and one token per line, separated by a space.",
            )
        session, token = parts
        validate_session_id(session, field=f"{ENV_SESSION_TOKENS_FILE} line {number}")
        tokens[token] = session
    return tokens


def read_token(env_name: str, file_env_name: str) -> str | None:
    value = os.environ.get(env_name)
    if value:
        return value.strip()
    path = os.environ.get(file_env_name)
    if not path:
        return None
    try:
        text = Path(path).expanduser().read_text().strip()
    except OSError as exc:
        raise InvalidRequestError(
            f"cannot read {file_env_name}={path!r}: {exc.strerror}",
            field=file_env_name,
            remediation="Point it at a readable file holding the token on one line.",
        ) from exc
    return text or None
