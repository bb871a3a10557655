"""Fabric operations about memory itself: the (experimental) feeling-of-knowing prediction."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.metacognition.fok import predict
from zaxy_agents.retrieval.cues import checked_cues

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from .log_ops import LogService
    from .projection_ops import ProjectionService
    from .retrieval_ops import RetrievalService

FOK_EVENT = "metacognition.fok.predicted"
MAX_FOK_QUERY_CHARS = 1000


class MetacognitionService(FabricService):
    """Service: metacognitive reads of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def __init__(
        self, core: FabricCore, events: LogService, projection: ProjectionService, retrieval: RetrievalService
    ) -> None:
        super().__init__(core)
        self.events = events
        self.projection = projection
        self.retrieval = retrieval

    def feeling_of_knowing(
        self,
        query: str,
        *,
        session: str,
        scope: list[str] | None = None,
        record: bool = True,
        cues: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Predict (likely / possible / unlikely) whether memory can answer ``query``, from in-memory state only.

        No retrieval, embedding or graph call: sessions already projected in this process are not caught up
        (``projection_lag`` says how far behind the log they are); a session never projected here is projected
        once. With ``record`` a ``metacognition.fok.predicted`` marker is appended to ``session`` so predictions
        can later be compared with what checkouts found (seed shape: query hash, verdict, raw score).
        ``cues`` (``mission``, ``workspace``, ``tool``, ``phase``) are probed alongside the question.
        """
        if not isinstance(query, str) or not query.strip() or len(query) > MAX_FOK_QUERY_CHARS:
            raise InvalidRequestError(
                f"query must be a non-empty string of at most {MAX_FOK_QUERY_CHARS} characters",
                field="query",
                remediation="Pass the question you are about to answer.",
            )
        validate_session_id(session)
        cues = checked_cues(cues)  # the same names (and task/repo aliases) as checkout and query
        for index, name in enumerate(scope or []):
            validate_session_id(name, field=f"scope[{index}]")
        sessions = sorted(set(scope or []) | {session})
        catalog = self.projection.projector.catalog
        heads = {name: self.log.head(name) for name in sessions}
        cold = [name for name in sessions if name not in catalog.cursors and heads[name] is not None]
        if cold:
            self.projection.project(cold)
        lag = sum(head.seq - catalog.cursors.get(name, (0, ""))[0] for name, head in heads.items() if head is not None)
        result = predict(query, catalog, self.retrieval.retriever.verbatim, sessions, cues).to_dict()
        result.update({"query": query, "scope": sessions, "projection_lag": lag, "experimental": True})
        if record:
            marker = self.events.append(
                session,
                FOK_EVENT,
                {
                    "query_sha256": hashlib.sha256(query.encode()).hexdigest(),
                    "query": query[:500],
                    "verdict": result["verdict"],
                    "score": result["score"],
                    "signals": result["signals"],
                    "scope": sessions,
                    **({"cues": cues} if cues else {}),
                },
            )
            result["marker"] = marker.citation
        return result
