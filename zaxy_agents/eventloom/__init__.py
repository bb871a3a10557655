"""Eventloom: the append-only, hash-chained source of truth.

Public names are loaded lazily so that importing a submodule (the hook fast path imports only the stdlib
parts) does not pull in pydantic.
"""

from __future__ import annotations

TYPE_CHECKING = False  # keep `typing` off the hook fast path
if TYPE_CHECKING:
    from typing import Any

    from .citations import Citation, format_citation, parse_citation
    from .models import Event, EventDraft, EventHead, SessionSummary, VerifyReport
    from .protocol import EventLog
    from .refs import MemoryRefs, RefTarget

_EXPORTS = {
    "Citation": ".citations",
    "format_citation": ".citations",
    "parse_citation": ".citations",
    "Event": ".models",
    "EventDraft": ".models",
    "EventHead": ".models",
    "SessionSummary": ".models",
    "VerifyReport": ".models",
    "EventLog": ".protocol",
    "MemoryRefs": ".refs",
    "RefTarget": ".refs",
}

__all__ = [
    "Citation",
    "Event",
    "EventDraft",
    "EventHead",
    "EventLog",
    "MemoryRefs",
    "RefTarget",
    "SessionSummary",
    "VerifyReport",
    "format_citation",
    "parse_citation",
]


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module_name, __name__), name)
