"""What the fabric's services share, and how the facade forwards its public methods to them.

``MemoryFabric`` owns one :class:`FabricCore` (settings, the storage backend object, the log, the feature
tables, ...) and builds its services from it in dependency order; a service receives the services it uses as
constructor arguments (never the fabric), so no service calls the facade back and construction order is the
only order there is.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

if TYPE_CHECKING:
    from zaxy_agents.config import ZaxySettings
    from zaxy_agents.eventloom.evidence import EvidenceCheck
    from zaxy_agents.eventloom.protocol import EventLog
    from zaxy_agents.eventloom.refs import MemoryRefs
    from zaxy_agents.retrieval.embeddings import EmbeddingProvider
    from zaxy_agents.storage.protocols import StorageBackend

    from .features import Features

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


class FabricCore:
    """The pieces every service reads; ``features`` may be swapped (e.g. to measure without extensions)."""

    def __init__(
        self,
        settings: ZaxySettings,
        backend: StorageBackend,
        log: EventLog,
        refs: MemoryRefs,
        features: Features,
        evidence_check: EvidenceCheck,
        embedder: EmbeddingProvider | None,
    ) -> None:
        self.settings = settings
        self.backend = backend
        self.log = log
        self.refs = refs
        self.features = features
        self.evidence_check = evidence_check
        self.embedder = embedder
        self.closers: list[Callable[[], None]] = []  # derived layers, closed last-opened first
        # Guards the first opening of this fabric's lazily opened layers (projector, retriever): threads using a
        # fresh fabric at once (a LangGraph Send fan-out) wait for the one that opens them. Re-entrant: opening
        # the retriever opens the projector.
        self.lazy_open = threading.RLock()


def core_attribute(name: str) -> Any:
    """A read-only property returning ``self.core.<name>`` (services and the facade hold no copies)."""
    return property(attrgetter(f"core.{name}"), doc=f"The fabric's {name} (from its core).")


class FabricService:
    """Base of the fabric's services: read access to the core pieces."""

    settings: ZaxySettings = core_attribute("settings")
    backend: StorageBackend = core_attribute("backend")
    log: EventLog = core_attribute("log")
    refs: MemoryRefs = core_attribute("refs")
    features: Features = core_attribute("features")
    evidence_check: EvidenceCheck = core_attribute("evidence_check")
    embedder: EmbeddingProvider | None = core_attribute("embedder")
    _closers: list[Callable[[], None]] = core_attribute("closers")

    def __init__(self, core: FabricCore) -> None:
        self.core = core


def forward(method: Callable[Concatenate[S, P], R], service: str) -> Callable[Concatenate[Any, P], R]:
    """``MemoryFabric.name = forward(Service.name, "service")``: the facade's method, same signature and docstring,
    calling the service the fabric holds under ``service``."""
    get = attrgetter(service)

    @functools.wraps(method)
    def call(fabric: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(get(fabric), *args, **kwargs)

    return call
