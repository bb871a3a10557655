"""Fabric operation for reasoning-loop primitive observations (seed 002/003 beta.1).

When an agent calls a primitive tool (the table in ``zaxy_agents.reasoning.primitives``: claim confidence, known
unknowns, causal traces, trajectories, re-verification, proposals, synthesis records, procedure plans, an
``outcome.explained`` append), the surface (MCP executor, LangGraph tool) hands the call and its result here and a
``reasoning.primitive.called`` event records the primitive, its deterministic phase, status, result count and the
citations that backed the result. An observation is trace evidence: it never changes a fact, and failing to record
one never fails the call it observes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from zaxy_agents.reasoning.contracts import AUTHORITY_STATUS, CALLED_EVENT
from zaxy_agents.reasoning.primitives import MAX_CITATIONS, observed, primitive_of

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from .log_ops import LogService

logger = logging.getLogger(__name__)


class ReasoningService(FabricService):
    """Service: record a reasoning primitive observation for a tool call."""

    def __init__(self, core: FabricCore, events: LogService) -> None:
        super().__init__(core)
        self.events = events

    def observe_primitive(
        self,
        session: str,
        tool: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result: Any = None,
        actor: str = "agent",
    ) -> dict[str, Any] | None:
        """Record ``tool``'s completed call (``result``: what it returned) as ``reasoning.primitive.called`` when
        it is a primitive (else ``None``): status ``empty`` when it returned no result, else ``ok``. A refused call
        is not observed (bad input writes nothing). Returns ``{primitive, phase, status, citation}``."""
        routed = primitive_of(tool, arguments)
        if routed is None:
            return None
        primitive, phase = routed
        count, citations = observed(result)
        status = "ok" if count else "empty"
        payload = {
            "primitive": primitive,
            "phase": phase,
            "status": status,
            "result_count": count,
            "cited_evidence_count": len(citations),
            "citations": citations[:MAX_CITATIONS],
            "tool": tool,
            "authority_status": AUTHORITY_STATUS,
        }
        try:
            event = self.events.append(session, CALLED_EVENT, payload, actor=actor)
        except Exception:  # an observation must never fail the call it observes
            logger.warning("could not record the %s primitive call of %s", primitive, tool, exc_info=True)
            return None
        return {"primitive": primitive, "phase": phase, "status": status, "citation": event.citation}
