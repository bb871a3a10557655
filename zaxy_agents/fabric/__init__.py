"""MemoryFabric: the one facade every surface (CLI, MCP, LangGraph, hooks) calls, and the public types its
answers use that surfaces may name in type hints (they never import storage modules themselves).

Names are imported lazily so ``zaxy_agents.fabric.light`` (the stdlib-only hook path) stays cheap.
"""

from __future__ import annotations

TYPE_CHECKING = False  # keep `typing` off the hook fast path
if TYPE_CHECKING:
    from typing import Any

    from zaxy_agents.storage.status import BackendStatus
    from zaxy_agents.storage.transfer import TransferResult

    from .core import MemoryFabric

_EXPORTS = {
    "MemoryFabric": "zaxy_agents.fabric.core",
    "BackendStatus": "zaxy_agents.storage.status",  # MemoryFabric.backend_status()
    "TransferResult": "zaxy_agents.storage.transfer",  # MemoryFabric.export_jsonl() / import_jsonl()
}

__all__ = ["BackendStatus", "MemoryFabric", "TransferResult"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return import_module(module).__dict__[name]
