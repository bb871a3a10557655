"""Projection of ``reasoning.primitive.called``: one ``reasoning_primitive_call`` observation entity per call
(named ``<primitive>#<seq>``) with its phase, status, counts, tool and citations. No searchable text, kept out of
the keyword lane: trace evidence, not memory."""

from __future__ import annotations

from typing import Any

from zaxy_agents.projection.model import EntityDraft, Extraction
from zaxy_agents.projection.registry import register

from .contracts import CALLED_EVENT, OBSERVATION_ENTITY, PrimitiveCalledPayload

IMPORTANCE = 0.1


@register(CALLED_EVENT)
def primitive_called(envelope: dict[str, Any]) -> Extraction:
    call = PrimitiveCalledPayload.model_validate(envelope["payload"])
    entity = EntityDraft(
        name=f"{call.primitive}#{envelope['seq']}",
        entity_type=OBSERVATION_ENTITY,
        summary=f"[reasoning primitive, {call.phase}] {call.primitive}: {call.status}, {call.result_count} results",
        properties={
            **call.model_dump(),
            "actor": envelope.get("actor"),
            "seq": envelope["seq"],
            "hash": envelope["hash"],
        },
        importance=IMPORTANCE,
    )
    return Extraction(entities=[entity])
