"""What the fabric's services share, and how the facade forwards its public methods to them.

``MemoryFabric`` owns one :class:`FabricCore` (settings, the storage backend object, the log, the feature
tables, ...) and declares each service as a :class:`lazy_service`: built from the core on first use, taking the
services it uses as constructor arguments (never the fabric), so no service calls the facade back and the
dependencies are the only order there is. Built on first use because a fresh process that opens a memory for
one job (a LangGraph store: one service of ~25) paid for all of them, and for the feature tables, in its open
(docs/benchmarks.md, "ZaxyStore open + first get").
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

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
        features: Features | None,
        evidence_check: EvidenceCheck,
        embedder: EmbeddingProvider | None,
    ) -> None:
        """``features``: ``None`` for the built-in tables, built on first use (see :attr:`features`)."""
        self.settings = settings
        self.backend = backend
        self.log = log
        self.refs = refs
        self._features = features
        self._features_lock = threading.Lock()
        self.evidence_check = evidence_check
        self.embedder = embedder
        self.closers: list[Callable[[], None]] = []  # derived layers, closed last-opened first
        # Derived stores open in this process, told ``hook(session)`` after an erasure scrubbed a session's log
        # (``EraseService.on_erase``). Kept here, like the closers, so a store service registers its stores without
        # building the erasure service and the projection it takes (~45 us of a fresh process's store open).
        self.erase_hooks: list[Callable[[str], None]] = []
        # Item stores open in this process, asked ``locator(session, keys)`` where a store delete's events are
        # (``EraseService.on_locate``; zaxy_agents/itemstore/versions.py), kept here for the same reason.
        self.erase_locators: list[Callable[[str, list[tuple[tuple[str, ...], str]]], tuple[list[int], int] | None]] = []
        # Guards the first opening of this fabric's lazily opened layers (projector, retriever): threads using a
        # fresh fabric at once (a LangGraph Send fan-out) wait for the one that opens them. Re-entrant: opening
        # the retriever opens the projector.
        self.lazy_open = threading.RLock()
        # Guards building the fabric's services (lazy_service): threads asking for one at once get the same one.
        # Re-entrant: building a service builds the services it takes. Separate from ``lazy_open`` so a thread
        # opening the projector (which may wait on other threads) never holds up a service being built.
        self.services_lock = threading.RLock()

    @property
    def features(self) -> Features:
        """The feature tables; the built-in ones are built on first use (collecting them from ~20 modules cost
        ~0.25 ms of a fresh process's open; a store or checkpointer never reads them), once per core."""
        features = self._features
        if features is None:
            with self._features_lock:
                features = self._features
                if features is None:
                    from .features import builtin_features

                    features = self._features = builtin_features()
        return features

    @features.setter
    def features(self, features: Features) -> None:
        self._features = features


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


class lazy_service(Generic[S]):  # lower case, like ``property``
    """A fabric attribute holding a service, built by ``build(fabric)`` on first use and then kept.

    Building runs under the core's ``services_lock`` and checks again inside it, so threads asking at once get
    the one service; afterwards the service sits in the fabric's ``__dict__``, which Python reads before this
    (non-data) descriptor, so later reads cost a plain attribute lookup.
    """

    def __init__(self, build: Callable[[Any], S]) -> None:
        self.build = build
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, fabric: None, owner: type | None = None) -> lazy_service[S]: ...
    @overload
    def __get__(self, fabric: object, owner: type | None = None) -> S: ...
    def __get__(self, fabric: Any, owner: type | None = None) -> S | lazy_service[S]:
        if fabric is None:
            return self
        with fabric.core.services_lock:
            built = fabric.__dict__.get(self.name)
            if built is None:
                built = fabric.__dict__[self.name] = self.build(fabric)
        return built  # type: ignore[no-any-return]


def forward(method: Callable[Concatenate[S, P], R], service: str) -> Callable[Concatenate[Any, P], R]:
    """``MemoryFabric.name = forward(Service.name, "service")``: the facade's method, same signature and docstring,
    calling the service the fabric holds under ``service``."""
    get = attrgetter(service)

    @functools.wraps(method)
    def call(fabric: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(get(fabric), *args, **kwargs)

    return call
