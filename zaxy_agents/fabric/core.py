"""The MemoryFabric facade: surfaces call this; it owns the storage backend, the log and the services.

Data flows one way: surfaces -> fabric -> domain -> storage. The fabric is composed of services it owns, one
per feature area (``log_ops.LogService``, ``projection_ops.ProjectionService``, ...), each built on first use
(``service.lazy_service``): each service gets the core pieces and the services it uses, never the fabric, so no
service calls the facade back. The public methods forward to them (same names, signatures and docstrings as ever).
Heavy layers (graph projection, indexes) open on first use so cheap operations (append, replay) stay cheap.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

from zaxy_agents.config import ZaxySettings
from zaxy_agents.coordinate.proofs import SynthesisPort
from zaxy_agents.coordinate.service import CoordinateService
from zaxy_agents.eventloom.evidence import EvidenceCheck
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.eventloom.refs import MemoryRefs
from zaxy_agents.retrieval.cues import checked_cues
from zaxy_agents.retrieval.embeddings import EmbeddingProvider, resolve_embedder
from zaxy_agents.retrieval.engine import Retriever
from zaxy_agents.storage.protocols import StorageBackend
from zaxy_agents.storage.registry import DEFAULT_REGISTRY

from .backend_ops import BackendService
from .belief_ops import BeliefService
from .capture_ops import CaptureService
from .causal_ops import CausalService
from .checkout_ops import CheckoutService
from .checkpoint_ops import CheckpointService
from .cognitive_ops import CognitiveService
from .confidence_ops import ConfidenceService
from .conversation_ops import ConversationService
from .disclosure_ops import DisclosureService
from .erase_ops import EraseService
from .features import Features
from .guard import guard_public_methods
from .inspector_entities import InspectorEntityService
from .inspector_ops import InspectorService
from .integrity_ops import IntegrityService
from .lifecycle_ops import LifecycleService
from .log_ops import LogService
from .metacognition_ops import MetacognitionService
from .procedure_ops import ProcedureService
from .projection_ops import ProjectionService
from .reasoning_ops import ReasoningService
from .retrieval_ops import RetrievalService, retrieval_listeners
from .salience_ops import SalienceService
from .service import FabricCore, core_attribute, forward, lazy_service
from .store_ops import StoreService
from .synthesis_ops import SynthesisService
from .uncertainty_ops import UncertaintyService
from .workingset_ops import WorkingSetService

if TYPE_CHECKING:
    from zaxy_agents.projection.projector import Projector


class MemoryFabric:
    """Memory for agents: cited, replayable, honest about what it knows."""

    def __init__(
        self,
        settings: ZaxySettings,
        *,
        log: EventLog | None = None,
        embedder: Any = None,
        backend: StorageBackend | None = None,
        applied_migrations: tuple[str, ...] = (),
    ) -> None:
        """``backend``: the storage backend object (default: the one ``settings`` names, from the registry);
        ``log``: an already open log to use instead of the backend's own (the caller closes nothing else)."""
        backend = backend if backend is not None else DEFAULT_REGISTRY.open(settings)
        log = log or backend.open_log()
        self.core = FabricCore(
            settings,
            backend,
            log,
            MemoryRefs(log),
            None,  # the built-in feature tables, built on first use
            EvidenceCheck(log),
            resolve_embedder(embedder if embedder is not None else settings.embedder),
        )
        self._applied_migrations = applied_migrations

    # ------------------------------------------------------------------ the services, each built on first use
    # Each gets the core and the services it uses, never the fabric (so building one builds what it takes).
    events = lazy_service(lambda f: LogService(f.core))
    projection = lazy_service(lambda f: ProjectionService(f.core, functools.partial(retrieval_listeners, f.core)))
    retrieval = lazy_service(lambda f: RetrievalService(f.core, f.projection))
    working_sets = lazy_service(lambda f: WorkingSetService(f.core))
    erasure = lazy_service(lambda f: EraseService(f.core, f.projection, f.working_sets))
    integrity = lazy_service(lambda f: IntegrityService(f.core, f.projection, f.erasure))
    checkouts = lazy_service(lambda f: CheckoutService(f.core, f.events, f.projection, f.retrieval, f.integrity))
    capture = lazy_service(lambda f: CaptureService(f.core))
    stores = lazy_service(lambda f: StoreService(f.core))
    checkpoints = lazy_service(lambda f: CheckpointService(f.core))
    storage = lazy_service(lambda f: BackendService(f.core, f._applied_migrations))
    metacognition = lazy_service(lambda f: MetacognitionService(f.core, f.events, f.projection, f.retrieval))
    lifecycle = lazy_service(lambda f: LifecycleService(f.core, f.events, f.projection, f.checkouts))
    conversation = lazy_service(
        lambda f: ConversationService(f.core, f.events, f.projection, f.checkouts, f.working_sets, f.erasure)
    )
    cognitive = lazy_service(lambda f: CognitiveService(f.core, f.events, f.projection))
    causal = lazy_service(lambda f: CausalService(f.core, f.events, f.projection, f.cognitive))
    confidence = lazy_service(lambda f: ConfidenceService(f.core, f.events, f.projection, f.cognitive))
    uncertainty = lazy_service(lambda f: UncertaintyService(f.core, f.events, f.projection, f.confidence))
    beliefs = lazy_service(lambda f: BeliefService(f.core, f.events, f.projection, f.cognitive, f.confidence))
    synthesis = lazy_service(lambda f: SynthesisService(f.core, f.events, f.projection))
    salience = lazy_service(lambda f: SalienceService(f.core, f.events, f.projection, f.retrieval, f.beliefs))
    coordination = lazy_service(
        lambda f: CoordinateService(
            f.core.log,
            f.events.append_many,
            SynthesisPort(record=f.synthesis.record_synthesis_artifact, read=f.synthesis.synthesis_artifact),
            reinforce=f.salience.reinforce_promotion,
        )
    )
    reasoning = lazy_service(lambda f: ReasoningService(f.core, f.events))
    procedures = lazy_service(lambda f: ProcedureService(f.core, f.projection, f.cognitive, f.lifecycle))
    disclosure = lazy_service(lambda f: DisclosureService(f.core, f.retrieval))
    inspector = lazy_service(lambda f: InspectorService(f.core, f.events, f.projection))
    inspector_entities = lazy_service(lambda f: InspectorEntityService(f.core, f.projection))

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
        applied = tuple(backend.migrate()) if apply_migrations else ()
        return cls(settings, log=backend.open_log(schema_mode="skip"), backend=backend, applied_migrations=applied)

    graph_schema_plan = staticmethod(BackendService.graph_schema_plan)
    checked_cues = staticmethod(checked_cues)

    # ------------------------------------------------------------------ the core pieces
    settings: ZaxySettings = core_attribute("settings")
    backend: StorageBackend = core_attribute("backend")
    log: EventLog = core_attribute("log")
    refs: MemoryRefs = core_attribute("refs")
    embedder: EmbeddingProvider | None = core_attribute("embedder")
    evidence_check: EvidenceCheck = core_attribute("evidence_check")

    @property
    def features(self) -> Features:
        return self.core.features

    @features.setter
    def features(self, features: Features) -> None:
        """Swap the feature tables (benchmarks measure checkout with and without its extensions)."""
        self.core.features = features

    @property
    def location(self) -> str:
        """Where this memory lives, safe to print: the folder, or the backend URI without its password."""
        return self.backend.location

    @property
    def projector(self) -> Projector:
        """The projection of the log (opened on first use: Kuzu loads only for commands that need the graph)."""
        return self.projection.projector

    @property
    def retriever(self) -> Retriever:
        return self.retrieval.retriever

    # ------------------------------------------------------------------ the public operations
    # events: LogService
    append = forward(LogService.append, "events")
    append_many = forward(LogService.append_many, "events")
    replay = forward(LogService.replay, "events")
    resolve = forward(LogService.resolve, "events")
    head = forward(LogService.head, "events")
    verify = forward(LogService.verify, "events")
    sessions = forward(LogService.sessions, "events")
    set_ref = forward(LogService.set_ref, "events")
    get_ref = forward(LogService.get_ref, "events")
    # projection: ProjectionService
    project = forward(ProjectionService.project, "projection")
    reproject = forward(ProjectionService.reproject, "projection")
    projection_digest = forward(ProjectionService.projection_digest, "projection")
    memory_status = forward(ProjectionService.memory_status, "projection")
    inferred_status = forward(ProjectionService.inferred_status, "projection")
    entity_history = forward(ProjectionService.entity_history, "projection")
    traverse = forward(ProjectionService.traverse, "projection")
    search_entities = forward(ProjectionService.search_entities, "projection")
    # retrieval: RetrievalService
    query = forward(RetrievalService.query, "retrieval")
    verbatim = forward(RetrievalService.verbatim, "retrieval")
    embed_pending = forward(RetrievalService.embed_pending, "retrieval")
    re_embed = forward(RetrievalService.re_embed, "retrieval")
    # checkouts: CheckoutService
    checkout = forward(CheckoutService.checkout, "checkouts")
    bootstrap = forward(CheckoutService.bootstrap, "checkouts")
    context_assemble = forward(CheckoutService.context_assemble, "checkouts")
    feedback = forward(CheckoutService.feedback, "checkouts")
    invalidate = forward(CheckoutService.invalidate, "checkouts")
    capabilities = forward(CheckoutService.capabilities, "checkouts")
    # working_sets: WorkingSetService
    working_set = forward(WorkingSetService.working_set, "working_sets")
    recovery_packet = forward(WorkingSetService.recovery_packet, "working_sets")
    bootstrap_packet = forward(WorkingSetService.bootstrap_packet, "working_sets")
    # capture: CaptureService
    capture_cursors = forward(CaptureService.capture_cursors, "capture")
    save_capture_cursors = forward(CaptureService.save_capture_cursors, "capture")
    captured_state = forward(CaptureService.captured_state, "capture")
    last_event = forward(CaptureService.last_event, "capture")
    hook_errors = forward(CaptureService.hook_errors, "capture")
    capture_signals = forward(CaptureService.capture_signals, "capture")
    # stores: StoreService
    item_store = forward(StoreService.item_store, "stores")
    # checkpoints: CheckpointService
    checkpoint_store = forward(CheckpointService.checkpoint_store, "checkpoints")
    # storage: BackendService
    backend_status = forward(BackendService.backend_status, "storage")
    applied_migrations = forward(BackendService.applied_migrations, "storage")
    export_jsonl = forward(BackendService.export_jsonl, "storage")
    import_jsonl = forward(BackendService.import_jsonl, "storage")
    # metacognition: MetacognitionService
    feeling_of_knowing = forward(MetacognitionService.feeling_of_knowing, "metacognition")
    # lifecycle: LifecycleService
    mark_checkout = forward(LifecycleService.mark_checkout, "lifecycle")
    last_checkout = forward(LifecycleService.last_checkout, "lifecycle")
    after_turn = forward(LifecycleService.after_turn, "lifecycle")
    subagent_cleanup = forward(LifecycleService.subagent_cleanup, "lifecycle")
    record_skill = forward(LifecycleService.record_skill, "lifecycle")
    # conversation: ConversationService
    item_history = forward(ConversationService.item_history, "conversation")
    capture_messages = forward(ConversationService.capture_messages, "conversation")
    record_checkout = forward(ConversationService.record_checkout, "conversation")
    compaction_recovery = forward(ConversationService.compaction_recovery, "conversation")
    record_compaction = forward(ConversationService.record_compaction, "conversation")
    cited_entities = forward(ConversationService.cited_entities, "conversation")
    feedback_from_citations = forward(ConversationService.feedback_from_citations, "conversation")
    # cognitive: CognitiveService
    evidence_resolves = forward(CognitiveService.evidence_resolves, "cognitive")
    consolidation_candidate = forward(CognitiveService.consolidation_candidate, "cognitive")
    consolidation_propose_from_log = forward(CognitiveService.consolidation_propose_from_log, "cognitive")
    consolidation_review = forward(CognitiveService.consolidation_review, "cognitive")
    consolidation_status = forward(CognitiveService.consolidation_status, "cognitive")
    mine_procedures = forward(CognitiveService.mine_procedures, "cognitive")
    # causal: CausalService
    causal_successors = forward(CausalService.causal_successors, "causal")
    causal_predecessors = forward(CausalService.causal_predecessors, "causal")
    explain_outcome = forward(CausalService.explain_outcome, "causal")
    # disclosure: DisclosureService
    search_index = forward(DisclosureService.search_index, "disclosure")
    timeline = forward(DisclosureService.timeline, "disclosure")
    get_events = forward(DisclosureService.get_events, "disclosure")
    # uncertainty: UncertaintyService (metacognition ledgers: known unknowns, re-verification requests)
    record_known_unknown = forward(UncertaintyService.record_known_unknown, "uncertainty")
    resolve_known_unknown = forward(UncertaintyService.resolve_known_unknown, "uncertainty")
    request_reverification = forward(UncertaintyService.request_reverification, "uncertainty")
    resolve_reverification = forward(UncertaintyService.resolve_reverification, "uncertainty")
    # confidence: ConfidenceService (metacognition reads and assessments)
    known_unknowns = forward(ConfidenceService.known_unknowns, "confidence")
    confidence_trajectory = forward(ConfidenceService.confidence_trajectory, "confidence")
    reverification_needs = forward(ConfidenceService.reverification_needs, "confidence")
    claim_confidence = forward(ConfidenceService.claim_confidence, "confidence")
    # beliefs: BeliefService
    propose_belief_update = forward(BeliefService.propose_belief_update, "beliefs")
    review_belief_update = forward(BeliefService.review_belief_update, "beliefs")
    belief_proposals = forward(BeliefService.belief_proposals, "beliefs")
    # synthesis: SynthesisService
    record_synthesis_artifact = forward(SynthesisService.record_synthesis_artifact, "synthesis")
    record_synthesis_evidence = forward(SynthesisService.record_synthesis_evidence, "synthesis")
    synthesis_artifact = forward(SynthesisService.synthesis_artifact, "synthesis")
    # reasoning: ReasoningService
    observe_primitive = forward(ReasoningService.observe_primitive, "reasoning")
    # procedures: ProcedureService
    plan_from_procedures = forward(ProcedureService.plan_from_procedures, "procedures")
    skill_from_procedure = forward(ProcedureService.skill_from_procedure, "procedures")
    # integrity: IntegrityService
    repair = forward(IntegrityService.repair, "integrity")
    damaged_sessions = forward(IntegrityService.damaged_sessions, "integrity")
    # erasure: EraseService
    erase_events = forward(EraseService.erase_events, "erasure")
    erase_session = forward(EraseService.erase_session, "erasure")
    erase_range = forward(EraseService.erase_range, "erasure")
    erase_citation = forward(EraseService.erase_citation, "erasure")
    erase_store_items = forward(EraseService.erase_store_items, "erasure")
    on_erase = forward(EraseService.on_erase, "erasure")
    finish_erasures = forward(EraseService.finish_erasures, "erasure")
    # inspector: InspectorService (zaxy ui)
    session_overview = forward(InspectorService.session_overview, "inspector")
    chain_status = forward(InspectorService.chain_status, "inspector")
    timeline_page = forward(InspectorService.timeline_page, "inspector")
    prove_event = forward(InspectorService.prove_event, "inspector")
    session_entities = forward(InspectorEntityService.session_entities, "inspector_entities")
    entity_detail = forward(InspectorEntityService.entity_detail, "inspector_entities")
    erase_preview = forward(InspectorService.erase_preview, "inspector")
    # salience: SalienceService (pins, restore, the encoding gate)
    pin = forward(SalienceService.pin, "salience")
    unpin = forward(SalienceService.unpin, "salience")
    restore = forward(SalienceService.restore, "salience")
    encoding_gate = forward(SalienceService.encoding_gate, "salience")
    append_gated = forward(SalienceService.append_gated, "salience")

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close derived layers first (they may flush), then the log, then what the backend opened itself."""
        while self.core.closers:
            self.core.closers.pop()()
        self.log.close()
        self.backend.close()

    def __enter__(self) -> MemoryFabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


guard_public_methods(MemoryFabric)  # the Python API checks its arguments like every other surface (guard.py)
