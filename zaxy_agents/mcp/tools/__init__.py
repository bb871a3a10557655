"""MCP tools, one module per family. :data:`TOOL_MODULES` is the list the server's tool table is built from:
adding a module here (one line) is how a new family of tools becomes callable."""

from . import (
    beliefs,
    causal,
    checkout,
    confidence,
    consolidation,
    coordinate,
    disclosure,
    erase,
    lifecycle,
    log,
    maintenance,
    meta,
    procedures,
    recall,
    synthesis,
)

TOOL_MODULES = (
    beliefs,
    causal,
    checkout,
    confidence,
    consolidation,
    coordinate,
    disclosure,
    erase,
    lifecycle,
    log,
    maintenance,
    meta,
    procedures,
    recall,
    synthesis,
)
