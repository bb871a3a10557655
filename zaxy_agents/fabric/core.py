"""The MemoryFabric facade: surfaces call this; it owns the log and (lazily) the derived layers.

Data flows one way: surfaces -> fabric -> domain -> storage. The facade is assembled from one mixin per
feature area (``log_ops``, ...) so each area lives in a small module; heavy layers (graph projection,
indexes) are opened on first use so that cheap operations (append, replay, verify) stay cheap.
"""

from __future__ import annotations

import os
from typing import Any

from zaxy_agents.config import ZaxySettings
from zaxy_agents.eventloom.evidence import EvidenceCheck
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.eventloom.refs import MemoryRefs
from zaxy_agents.retrieval.embeddings import resolve_embedder
from zaxy_agents.storage.protocols import StorageBackend
from zaxy_agents.storage.registry import DEFAULT_REGISTRY

from .backend_ops import BackendOperations
from .belief_ops import BeliefOperations
from .capture_ops import CaptureOperations
from .checkout_ops import CheckoutOperations
from .checkpoint_ops import CheckpointOperations
from .cognitive_ops import CognitiveOperations
from .confidence_ops import ConfidenceOperations
from .conversation_ops import ConversationOperations
from .coordinate_ops import CoordinateOperations
from .disclosure_ops import DisclosureOperations
from .erase_ops import EraseOperations
from .features import Features, builtin_features
from .guard import guard_public_methods
from .inspector_ops import InspectorOperations
from .integrity_ops import IntegrityOperations
from .lifecycle_ops import LifecycleOperations
from .log_ops import LogOperations
from .metacognition_ops import MetacognitionOperations
from .procedure_ops import ProcedureOperations
from .projection_ops import ProjectionOperations
from .reasoning_ops import ReasoningOperations
from .retrieval_ops import RetrievalOperations
from .store_ops import StoreOperations
from .synthesis_ops import SynthesisOperations
from .workingset_ops import WorkingSetOperations


class MemoryFabric(
    LogOperations,
    ProjectionOperations,
    RetrievalOperations,
    CheckoutOperations,
    WorkingSetOperations,
    CaptureOperations,
    StoreOperations,
    CheckpointOperations,
    BackendOperations,
    MetacognitionOperations,
    ConfidenceOperations,
    BeliefOperations,
    SynthesisOperations,
    ReasoningOperations,
    ProcedureOperations,
    LifecycleOperations,
    ConversationOperations,
    CognitiveOperations,
    CoordinateOperations,
    DisclosureOperations,
    IntegrityOperations,
    EraseOperations,
    InspectorOperations,
):
    """Memory for agents: cited, replayable, honest about what it knows."""

    def __init__(
        self,
        settings: ZaxySettings,
        *,
        log: EventLog | None = None,
        embedder: Any = None,
        backend: StorageBackend | None = None,
    ) -> None:
        """``backend``: the storage backend object (default: the one ``settings`` names, from the registry);
        ``log``: an already open log to use instead of the backend's own (the caller closes nothing else)."""
        self.settings = settings
        self.embedder = resolve_embedder(embedder if embedder is not None else settings.embedder)
        self.backend = backend if backend is not None else DEFAULT_REGISTRY.open(settings)
        self.log = log or self.backend.open_log()
        self.features: Features = builtin_features()
        self.evidence_check = EvidenceCheck(self.log)
        self.refs = MemoryRefs(self.log)
        self._closers: list[Any] = []
        self._projector = None
        self._retriever = None

    @classmethod
    def from_path(
        cls, eventloom_path: str | os.PathLike[str] | None = None, *, embedder: Any = None, **overrides: Any
    ) -> MemoryFabric:
        """Open the configured backend (``ZAXY_BACKEND`` / ``backend=``; default the embedded log at
        ``eventloom_path``, ``ZAXY_EVENTLOOM_PATH`` or ``.eventloom``).

        ``embedder``: a LangChain ``Embeddings``, a callable, or a provider string (see
        ``zaxy_agents.retrieval.embeddings.resolve_embedder``); default ``ZAXY_EMBEDDER`` or none.
        """
        return cls(ZaxySettings.resolve(eventloom_path, **overrides), embedder=embedder)

    @classmethod
    def for_maintenance(cls, settings: ZaxySettings, *, apply_migrations: bool = False) -> MemoryFabric:
        """A fabric that opens even when the schema needs migrating (``skip``), or migrates it first: every
        component sharing the backend's schema (on PostgreSQL the Eventloom, then the graph projection)."""
        backend = DEFAULT_REGISTRY.open(settings)
        applied = backend.migrate() if apply_migrations else []
        fabric = cls(settings, log=backend.open_log(schema_mode="skip"), backend=backend)
        fabric._applied_migrations = tuple(applied)
        return fabric

    def _projection_listeners(self) -> list[Any]:
        return self._retrieval_listeners()

    @property
    def location(self) -> str:
        """Where this memory lives, safe to print: the folder, or the backend URI without its password."""
        return self.backend.location

    def close(self) -> None:
        """Close derived layers first (they may flush), then the log, then what the backend opened itself."""
        while self._closers:
            self._closers.pop()()
        self.log.close()
        self.backend.close()

    def __enter__(self) -> MemoryFabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


guard_public_methods(MemoryFabric)  # the Python API checks its arguments like every other surface (guard.py)
