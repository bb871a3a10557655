"""The extractor registry: ``@register("task.completed")`` maps event types to deterministic extractors.

Lookup order: the exact type, then the longest registered ``prefix.*`` wildcard, then the generic extractor
(one event entity). An extractor that cannot use a payload raises :class:`ExtractionFailed`; the projection
then records an ``extraction.failed`` diagnostic and still projects the generic entity, so nothing is silently
dropped and the append is never blocked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .model import Extraction

Extractor = Callable[[dict[str, Any]], Extraction]

_EXACT: dict[str, Extractor] = {}
_PREFIX: dict[str, Extractor] = {}


class ExtractionFailed(ValueError):
    """The payload does not have what this event type's extractor needs."""


def register(*event_types: str) -> Callable[[Extractor], Extractor]:
    """Register an extractor for exact types (``task.created``) or prefixes (``hook.*``)."""

    def decorate(function: Extractor) -> Extractor:
        for event_type in event_types:
            if event_type.endswith(".*"):
                _PREFIX[event_type[:-1]] = function
            else:
                _EXACT[event_type] = function
        return function

    return decorate


def _ensure_builtins() -> None:
    from . import extractors  # noqa: F401 - importing registers the built-in extractors


def extractor_for(event_type: str) -> Extractor | None:
    """The registered extractor for a type, or ``None`` when only the generic one applies."""
    _ensure_builtins()
    function = _EXACT.get(event_type)
    if function is not None:
        return function
    best = ""
    for prefix in _PREFIX:
        if event_type.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return _PREFIX[best] if best else None


def registered_types() -> dict[str, str]:
    """Type pattern -> extractor name (for docs and `zaxy memory status`)."""
    _ensure_builtins()
    table = {event_type: function.__name__ for event_type, function in _EXACT.items()}
    table.update({f"{prefix}*": function.__name__ for prefix, function in _PREFIX.items()})
    return dict(sorted(table.items()))


def extract(envelope: dict[str, Any]) -> Extraction:
    """Run the extractor for one event envelope; failures degrade to the generic entity plus a diagnostic."""
    from .extractors import generic

    if "erased" in envelope:  # an erased event (or a tombstone): its content is gone, nothing to project
        return Extraction()
    function = extractor_for(envelope["type"])
    if function is None:
        return generic.generic_event(envelope)
    try:
        return function(envelope)
    except (ExtractionFailed, KeyError, TypeError, ValueError, AttributeError) as exc:
        fallback = generic.generic_event(envelope)
        fallback.failures.append(f"{function.__name__}: {exc}")
        return fallback
