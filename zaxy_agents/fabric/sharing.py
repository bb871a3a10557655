"""Process sharing for surfaces: who owns this Eventloom's graph, and how to reach the owner.

Stdlib-only like :mod:`zaxy_agents.fabric.light`, so a server process that only forwards calls to the owner never
loads the graph, numpy or the projection. Surfaces use these functions instead of touching ``<eventloom>/.zaxy/``.
"""

from __future__ import annotations

from zaxy_agents.config import ZaxySettings
from zaxy_agents.sharing.election import (
    INFO_FILE,
    LOCK_FILE,
    PROTOCOL_VERSION,
    OwnerLease,
    pid_alive,
    read_owner,
    sharing_supported,
    try_claim,
)
from zaxy_agents.sharing.rpc import Handler, OwnerLost, OwnerUnreachable, PeerClient, PeerServer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "INFO_FILE",
    "LOCK_FILE",
    "PROTOCOL_VERSION",
    "OwnerLease",
    "OwnerLost",
    "OwnerUnreachable",
    "PeerClient",
    "PeerServer",
    "claim_ownership",
    "find_owner",
    "pid_alive",
    "read_owner",
    "serve_peers",
    "sharing_supported",
    "try_claim",
]


def claim_ownership(settings: ZaxySettings) -> OwnerLease | None:
    """Become the process that owns ``settings``' derived state (graph), or ``None`` when a live one exists."""
    return try_claim(settings.derived_path)


def find_owner(settings: ZaxySettings) -> dict[str, Any] | None:
    """The published owner of ``settings``' derived state when its pid is alive and it speaks our protocol."""
    record = read_owner(settings.derived_path)
    if record is None or not pid_alive(record["pid"]) or record.get("protocol") != PROTOCOL_VERSION:
        return None
    return record


def serve_peers(lease: OwnerLease, handler: Handler, extra: dict[str, Any] | None = None) -> PeerServer:
    """Listen for peers on the lease's socket and publish ``owner.json`` once listening."""
    server = PeerServer(lease.socket_path, handler)
    server.start()
    lease.publish(extra)
    return server
