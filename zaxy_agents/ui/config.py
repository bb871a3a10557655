"""What ``zaxy ui`` serves and who may see it: the memory, the address, and the tokens.

Tokens are the HTTP MCP server's (``ZAXY_AUTH_TOKEN``, ``ZAXY_ADMIN_TOKEN``, ``ZAXY_SESSION_TOKENS_FILE`` and
their ``_FILE`` forms, see docs/mcp.md). When none is configured, ``zaxy ui`` makes a random one for this run
and prints it in the address it shows (the person who started it owns the memory, so that token is an admin
token); that only works on a loopback address: anywhere else a configured token is required.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from dataclasses import dataclass, field

from zaxy_agents.config import ZaxySettings
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.mcp.config import (
    ENV_ADMIN_TOKEN,
    ENV_ADMIN_TOKEN_FILE,
    ENV_AUTH_TOKEN,
    ENV_AUTH_TOKEN_FILE,
    ENV_SESSION_TOKENS_FILE,
    check_token_lengths,
    read_session_tokens,
    read_token,
)
from zaxy_agents.mcp.tokens import BearerTokens

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8766


@dataclass
class UiConfig:
    settings: ZaxySettings
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    tokens: BearerTokens = field(default_factory=BearerTokens, repr=False)
    generated_token: str | None = field(default=None, repr=False)  # made for this run when none is configured

    @classmethod
    def resolve(cls, settings: ZaxySettings, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> UiConfig:
        user = read_token(ENV_AUTH_TOKEN, ENV_AUTH_TOKEN_FILE)
        admin = read_token(ENV_ADMIN_TOKEN, ENV_ADMIN_TOKEN_FILE)
        bound = read_session_tokens(os.environ.get(ENV_SESSION_TOKENS_FILE))
        check_token_lengths(user, admin, bound)
        generated = None
        if user is None and admin is None and not bound:
            if not _loopback(host):
                raise InvalidRequestError(
                    f"zaxy ui on {host} (not a loopback address) needs a configured token",
                    field="--host",
                    remediation=f"Set {ENV_AUTH_TOKEN} (or {ENV_ADMIN_TOKEN}) first, or bind 127.0.0.1 (the default).",
                )
            generated = secrets.token_urlsafe(32)
            admin = generated
        return cls(settings, host, port, BearerTokens(user, admin, bound), generated)

    @property
    def loopback(self) -> bool:
        return _loopback(self.host)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
