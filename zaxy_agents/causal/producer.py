"""The conservative causal producer: an ``outcome.explained`` event yields one ``causal.edge.generated``
event only when it names a cause, an effect, a taxonomy relation and a confidence, and its evidence resolves to
an earlier event with exactly that hash (or hash prefix, for a citation). Anything less yields nothing. The edge
is written in the seed's shape (actor ``zaxy-causal``, method ``explicit_outcome_explanation_v1``, evidence
``{source_event_seq, source_event_hash, reason}``) and always records the evidence's full hash."""

from __future__ import annotations

from typing import Any

from zaxy_agents.errors import ZaxyError
from zaxy_agents.eventloom.models import Event
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.projection.producers import register_producer

from .contracts import CAUSAL_EDGE_EVENT, OUTCOME_EXPLAINED_EVENT, CausalEdgePayload
from .explanations import parse_explanation
from .taxonomy import AUTHORITY_STATUS, REVIEW_STATUS, graph_relation

OUTCOME_METHOD = "explicit_outcome_explanation_v1"  # the seed's name (logs before it say outcome_explained_v1)
CAUSAL_ACTOR = "zaxy-causal"
DEFAULT_REASON = "outcome.explained explicitly cited causal evidence"


@register_producer(OUTCOME_EXPLAINED_EVENT)
def causal_edge_from_explanation(event: Event, log: EventLog) -> list[dict[str, Any]]:
    explanation = parse_explanation(event.payload)
    if explanation is None:
        return []
    try:
        if explanation.evidence_citation is not None:
            evidence = log.resolve(explanation.evidence_citation)  # refuses a hash prefix that does not match
        else:
            evidence = log.get(explanation.evidence_session or event.session, explanation.evidence_seq)
    except ZaxyError:
        return []
    if explanation.evidence_hash is not None and evidence.hash != explanation.evidence_hash:
        return []
    if evidence.session == event.session and evidence.seq >= event.seq:
        return []  # evidence must precede the explanation
    payload = CausalEdgePayload.model_validate(
        {
            "source": explanation.cause.to_dict(),
            "target": explanation.effect.to_dict(),
            "relation_type": explanation.relation,
            "graph_relation_type": graph_relation(explanation.relation),
            "confidence": explanation.confidence,
            "causal_method": OUTCOME_METHOD,
            "review_status": REVIEW_STATUS,
            "authority_status": AUTHORITY_STATUS,
            "evidence": {
                "source_event_seq": evidence.seq,
                "source_event_hash": evidence.hash,
                "reason": explanation.text or DEFAULT_REASON,
                **({"session": evidence.session} if evidence.session != event.session else {}),
            },
            "explained_by": {"seq": event.seq, "hash": event.hash, "session": event.session},
            "explanation": explanation.text or None,
            "source_event_seq": event.seq,
        }
    )
    return [
        {
            "type": CAUSAL_EDGE_EVENT,
            "actor": CAUSAL_ACTOR,
            "payload": payload.model_dump(mode="json", exclude_none=True),
        }
    ]
