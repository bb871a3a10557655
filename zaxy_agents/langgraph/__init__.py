"""LangGraph surface: drop-in store and checkpointer, memory nodes, agent middleware and memory tools.

```python
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore

graph = builder.compile(
    checkpointer=ZaxyCheckpointer.from_path(".eventloom"),
    store=ZaxyStore.from_path(".eventloom"),
)
```

Memory for an agent: ``ZaxyMemoryMiddleware`` (``create_agent``), the nodes in
:mod:`zaxy_agents.langgraph.nodes` (any ``StateGraph``), the tools from :func:`memory_tools`. See
docs/langgraph.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .beliefs import belief_tools
    from .checkpointer import AsyncZaxyCheckpointer, ZaxyCheckpointer
    from .cognitive import cognitive_tools
    from .context import MemoryContext, with_memory
    from .metacognition import metacognition_tools
    from .middleware import ZaxyMemoryMiddleware
    from .nodes import ZaxyMemoryState, capture_node, checkout_node, compaction_node, feedback_node
    from .procedures import procedure_tools
    from .scoping import MemoryScope, memory_session
    from .store import AsyncZaxyStore, ZaxyStore
    from .synthesis import synthesis_tools
    from .tools import ZaxyTool, memory_tools

_EXPORTS = {
    "ZaxyCheckpointer": "checkpointer",
    "AsyncZaxyCheckpointer": "checkpointer",
    "ZaxyStore": "store",
    "AsyncZaxyStore": "store",
    "ZaxyMemoryMiddleware": "middleware",
    "ZaxyMemoryState": "nodes",
    "checkout_node": "nodes",
    "capture_node": "nodes",
    "compaction_node": "nodes",
    "feedback_node": "nodes",
    "MemoryContext": "context",
    "with_memory": "context",
    "MemoryScope": "scoping",
    "memory_session": "scoping",
    "ZaxyTool": "tools",
    "memory_tools": "tools",
    "cognitive_tools": "cognitive",
    "metacognition_tools": "metacognition",
    "belief_tools": "beliefs",
    "synthesis_tools": "synthesis",
    "procedure_tools": "procedures",
}
__all__ = [
    "AsyncZaxyCheckpointer",
    "AsyncZaxyStore",
    "MemoryContext",
    "MemoryScope",
    "ZaxyCheckpointer",
    "ZaxyMemoryMiddleware",
    "ZaxyMemoryState",
    "ZaxyStore",
    "ZaxyTool",
    "belief_tools",
    "capture_node",
    "checkout_node",
    "cognitive_tools",
    "compaction_node",
    "feedback_node",
    "memory_session",
    "memory_tools",
    "metacognition_tools",
    "procedure_tools",
    "synthesis_tools",
    "with_memory",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
