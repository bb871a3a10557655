"""Extractor tables: which deterministic extractor projects each event type.

``@register("task.completed")`` only *labels* a function with the event types it handles (no import side
effect). An :class:`ExtractorTable` is built explicitly from a list of modules — the built-in one in
:mod:`zaxy_agents.fabric.features` — and passed to whoever projects (the projector, shared-store catch-up).

Lookup order: the exact type, then the longest ``prefix.*`` wildcard, then the generic extractor (one event
entity). An extractor that cannot use a payload raises :class:`ExtractionFailed`; the projection then records
an ``extraction.failed`` diagnostic and still projects the generic entity, so nothing is silently dropped and
the append is never blocked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from zaxy_agents.labels import label_of, labelled, put_label

from .fold import folded
from .model import Extraction

Extractor = Callable[[dict[str, Any]], Extraction]
EVENT_TYPES = "zaxy_event_types"  # the label @register puts on a function
PRODUCES_NOTHING = "zaxy_produces_nothing"  # the label @produces_nothing puts on an extractor
MAX_CACHED_TYPES = 4096  # event types whose extractor lookup is remembered (types are few; this bounds odd logs)


class ExtractionFailed(ValueError):
    """The payload does not have what this event type's extractor needs."""


def register(*event_types: str) -> Callable[[Extractor], Extractor]:
    """Label an extractor with exact types (``task.created``) or prefixes (``hook.*``); tables collect it."""

    def label(function: Extractor) -> Extractor:
        put_label(function, EVENT_TYPES, event_types)
        return function

    return label


def produces_nothing(function: Extractor) -> Extractor:
    """Label an extractor that returns an empty :class:`Extraction` for every payload (bookkeeping types).

    The projection then never calls it: an event of such a type (unless it is a folded duplicate) gets an empty
    extraction straight from its type, and the planner writes only its Event rows. A function that may return
    anything for some payload must not carry this label (tests/projection/test_silent_types.py checks both).
    """
    put_label(function, PRODUCES_NOTHING, True)
    return function


class ExtractorTable:
    """Event type -> extractor, built once from explicit modules; later modules may override earlier ones."""

    def __init__(self, extractors: Iterable[Extractor], generic: Extractor) -> None:
        self._exact: dict[str, Extractor] = {}
        self._prefix: dict[str, Extractor] = {}
        self._generic = generic
        # Event type -> (its extractor or None for the generic one, whether it produces nothing): the prefix scan
        # of ``extractor_for`` ran for every event of a ``prefix.*`` type (checkpoints, metacognition...).
        self._by_type: dict[str, tuple[Extractor | None, bool]] = {}
        for function in extractors:
            for event_type in label_of(function, EVENT_TYPES):
                if event_type.endswith(".*"):
                    self._prefix[event_type[:-1]] = function
                else:
                    self._exact[event_type] = function

    @classmethod
    def from_modules(cls, modules: Iterable[ModuleType], generic: Extractor) -> ExtractorTable:
        return cls(labelled(modules, EVENT_TYPES), generic)

    def extractor_for(self, event_type: str) -> Extractor | None:
        """The extractor for a type, or ``None`` when only the generic one applies."""
        return self._lookup(event_type)[0]

    def produces_nothing(self, event_type: str) -> bool:
        """Whether events of this type project nothing but their Event rows (their extractor is labelled
        :func:`produces_nothing`); a folded duplicate of such a type still reinforces (see :meth:`extract`)."""
        return self._lookup(event_type)[1]

    def _lookup(self, event_type: str) -> tuple[Extractor | None, bool]:
        known = self._by_type.get(event_type)
        if known is not None:
            return known
        function = self._find(event_type)
        known = (function, function is not None and getattr(function, PRODUCES_NOTHING, False) is True)
        if len(self._by_type) < MAX_CACHED_TYPES:
            self._by_type[event_type] = known
        return known

    def _find(self, event_type: str) -> Extractor | None:
        function = self._exact.get(event_type)
        if function is not None:
            return function
        best = ""
        for prefix in self._prefix:
            if event_type.startswith(prefix) and len(prefix) > len(best):
                best = prefix
        return self._prefix[best] if best else None

    def registered_types(self) -> dict[str, str]:
        """Type pattern -> extractor name (for docs and `zaxy memory status`)."""
        table = {event_type: function.__name__ for event_type, function in self._exact.items()}
        table.update({f"{prefix}*": function.__name__ for prefix, function in self._prefix.items()})
        return dict(sorted(table.items()))

    def extract(self, envelope: dict[str, Any]) -> Extraction:
        """Run the extractor for one envelope; failures degrade to the generic entity plus a diagnostic."""
        if "erased" in envelope:  # an erased event (or a tombstone): its content is gone, nothing to project
            return Extraction()
        fold = folded(envelope)  # a gated duplicate reinforces the memory it repeats instead of competing with it
        if fold is not None:
            return fold
        function, silent = self._lookup(envelope["type"])
        if silent:  # a bookkeeping type: nothing to extract, whatever its payload holds
            return Extraction()
        if function is None:
            return self._generic(envelope)
        try:
            return function(envelope)
        except (ExtractionFailed, KeyError, TypeError, ValueError, AttributeError) as exc:
            fallback = self._generic(envelope)
            fallback.failures.append(f"{function.__name__}: {exc}")
            return fallback
