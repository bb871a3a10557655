"""Bearer tokens shared by the HTTP surfaces (the MCP server and the Memory Inspector): which tokens exist and
what one unlocks.

Three kinds, configured once in the environment (see :mod:`.config`): the user token (``ZAXY_AUTH_TOKEN``,
every session), the admin token (``ZAXY_ADMIN_TOKEN``, every session plus the admin operations) and
session-bound tokens (``ZAXY_SESSION_TOKENS_FILE``, one session each: a holder can never name another).
Tokens are compared in constant time as SHA-256 digests, and every configured token is checked, so the time
taken says nothing about which one matched.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass


@dataclass(frozen=True)
class Grant:
    """What a presented token unlocks: ``session`` None means every session."""

    admin: bool
    session: str | None = None

    def allows(self, session: str) -> bool:
        return self.session is None or self.session == session


class BearerTokens:
    """The configured tokens, kept only as digests."""

    def __init__(
        self, user: str | None = None, admin: str | None = None, session_tokens: dict[str, str] | None = None
    ) -> None:
        self._user = _digest(user)
        self._admin = _digest(admin)
        self._session_bound = [(_digest(token), session) for token, session in (session_tokens or {}).items()]

    @property
    def configured(self) -> bool:
        return self._user is not None or self._admin is not None or bool(self._session_bound)

    def grant(self, token: str) -> Grant | None:
        """The grant of ``token``, or ``None`` when it is none of the configured tokens."""
        presented = _digest(token.strip()) if token.strip() else None
        if presented is None:
            return None
        admin = self._admin is not None and hmac.compare_digest(presented, self._admin)
        user = self._user is not None and hmac.compare_digest(presented, self._user)
        bound = None
        for digest, session in self._session_bound:
            if digest is not None and hmac.compare_digest(presented, digest):
                bound = session
        if admin or user:
            return Grant(admin=admin)
        return Grant(admin=False, session=bound) if bound is not None else None

    def from_header(self, authorization: str) -> Grant | None:
        """The grant of an ``Authorization: Bearer <token>`` header value."""
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self.grant(token)


def fingerprint(credential: str) -> str:
    """Which credential a request presented, without keeping it: a short digest (for throttling failures)."""
    if not credential.strip():
        return "none"
    return hashlib.sha256(credential.strip().encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _digest(token: str | None) -> bytes | None:
    return None if token is None else hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
