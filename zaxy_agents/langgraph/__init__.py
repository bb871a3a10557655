"""LangGraph surface: drop-in ``ZaxyStore`` (``BaseStore``) and ``ZaxyCheckpointer`` (``BaseCheckpointSaver``).

```python
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore

graph = builder.compile(
    checkpointer=ZaxyCheckpointer.from_path(".eventloom"),
    store=ZaxyStore.from_path(".eventloom"),
)
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .checkpointer import ZaxyCheckpointer
    from .store import ZaxyStore

__all__ = ["ZaxyCheckpointer", "ZaxyStore"]


def __getattr__(name: str) -> Any:
    if name == "ZaxyStore":
        from .store import ZaxyStore

        return ZaxyStore
    if name == "ZaxyCheckpointer":
        from .checkpointer import ZaxyCheckpointer

        return ZaxyCheckpointer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
