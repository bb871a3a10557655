"""Who may use the inspector, checked before any handler runs (an ASGI middleware).

* **Host**: on a loopback address only ``127.0.0.1``/``localhost``/``[::1]`` with our port are served, so a
  web page on another site cannot reach the inspector by DNS rebinding.
* **Token**: every ``/api/`` request carries a grant, from ``Authorization: Bearer <token>`` (scripts) or from
  the sign-in cookie (the page: ``POST /login`` exchanges a token for a random, HttpOnly, SameSite=Strict
  cookie; the token itself is never stored in the browser). Failed attempts are throttled per client and
  credential like the MCP server's.
* **Writes** by cookie must also carry ``X-Zaxy-UI: 1`` (a header another site's form or image cannot send)
  and, when the browser sends one, a same-origin ``Origin``.
* **Every response** gets a strict Content-Security-Policy (scripts, styles and connections from this origin
  only, no inline script), ``nosniff``, no referrer, and no caching of API answers.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from typing import Any

from zaxy_agents.mcp.http import FAILED_AUTH_PER_MINUTE, RateLimiter
from zaxy_agents.mcp.tokens import BearerTokens, Grant, fingerprint

GRANT_KEY = "zaxy_grant"
CSRF_HEADER = "x-zaxy-ui"
SIGN_IN_IDLE_SECONDS = 12 * 3600
MAX_SIGN_INS = 256
MAX_LOGIN_BODY = 4096
PUBLIC_PATHS = {"/", "/healthz", "/favicon.ico"}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


class SignIns:
    """Cookie value -> grant, in memory only (a restart signs everyone out); idle ones expire, the oldest go
    first when full."""

    def __init__(self) -> None:
        self._grants: dict[str, tuple[Grant, float]] = {}
        self._lock = threading.Lock()

    def create(self, grant: Grant) -> str:
        value = secrets.token_urlsafe(32)
        with self._lock:
            if len(self._grants) >= MAX_SIGN_INS:
                oldest = min(self._grants, key=lambda key: self._grants[key][1])
                del self._grants[oldest]
            self._grants[value] = (grant, time.monotonic())
        return value

    def grant(self, value: str) -> Grant | None:
        now = time.monotonic()
        with self._lock:
            found = self._grants.get(value)
            if found is None:
                return None
            if now - found[1] > SIGN_IN_IDLE_SECONDS:
                del self._grants[value]
                return None
            self._grants[value] = (found[0], now)
            return found[0]

    def drop(self, value: str) -> None:
        with self._lock:
            self._grants.pop(value, None)


class Guard:
    """The middleware: host check, sign-in, authentication, write protection, security headers."""

    def __init__(self, app: Any, *, tokens: BearerTokens, host: str, port: int, loopback: bool) -> None:
        self.app = app
        self.tokens = tokens
        self.sign_ins = SignIns()
        self.failures = RateLimiter(FAILED_AUTH_PER_MINUTE)
        self.cookie = f"zaxy_ui_{port}"
        names = ("127.0.0.1", "localhost", "[::1]") if loopback else (host,)
        self.allowed_hosts = {f"{name}:{port}" for name in names}
        self.allowed_origins = {f"http://{name}" for name in self.allowed_hosts}
        self.check_host = loopback

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", [])}
        send = _with_security_headers(send, scope["path"].startswith("/api/") or scope["path"] == "/login")
        if self.check_host and headers.get("host", "") not in self.allowed_hosts:
            await reply(
                send, 421, _error("invalid_request", "unexpected Host header", "Open the address zaxy ui printed.")
            )
            return
        path, method = scope["path"], scope["method"]
        if path == "/login" and method == "POST":
            await self._login(scope, receive, send, headers)
            return
        if path == "/logout" and method == "POST":
            await self._logout(send, headers)
            return
        if not path.startswith("/api/"):
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("unknown", 0))[0]
        authorization = headers.get("authorization", "")
        cookie = _cookies(headers.get("cookie", "")).get(self.cookie, "")
        failure_key = (client, fingerprint(authorization or cookie))
        if self.failures.exhausted(failure_key):
            await reply(
                send,
                429,
                _error("rate_limited", "too many failed sign-ins", "Fix the token and retry in a minute."),
                [(b"retry-after", b"60")],
            )
            return
        grant = (
            self.tokens.from_header(authorization) if authorization else self.sign_ins.grant(cookie) if cookie else None
        )
        if grant is None:
            if authorization or cookie:
                self.failures.allow(failure_key)
            await reply(
                send,
                401,
                _error(
                    "unauthorized",
                    "missing or invalid token",
                    "Sign in with the token zaxy ui printed (or ZAXY_AUTH_TOKEN / ZAXY_ADMIN_TOKEN).",
                ),
                [(b"www-authenticate", b'Bearer realm="zaxy-ui"')],
            )
            return
        if method not in ("GET", "HEAD") and not authorization:
            problem = self._write_problem(headers)
            if problem is not None:
                await reply(send, 403, _error("unauthorized", problem, "Use the inspector page to make changes."))
                return
        scope[GRANT_KEY] = grant
        await self.app(scope, receive, send)

    def _write_problem(self, headers: dict[str, str]) -> str | None:
        """Why a cookie-authenticated write is refused (a cross-site request), or ``None``."""
        if headers.get(CSRF_HEADER) != "1":
            return f"a change needs the {CSRF_HEADER} header"
        origin = headers.get("origin")
        if origin is not None and origin not in self.allowed_origins:
            return f"a change from origin {origin!r} is refused"
        return None

    async def _login(self, scope: dict[str, Any], receive: Any, send: Any, headers: dict[str, str]) -> None:
        client = (scope.get("client") or ("unknown", 0))[0]
        origin = headers.get("origin")
        if origin is not None and origin not in self.allowed_origins:
            await reply(send, 403, _error("unauthorized", "sign-in from another origin", "Use the inspector page."))
            return
        body = await _read_body(receive, MAX_LOGIN_BODY)
        try:
            token = json.loads(body or b"{}").get("token", "")
        except (ValueError, AttributeError):
            token = None
        if not isinstance(token, str):
            await reply(send, 400, _error("invalid_request", 'send {"token": "..."}', "Paste the token."))
            return
        failure_key = (client, fingerprint(token))
        if self.failures.exhausted(failure_key):
            await reply(send, 429, _error("rate_limited", "too many failed sign-ins", "Retry in a minute."))
            return
        grant = self.tokens.grant(token) if token else None
        if grant is None:
            self.failures.allow(failure_key)
            await reply(send, 401, _error("unauthorized", "invalid token", "Use the token zaxy ui printed."))
            return
        value = self.sign_ins.create(grant)
        cookie = f"{self.cookie}={value}; HttpOnly; SameSite=Strict; Path=/"
        await reply(send, 200, {"signed_in": True, **grant_view(grant)}, [(b"set-cookie", cookie.encode())])

    async def _logout(self, send: Any, headers: dict[str, str]) -> None:
        value = _cookies(headers.get("cookie", "")).get(self.cookie)
        if value:
            self.sign_ins.drop(value)
        expired = f"{self.cookie}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"
        await reply(send, 200, {"signed_in": False}, [(b"set-cookie", expired.encode())])


def grant_view(grant: Grant) -> dict[str, Any]:
    return {"admin": grant.admin, "session": grant.session}


def _with_security_headers(send: Any, no_store: bool) -> Any:
    async def wrapped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            present = {name.lower() for name, _ in message.get("headers", [])}
            extra = [(name, value) for name, value in SECURITY_HEADERS if name not in present]
            if no_store:
                extra.append((b"cache-control", b"no-store"))
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return wrapped


def _cookies(header: str) -> dict[str, str]:
    jar = {}
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name:
            jar[name] = value
    return jar


def _error(code: str, message: str, remediation: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "remediation": remediation}}


async def _read_body(receive: Any, limit: int) -> bytes:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return b""
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    return b"".join(chunks)


async def reply(send: Any, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": data})
