"""MemoryFabric: the one facade every surface (CLI, MCP, LangGraph, hooks) calls."""

from .core import MemoryFabric

__all__ = ["MemoryFabric"]
