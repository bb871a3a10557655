"""Who is calling and which sessions they may touch; crosses the owner socket as a plain dict.

Over stdio the caller is the local user: ``session_id`` arguments pick any session and ``scope`` may list other
sessions of the workspace; with no ``scope``, a server started for a workspace client (``zaxy serve
--client``) recalls that workspace's other clients' sessions too (``default_scope``; opt out with
``zaxy hooks sharing off``). Over HTTP the caller is *restricted* to the session named by the
``x-zaxy-session-id`` header: a ``session_id`` or ``scope`` naming any other session is refused with
``unauthorized``, and every read defaults to that one session, so one client can never read or write another's
memory. Admin-only tools (replay, invalidate) additionally need the admin token over HTTP.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from zaxy_agents.errors import UnauthorizedError


@dataclass
class Caller:
    session: str
    transport: str = "stdio"
    restricted: bool = False
    admin: bool = True
    server: dict[str, Any] = field(default_factory=dict)  # the frontend's description, for capabilities
    # stdio: the other sessions of this workspace (other clients), recalled with the caller's by default
    default_scope: list[str] | None = None

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Caller:
        keys = ("session", "transport", "restricted", "admin", "server", "default_scope")
        return cls(**{key: data[key] for key in keys if key in data})

    def allow_session(self, session: str | None, *, field: str = "session_id") -> str:
        """The session to touch for a ``session_id``-like argument (default: the caller's own)."""
        if session is None or session == self.session:
            return self.session
        if self.restricted:
            raise UnauthorizedError(
                f"this client may only use session {self.session!r}, not {session!r}",
                field=field,
                remediation="Omit the argument (it defaults to the session of the x-zaxy-session-id header).",
            )
        return session

    def allow_scope(self, scope: list[str] | None, *, field: str = "scope") -> list[str] | None:
        """Extra sessions to read from: ``scope`` when given (``[]``: only the caller's session), else the
        workspace's other sessions when the server recalls them together (``None`` = only the caller's)."""
        if scope is None:
            return list(self.default_scope) if self.default_scope else None
        for index, name in enumerate(scope):
            self.allow_session(name, field=f"{field}[{index}]")
        return sorted(set(scope))
