"""Fabric operations on the graph projection: catch-up, rebuild, status, temporal and graph reads."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.models import SessionSummary
from zaxy_agents.instants import parse_instant
from zaxy_agents.projection.model import entity_key
from zaxy_agents.projection.records import EntityVersion, TraversalHit
from zaxy_agents.retrieval.entity_index import EntityKeywordIndex
from zaxy_agents.retrieval.entity_words import IndexedEntityWords
from zaxy_agents.storage.protocols import Capability

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from pathlib import Path

    from zaxy_agents.projection.projector import Projector
    from zaxy_agents.projection.protocol import ProjectionStore


class ProjectionService(FabricService):
    """Service: the projection part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def __init__(self, core: FabricCore, listeners: Callable[[], list[Any]]) -> None:
        """``listeners``: builds the indexes kept in step with the projection (the retrieval service's module)."""
        super().__init__(core)
        self.listeners = listeners
        self._projector: Projector | None = None

    @property
    def projector(self) -> Projector:
        """Opened on first use (Kuzu is only loaded by commands that need the graph). Threads may ask at once
        (LangGraph runs parallel nodes in threads): one of them opens it, the others wait for that one."""
        if self._projector is not None:
            return self._projector
        with self.core.lazy_open:
            return self._open_projector()

    def _open_projector(self) -> Projector:
        if self._projector is None:
            from zaxy_agents.projection.projector import Projector

            self._projector = Projector(
                self.log,
                self.backend.derived_path,
                extractors=self.features.extractors,
                listeners=self.listeners(),
                store_factory=self._open_graph,
                shared_graph=Capability.SHARED_GRAPH in self.backend.capabilities,
                graph_name=self.backend.graph_name,
                use_graph=self.settings.use_graph,
            )
            self._closers.append(self._close_projector)
        return self._projector

    def opened_projector(self) -> Projector | None:
        """The projector if something opened it already (repair reports what it found; nothing opens it for that)."""
        return self._projector

    def _open_graph(self, _graph_path: Path) -> ProjectionStore:
        return self.backend.open_graph()

    def _close_projector(self) -> None:
        if self._projector is not None:
            self._projector.close()
            self._projector = None

    def project(self, sessions: list[str] | None = None, listed: Sequence[SessionSummary] | None = None) -> int:
        """Bring the projection up to date with the log; returns the number of events projected. ``listed``: the
        log's session listing the caller just read, when ``sessions`` is ``None`` (not listed again)."""
        return self.projector.catch_up(sessions, listed)

    def reproject(self, progress: Callable[[int, int], None] | None = None, *, digest: bool = True) -> str | None:
        """Rebuild the projection from scratch; returns the SHA-256 digest of the canonical graph dump (None with
        ``digest=False``: the dump reads the whole graph back, ~8 % of a large rebuild, and nothing needs it)."""
        return self.projector.rebuild(progress, digest=digest)

    def projection_digest(self) -> str:
        self.project()
        return self.projector.digest()

    def memory_status(self, session: str | None = None) -> dict[str, Any]:
        """Counts, cursors, lag and degradation, as `zaxy memory status --json` reports them."""
        projector = self.projector
        projector.catch_up()
        # An existing graph is opened and brought up to date, so the graph cursors below are what it holds; one
        # that was never materialised is not built just to be counted.
        store = projector.store if projector.graph_exists() else None
        catalog = projector.catalog
        sessions = {}
        for summary in self.log.sessions():
            if session is not None and summary.session != session:
                continue
            cursor = catalog.cursors.get(summary.session)
            sessions[summary.session] = {
                "events": summary.event_count,
                "last_projected_seq": cursor[0] if cursor else 0,
                "projection_lag": summary.event_count - (cursor[0] if cursor else 0),
                **(
                    {"mismatch": projector.mismatches[summary.session]}
                    if summary.session in projector.mismatches
                    else {}
                ),
                **(
                    {"damaged": summary.damaged or projector.damaged[summary.session]}
                    if summary.damaged or summary.session in projector.damaged
                    else {}
                ),
            }
        counts = catalog.counts(session)
        store_cursors = projector.graph.cursors if store is not None else {}
        return {
            "backend": projector.graph_backend or "none",
            "degraded": projector.degraded or projector.writer_error(),
            "events": sum(s["events"] for s in sessions.values()),
            **counts,
            "extraction_failures": catalog.failure_count,
            "extraction_failure_samples": catalog.failure_samples[-5:],
            "graph_write_lag_batches": projector.lag(),
            "graph_cursors": {s: c[0] for s, c in store_cursors.items()},
            "graph_materialised": projector.graph_exists(),
            "derived_state_notices": list(projector.derived.notices),
            "sessions": sessions,
        }

    def inferred_status(self) -> dict[str, Any]:
        """Inferred-edge counts, methods, confidence statistics, evidence coverage and uncited edges."""
        self.project()
        inferred = self.projector.catalog.inferred_edges()
        confidences = [r.confidence for r in inferred]
        methods: dict[str, int] = {}
        relations: dict[str, int] = {}
        for record in inferred:
            methods[record.inference_method] = methods.get(record.inference_method, 0) + 1
            relations[record.relation_type] = relations.get(record.relation_type, 0) + 1
        uncited = [
            r.id for r in inferred if not self._evidence_resolves(r.evidence_session, r.evidence_seq, r.evidence_hash)
        ]
        return {
            "inferred_edges": len(inferred),
            "methods": dict(sorted(methods.items())),
            "relation_types": dict(sorted(relations.items())),
            "confidence": {
                "min": min(confidences, default=None),
                "max": max(confidences, default=None),
                "mean": statistics.fmean(confidences) if confidences else None,
            },
            "evidence_coverage": (len(inferred) - len(uncited)) / len(inferred) if inferred else 1.0,
            "uncited_edges": uncited,
        }

    def _evidence_resolves(self, session: str, seq: int, digest: str) -> bool:
        try:
            return self.log.get(session, seq).hash == digest
        except Exception:
            return False

    def entity_history(self, session: str, name: str, entity_type: str) -> list[EntityVersion]:
        """Every version of one entity, oldest first (superseded and invalidated ones included)."""
        self.project([session])
        return self.projector.catalog.history(entity_key(session, entity_type, name))

    def traverse(
        self,
        session: str,
        name: str,
        entity_type: str,
        *,
        depth: int = 2,
        relation_types: list[str] | None = None,
        as_of: str | None = None,
    ) -> list[TraversalHit]:
        """Graph traversal from one entity in the durable graph store."""
        as_of = parse_instant(as_of)
        self.project([session])
        store = self.projector.store
        if store is None:
            return []
        return store.traverse(
            [entity_key(session, entity_type, name)], depth=depth, relation_types=relation_types, as_of=as_of
        )

    def search_entities(
        self, text: str, *, session: str | None = None, as_of: str | None = None, limit: int = 20
    ) -> list[tuple[EntityVersion, float]]:
        """Keyword search in the durable graph store: entity versions valid at ``as_of`` (now by default) whose
        name or summary holds a word of ``text``, best first. On PostgreSQL this runs on the server
        (``tsvector``, plus fuzzy names with ``pg_trgm``) and sees every worker's entities."""
        if limit < 0:
            raise InvalidRequestError(
                f"limit must be 0 or more, not {limit}", field="limit", remediation="Pass how many hits to return."
            )
        as_of = parse_instant(as_of)
        self.project([session] if session else None)
        store = self.projector.store
        if store is None:
            return []
        keywords = next((index for index in self.projector.listeners if isinstance(index, EntityKeywordIndex)), None)
        if keywords is not None:  # a store that reads its text from the catalog reads only what the index names
            store.attach_entity_words(IndexedEntityWords(keywords))
        return store.search_entities(text, session=session, as_of=as_of, limit=limit)
