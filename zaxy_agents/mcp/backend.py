"""How this server process reaches memory: as the graph owner, as a proxy to the owner, or standalone.

Several ``zaxy serve`` processes may run on one workspace (IDE subagents, resumed sessions, an HTTP server next
to a stdio one). The embedded graph has a single read-write owner per file, so:

* **owner** — the first process claims ``<eventloom>/.zaxy/owner.lock`` (a kernel ``flock``, dropped when the
  process dies), opens the fabric in one dedicated thread and answers peers on a unix socket
  (``zaxy_agents.sharing.rpc``: one JSON-RPC request per connection, ``ping`` and ``tools/call``).
* **proxy** — later processes forward each validated tool call to the owner and never open the graph (they do
  not even import it). Lifecycle capture still appends locally (the log is multi-process safe).
* **standalone** — sharing is off or unsupported, or the owner cannot be reached within the grace period: the
  process opens its own fabric (log-only if the graph is locked) and says so in ``process.degraded``.

Hand-over: when the owner exits it stops accepting peers, unpublishes its socket and ``owner.json``, closes the
fabric (graph flushed, snapshot saved), then releases the lock. A proxy whose call finds the owner gone
re-elects: it claims ownership itself or reaches the new owner, and retries the call once if nothing was sent or
the tool is read-only (a write whose reply was lost is reported, never silently repeated). A standalone process
retries the election on later calls (at most every few seconds), so a fallback is temporary. No process ever
spawns another: nothing outlives the
``zaxy serve`` that started it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from zaxy_agents import __version__
from zaxy_agents.checkout.tokens import DEFAULT_ENCODING, get_encoding
from zaxy_agents.config import ZaxySettings
from zaxy_agents.errors import ZaxyError
from zaxy_agents.fabric import sharing

from .caller import Caller

logger = logging.getLogger("zaxy.mcp")
OWNER_GRACE_SECONDS = 5.0
REELECT_INTERVAL_SECONDS = 3.0
# A server starts following the graph of record after its first tool call, or after this long idle once warm: opening
# the graph (Kuzu, pyarrow, catching up) costs ~0.2-0.3 s of CPU that the first checkout should not wait for.
GRAPH_FOLLOW_IDLE_SECONDS = 2.0


class FabricRunner:
    """One thread owns the :class:`MemoryFabric`: it is opened there lazily and every call runs there in turn
    (the embedded graph wants one writer thread; the fabric's in-memory indexes want no concurrent mutation)."""

    def __init__(self, settings: ZaxySettings) -> None:
        self.settings = settings
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zaxy-fabric")
        self._fabric: Any = None
        self._follow_lock = threading.Lock()
        self._follow_queued = False
        self._follow_timer: threading.Timer | None = None

    def _open(self) -> Any:
        if self._fabric is None:
            from zaxy_agents.fabric import MemoryFabric

            self._fabric = MemoryFabric(self.settings)
        return self._fabric

    def call(self, function: Callable[[Any], Any]) -> Any:
        try:
            return self._pool.submit(lambda: function(self._open())).result()
        finally:
            self.follow_graph_soon()

    def warm(self) -> None:
        """Open the fabric, catch the projection up and build the token encoder in the background, so the first
        tool call is fast. Following the graph waits for the first call (or an idle moment): see
        :meth:`follow_graph_soon`."""

        def warm_up(fabric: Any) -> None:
            try:
                fabric.project()
                fabric.retriever  # noqa: B018 - builds the retriever
                get_encoding(DEFAULT_ENCODING)  # every budgeted checkout counts tokens (~0.1 s of CPU to build)
            except Exception:
                logger.exception("warm-up failed (the first call will retry)")
            with self._follow_lock:
                if not self._follow_queued:
                    self._follow_timer = threading.Timer(GRAPH_FOLLOW_IDLE_SECONDS, self.follow_graph_soon)
                    self._follow_timer.daemon = True
                    self._follow_timer.start()

        self._pool.submit(lambda: warm_up(self._open()))

    def follow_graph_soon(self) -> None:
        """Queue, once, keeping an existing graph of record current off the read path (``follow_graph``).

        Called after each tool call and by the idle timer the warm-up starts, whichever comes first: the first
        call never waits for the graph to open unless it needs the graph itself."""
        with self._follow_lock:
            if self._follow_queued:
                return
            self._follow_queued = True
            if self._follow_timer is not None:
                self._follow_timer.cancel()

        def follow(fabric: Any) -> None:
            try:
                fabric.projector.follow_graph()
            except Exception:
                logger.exception("following the graph failed (graph reads will catch it up)")

        with contextlib.suppress(RuntimeError):  # the runner is closing: nothing to follow any more
            self._pool.submit(lambda: follow(self._open()))

    def close(self) -> None:
        """Finish the call in progress, drop queued work (e.g. a warm-up not yet started), close the fabric."""
        with self._follow_lock:
            self._follow_queued = True  # nothing is queued after this
            if self._follow_timer is not None:
                self._follow_timer.cancel()
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._fabric is not None:
            self._fabric.close()
            self._fabric = None


class Backend:
    """The current role and the means to run a tool call under it (thread-safe; calls may come concurrently)."""

    def __init__(self, settings: ZaxySettings, *, share: bool = True, grace: float = OWNER_GRACE_SECONDS) -> None:
        self.settings = settings
        self.share = share and sharing.sharing_supported()
        self.grace = grace
        self.role = "starting"
        self.degraded: str | None = None
        self.peer_calls = 0
        self._lock = threading.RLock()
        self._runner: FabricRunner | None = None
        self._lease: sharing.OwnerLease | None = None
        self._peer_server: sharing.PeerServer | None = None
        self._client: sharing.PeerClient | None = None
        self._owner: dict[str, Any] | None = None
        self._last_election = 0.0
        self._closed = False

    # ------------------------------------------------------------------ roles
    def start(self) -> None:
        with self._lock:
            if not self.share:
                self._become_standalone(None)
                return
            self._elect(wait=self.grace)

    def _elect(self, wait: float) -> None:
        deadline = time.monotonic() + wait
        unreachable: str | None = None
        while True:
            try:
                lease = sharing.claim_ownership(self.settings)
            except OSError as exc:  # e.g. a read-only or foreign-owned derived folder
                self._become_standalone(f"cannot take part in the owner election: {exc}")
                return
            if lease is not None:
                self._become_owner(lease)
                return
            owner = sharing.find_owner(self.settings)
            if owner is not None:
                client = sharing.PeerClient(owner["socket"])
                try:
                    client.call("ping")
                except (sharing.OwnerUnreachable, sharing.OwnerLost, OSError, ValueError) as exc:
                    unreachable = f"owner pid {owner['pid']} unreachable: {exc}"
                else:
                    self._become_proxy(owner, client)
                    return
            if time.monotonic() >= deadline:
                self._become_standalone(unreachable or "the graph owner has not published its socket")
                return
            time.sleep(0.05)

    def _become_owner(self, lease: sharing.OwnerLease) -> None:
        self._drop_local()
        self._lease = lease
        self._runner = FabricRunner(self.settings)
        self._client, self._owner, self.degraded = None, None, None
        try:
            self._peer_server = sharing.serve_peers(lease, self._serve_peer, {"version": __version__})
        except OSError as exc:  # still the graph owner; other processes will report their fallback
            self.degraded = f"owner without a peer socket ({exc}): other processes run standalone"
        self._runner.warm()
        self.role = "owner"

    def _become_proxy(self, owner: dict[str, Any], client: sharing.PeerClient) -> None:
        self._drop_local()
        self._owner, self._client, self.degraded = owner, client, None
        self.role = "proxy"

    def _become_standalone(self, reason: str | None) -> None:
        if self._runner is None:
            self._runner = FabricRunner(self.settings)
            self._runner.warm()
        self._client, self._owner = None, None
        self.degraded = (
            None if reason is None else f"standalone: {reason}; this process opened its own fabric (see 'degraded')"
        )
        self.role = "standalone"
        self._last_election = time.monotonic()

    def _drop_local(self) -> None:
        """Close a fallback fabric before taking another role (it may hold the graph read-only or log-only)."""
        if self._runner is not None and self._lease is None:
            self._runner.close()
            self._runner = None

    # ------------------------------------------------------------------ calls
    def execute(self, name: str, arguments: dict[str, Any], caller: Caller, *, read_only: bool) -> dict[str, Any]:
        """Run a prepared tool call under the current role (blocking; call from a worker thread)."""
        from .executor import execute

        for attempt in (1, 2):
            with self._lock:
                if self._closed:
                    raise ZaxyError("the server is shutting down", code="internal_error", remediation="Retry.")
                if self.role == "standalone" and self.share:
                    self._maybe_upgrade()
                role, runner, client, owner = self.role, self._runner, self._client, self._owner
            if role in ("owner", "standalone"):
                assert runner is not None
                return runner.call(lambda fabric: execute(fabric, name, arguments, caller))
            assert client is not None and owner is not None
            try:
                return client.call("tools/call", {"name": name, "arguments": arguments, "caller": caller.to_wire()})
            except sharing.OwnerUnreachable:
                self._reelect(owner)
            except sharing.OwnerLost as exc:
                self._reelect(owner)
                if not read_only:
                    raise ZaxyError(
                        f"the graph owner (pid {owner['pid']}) went away while running {name}",
                        code="internal_error",
                        remediation="The call may or may not have been applied: check with memory_checkout or "
                        "memory_replay before repeating it.",
                        details={"cause": str(exc)},
                    ) from exc
            if attempt == 2:
                break
        raise ZaxyError(
            "the graph owner could not be reached",
            code="internal_error",
            remediation="Retry; if it persists, stop stale `zaxy serve` processes for this workspace.",
        )

    def _reelect(self, lost_owner: dict[str, Any]) -> None:
        with self._lock:
            if self._owner is lost_owner:  # another thread may have re-elected already
                self._elect(wait=self.grace)

    def _maybe_upgrade(self) -> None:
        if time.monotonic() - self._last_election < REELECT_INTERVAL_SECONDS:
            return
        self._last_election = time.monotonic()
        lease = sharing.claim_ownership(self.settings)
        if lease is not None:
            self._become_owner(lease)
            return
        owner = sharing.find_owner(self.settings)
        if owner is not None:
            client = sharing.PeerClient(owner["socket"])
            try:
                client.call("ping")
            except (ConnectionError, OSError, ValueError):
                return
            self._become_proxy(owner, client)

    def _serve_peer(self, method: str, params: dict[str, Any]) -> Any:
        """The owner's answer to a peer: ``ping`` directly, ``tools/call`` on the fabric thread."""
        if method == "ping":
            return {"pid": os.getpid(), "version": __version__, "role": self.role}
        if method == "tools/call":
            from .executor import execute

            runner = self._runner
            if runner is None or self.role != "owner":
                raise ZaxyError("this process no longer owns the graph", code="internal_error", remediation="Retry.")
            self.peer_calls += 1
            caller = Caller.from_wire(params["caller"])
            return runner.call(lambda fabric: execute(fabric, params["name"], params.get("arguments") or {}, caller))
        raise LookupError(f"unknown method {method!r}")

    # ------------------------------------------------------------------ reporting and shutdown
    def describe(self) -> dict[str, Any]:
        """How this process reaches memory (reported by memory_capabilities)."""
        with self._lock:
            info: dict[str, Any] = {"role": self.role, "pid": os.getpid()}
            if self.role == "owner":
                info["graph_access"] = "owner: this process opened the graph and serves other processes"
                info["socket"] = self._lease.socket_path if self._lease else None
                info["peer_calls_served"] = self.peer_calls
            elif self.role == "proxy" and self._owner is not None:
                info["graph_access"] = f"proxy: forwards calls to the owner pid {self._owner['pid']} over a unix socket"
                info["owner_pid"] = self._owner["pid"]
                info["socket"] = self._owner["socket"]
            else:
                info["graph_access"] = "standalone: this process opened its own fabric"
            if self.degraded:
                info["degraded"] = self.degraded
            return info

    def close(self) -> None:
        """Hand over cleanly: stop serving peers, close the fabric, then release ownership."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._peer_server is not None:
                self._peer_server.close()
                self._peer_server = None
            if self._lease is not None:
                self._lease.unpublish()  # nothing stale is left even if closing the fabric is cut short
            if self._runner is not None:
                self._runner.close()
                self._runner = None
            if self._lease is not None:
                self._lease.release()
                self._lease = None
            self.role = "closed"
