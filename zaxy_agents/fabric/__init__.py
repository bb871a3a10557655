"""MemoryFabric: the one facade every surface (CLI, MCP, LangGraph, hooks) calls.

``MemoryFabric`` is imported lazily so ``zaxy_agents.fabric.light`` (the stdlib-only hook path) stays cheap.
"""

from __future__ import annotations

TYPE_CHECKING = False  # keep `typing` off the hook fast path
if TYPE_CHECKING:
    from typing import Any

    from zaxy_agents.storage.status import BackendStatus

    from .core import MemoryFabric

__all__ = ["BackendStatus", "MemoryFabric"]


def __getattr__(name: str) -> Any:
    if name == "MemoryFabric":
        from .core import MemoryFabric

        return MemoryFabric
    if name == "BackendStatus":  # the answer of MemoryFabric.backend_status(), for surfaces' type hints
        from zaxy_agents.storage.status import BackendStatus

        return BackendStatus
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
