"""A small JSON-RPC 2.0 protocol over a unix socket: how peer processes reach the graph owner.

Framing: one JSON object per line, one request per connection (connect, send, read one reply, close). That keeps
both sides trivially robust: a peer that dies mid-call costs the owner one thread, and an owner that dies shows
up to the peer as a refused connection (nothing was sent, safe to retry anywhere) or a connection closed after
the request was sent (the call may or may not have run).

Only processes of the same user can connect: the socket is created mode 0600 and, on Linux, the peer's uid is
checked with ``SO_PEERCRED``. Remote errors carry the structured ``ZaxyError`` dict in ``error.data``.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import sys
import threading
import traceback
from collections.abc import Callable

from zaxy_agents.errors import ZaxyError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
APPLICATION_ERROR = -32000
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603

Handler = Callable[[str, dict], object]


class OwnerUnreachable(ConnectionError):
    """Nothing was sent: the owner is gone or not listening (safe to retry elsewhere)."""


class OwnerLost(ConnectionError):
    """The request was sent but no reply came back: it may or may not have been executed."""


class PeerServer:
    """Accepts peer connections on a unix socket and answers each request with ``handler(method, params)``."""

    def __init__(self, socket_path: str, handler: Handler) -> None:
        self.socket_path = socket_path
        self.handler = handler
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()
        self._active = 0
        self._active_lock = threading.Condition()

    def start(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.socket_path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.socket_path)
        os.chmod(self.socket_path, 0o600)
        listener.listen(64)
        listener.settimeout(0.2)  # lets the accept loop notice close() promptly
        self._listener = listener
        self._thread = threading.Thread(target=self._accept_loop, name="zaxy-peer-server", daemon=True)
        self._thread.start()

    def close(self, drain_timeout: float = 10.0) -> None:
        """Stop accepting, wait (bounded) for requests in flight, remove the socket file."""
        self._closing.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        with self._active_lock:
            self._active_lock.wait_for(lambda: self._active == 0, timeout=drain_timeout)
        with contextlib.suppress(OSError):
            os.unlink(self.socket_path)

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._closing.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if not _same_user(connection):
                connection.close()
                continue
            with self._active_lock:
                self._active += 1
            threading.Thread(target=self._serve, args=(connection,), name="zaxy-peer-call", daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        try:
            with connection:
                connection.settimeout(30)
                line = _read_line(connection)
                if line is None:
                    return
                connection.settimeout(None)
                reply = self._dispatch(line)
                connection.sendall(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
        except OSError:
            pass  # the peer went away; nothing to answer
        finally:
            with self._active_lock:
                self._active -= 1
                self._active_lock.notify_all()

    def _dispatch(self, line: bytes) -> dict[str, Any]:
        request_id = None
        try:
            request = json.loads(line)
            request_id = request.get("id")
            method, params = request["method"], request.get("params") or {}
            if not isinstance(method, str) or not isinstance(params, dict):
                raise ValueError("method must be a string and params an object")
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            return _error(request_id, INTERNAL_ERROR, f"malformed request: {exc}")
        try:
            return {"jsonrpc": "2.0", "id": request_id, "result": self.handler(method, params)}
        except ZaxyError as exc:
            return _error(request_id, APPLICATION_ERROR, exc.message, exc.to_dict())
        except LookupError as exc:
            return _error(request_id, METHOD_NOT_FOUND, str(exc))
        except Exception as exc:  # never leak a traceback to the peer; keep it in this process's log
            traceback.print_exc(file=sys.stderr)
            return _error(request_id, INTERNAL_ERROR, f"{type(exc).__name__} in the owner process")


class PeerClient:
    """Calls the owner. One connection per call; ``call_timeout`` bounds a call the owner is executing."""

    def __init__(self, socket_path: str, *, connect_timeout: float = 2.0, call_timeout: float = 600.0) -> None:
        self.socket_path = socket_path
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self._ids = 0

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self._ids += 1
        request = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params or {}}
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.settimeout(self.connect_timeout)
            try:
                connection.connect(self.socket_path)
            except OSError as exc:
                raise OwnerUnreachable(f"cannot connect to {self.socket_path}: {exc}") from exc
            connection.settimeout(self.call_timeout)
            try:
                connection.sendall(json.dumps(request, ensure_ascii=False).encode() + b"\n")
                line = _read_line(connection)
            except OSError as exc:
                raise OwnerLost(f"owner connection lost during {method}: {exc}") from exc
        finally:
            connection.close()
        if line is None:
            raise OwnerLost(f"owner closed the connection during {method}")
        reply = json.loads(line)
        error = reply.get("error")
        if error is None:
            return reply.get("result")
        data = error.get("data")
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            body = data["error"]
            raise ZaxyError(
                body.get("message", error.get("message", "owner error")),
                code=body.get("code"),
                field=body.get("field"),
                remediation=body.get("remediation"),
                details=body.get("details"),
            )
        if error.get("code") == METHOD_NOT_FOUND:
            raise LookupError(error.get("message", method))
        raise ZaxyError(
            f"the owner process failed: {error.get('message')}",
            code="internal_error",
            remediation="See the owner process's stderr log; retry the call.",
        )


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def _read_line(connection: socket.socket) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = connection.recv(1 << 16)
        if not chunk:
            return None
        newline = chunk.find(b"\n")
        if newline >= 0:
            chunks.append(chunk[:newline])
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_MESSAGE_BYTES:
            raise OSError("message too large")


def _same_user(connection: socket.socket) -> bool:
    """Linux: refuse peers of another uid (the 0600 socket mode already does, this is belt and braces)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    try:
        credentials = connection.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return False
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return uid == os.getuid()
