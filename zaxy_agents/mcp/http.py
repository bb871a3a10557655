"""Streamable HTTP transport: bearer-token auth, per-session scoping, rate limits, loopback by default.

Every request to ``/mcp`` must carry ``Authorization: Bearer <token>`` and ``x-zaxy-session-id: <session>``; the
session header is the only session the request may touch (see :mod:`zaxy_agents.mcp.caller`). Tokens: the user
token (any session header), the admin token (also unlocks replay and invalidate), and session-bound tokens from
``ZAXY_SESSION_TOKENS_FILE`` (only their own session: a client holding one can never name another). Without any
token configured the server refuses to start unless ``--insecure-local`` binds a loopback address (admin tools
then stay unavailable over HTTP).
Rejections happen before the MCP layer, as JSON ``{"error": {...}}`` bodies with 400 / 401 / 413 / 429; a POST
body that is not JSON the server can read gets a JSON-RPC ``-32700`` (400) before the SDK sees it (http_body.py).

Failed authentications are throttled per (client address, token fingerprint): a client repeating a wrong (or
missing) token gets 429 after a short burst, while every other token from the same address — on localhost that
is every local client — keeps working; a valid token is never throttled by anyone's failures. With
``--insecure-local`` (no token configured) a request without the session header uses the server's default
session, so header-less clients such as the MCP Inspector CLI can connect.

Stateless streamable HTTP (a fresh transport per request, JSON responses): nothing accumulates per client, and
horizontal restarts lose nothing but in-flight calls. ``GET /healthz`` answers without auth and says nothing
about memory.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.validation import validate_session_id

from .config import SESSION_HEADER, ServerConfig
from .http_body import BodyRefused, read_checked_body
from .server import ZaxyMcpServer
from .tokens import BearerTokens, fingerprint

FAILED_AUTH_PER_MINUTE = 30


class RateLimiter:
    """Token buckets keyed by client: ``rate`` requests per minute, bursts up to ``rate / 6`` (10 seconds)."""

    def __init__(self, per_minute: int, *, clock: Any = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, per_minute / 6.0)
        self.clock = clock
        self._buckets: dict[Any, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: Any) -> tuple[bool, float]:
        """``(allowed, seconds until the next token)``."""
        now = self.clock()
        with self._lock:
            tokens, last = self._buckets.get(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            if len(self._buckets) > 10_000:  # bounded memory: forget idle clients
                self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < 600}
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return True, 0.0
            self._buckets[key] = (tokens, now)
            return False, (1.0 - tokens) / self.rate

    def exhausted(self, key: Any) -> bool:
        """Whether ``key`` has no token left right now (without consuming one)."""
        now = self.clock()
        with self._lock:
            tokens, last = self._buckets.get(key, (self.capacity, now))
        return min(self.capacity, tokens + (now - last) * self.rate) < 1.0


class McpEndpoint:
    """ASGI app for ``/mcp``: authenticate, rate-limit, bind the session, then hand over to the MCP transport."""

    def __init__(self, app: ZaxyMcpServer, manager: Any, config: ServerConfig) -> None:
        self.app = app
        self.manager = manager
        self.config = config
        self.limiter = RateLimiter(config.rate_limit_per_minute)
        self.failures = RateLimiter(FAILED_AUTH_PER_MINUTE)
        self.tokens = BearerTokens(config.auth_token, config.admin_token, config.session_tokens)
        self._open_local = config.insecure_local and not self.tokens.configured

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await _reject(send, 400, "invalid_request", "only HTTP is served here", "Use the streamable HTTP client.")
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", [])}
        client = (scope.get("client") or ("unknown", 0))[0]
        authorization = headers.get("authorization", "")
        failure_key = (client, fingerprint(authorization))
        if self.failures.exhausted(failure_key):
            await _reject(
                send,
                429,
                "rate_limited",
                "too many failed authentications with this token",
                "Fix the token (the server's ZAXY_AUTH_TOKEN) and retry in a minute.",
                60,
            )
            return
        admin, authenticated, bound = self._authenticate(authorization)
        if not authenticated:
            self.failures.allow(failure_key)
            await _reject(
                send,
                401,
                "unauthorized",
                "missing or invalid bearer token",
                "Send 'Authorization: Bearer <token>' with the server's ZAXY_AUTH_TOKEN.",
                extra_headers=[(b"www-authenticate", b'Bearer realm="zaxy"')],
            )
            return
        session = headers.get(SESSION_HEADER, "")
        if not session and self._open_local:
            session = self.config.default_session  # --insecure-local: header-less clients use the default session
        try:
            validate_session_id(session, field=SESSION_HEADER)
        except InvalidRequestError as exc:
            await _reject(send, 400, "invalid_request", exc.message, f"Send a valid {SESSION_HEADER} header.")
            return
        if bound is not None and bound != session:
            await _reject(
                send,
                401,
                "unauthorized",
                f"this token is bound to another session than {session!r}",
                f"Send {SESSION_HEADER} for the session this token was issued for.",
            )
            return
        allowed, wait = self.limiter.allow((client, session))
        if not allowed:
            await _reject(send, 429, "rate_limited", "rate limit exceeded", "Slow down and retry later.", wait)
            return
        if scope.get("method") == "POST":
            try:
                receive = await read_checked_body(receive, headers)
            except BodyRefused as refused:
                await _send_json(send, refused.status, refused.body)
                return
        scope["zaxy_caller"] = {"session": session, "admin": admin}
        await self.manager.handle_request(scope, receive, send)

    def _authenticate(self, header: str) -> tuple[bool, bool, str | None]:
        """``(is_admin, authenticated, the session a session-bound token is limited to)``."""
        if not self.tokens.configured:
            return False, self.config.insecure_local, None
        grant = self.tokens.from_header(header)
        if grant is None:
            return False, False, None
        return grant.admin, True, grant.session


def build_app(app: ZaxyMcpServer, config: ServerConfig) -> Any:
    """The Starlette application: ``/mcp`` (authenticated) and ``/healthz``."""
    import contextlib

    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    security = None
    if config.loopback:
        hosts = [f"{name}:{config.port}" for name in ("127.0.0.1", "localhost", "[::1]")]
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=hosts,
            allowed_origins=[f"http://{host}" for host in hosts],
        )
    manager = StreamableHTTPSessionManager(app.server, stateless=True, json_response=True, security_settings=security)

    async def healthz(_request: Any) -> Any:
        return JSONResponse({"ok": True, "server": "zaxy"})

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> Any:
        async with manager.run():
            yield

    return Starlette(
        routes=[Route("/mcp", endpoint=McpEndpoint(app, manager, config)), Route("/healthz", healthz)],
        lifespan=lifespan,
    )


def serve_http(config: ServerConfig) -> None:
    """Serve streamable HTTP until SIGINT/SIGTERM, then hand over cleanly."""
    import signal

    import uvicorn

    def stop(_signum: int, _frame: object) -> None:
        raise SystemExit(0)

    # uvicorn shuts down gracefully on SIGTERM/SIGINT, then re-raises the signal with the handlers it found:
    # make that an orderly exit so the hand-over below runs (and the exit status is 0).
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    app = ZaxyMcpServer(config)
    app.start()
    try:
        server = uvicorn.Server(
            uvicorn.Config(
                build_app(app, config),
                host=config.host,
                port=config.port,
                log_level="warning",
                lifespan="on",
                access_log=False,
            )
        )
        secured = config.auth_token or config.admin_token or config.session_tokens
        auth = "bearer auth" if secured else "NO AUTH (insecure-local)"
        sys.stderr.write(
            f"zaxy MCP server on http://{config.host}:{config.port}/mcp (profile {config.profile}; "
            f"session header {SESSION_HEADER}; {auth})\n"
        )
        sys.stderr.flush()
        server.run()
    finally:
        app.close(transport="http")


async def _reject(
    send: Any,
    status: int,
    code: str,
    message: str,
    remediation: str,
    retry_after: float | None = None,
    extra_headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    headers = []
    if retry_after is not None:
        headers.append((b"retry-after", str(max(1, round(retry_after))).encode()))
    headers.extend(extra_headers or [])
    body = {"error": {"code": code, "message": message, "remediation": remediation}}
    await _send_json(send, status, body, headers)


async def _send_json(send: Any, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]] = ()) -> None:
    encoded = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(encoded)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": encoded})
