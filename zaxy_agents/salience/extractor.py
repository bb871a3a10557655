"""What the salience events contribute to the projection (all rebuildable by replay).

Surfacing and restore are feedback signals (the catalog's reinforcement aggregate: weight and last touch); a pin
is an entity of its own (``pin`` ``<type>:<name>``) asserted by ``memory.pinned`` and closed by
``memory.unpinned``, so "is it pinned now / then" is an ordinary current-version read.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.projection.model import EntityDraft, EntityRef, Extraction, FeedbackSignal, Invalidation
from zaxy_agents.projection.registry import register
from zaxy_agents.retrieval.attenuation import PIN_TYPE, pin_name

from .contracts import (
    PINNED_EVENT,
    PROMOTED_EVENT,
    PROMOTION_WEIGHT,
    RESTORE_WEIGHT,
    RESTORED_EVENT,
    SURFACED_EVENT,
    SURFACING_WEIGHT,
    UNPINNED_EVENT,
    MemoryTarget,
    PromotedPayload,
    SurfacedPayload,
)


def _target(payload: dict[str, Any]) -> MemoryTarget:
    return MemoryTarget.model_validate(payload)


def _reinforcing(memories: list[MemoryTarget], signal: str, weight: float) -> Extraction:
    return Extraction(
        feedback=[FeedbackSignal(EntityRef(m.entity_name, m.entity_type), signal, weight, True) for m in memories]
    )


@register(SURFACED_EVENT)
def surfaced(envelope: dict[str, Any]) -> Extraction:
    return _reinforcing(SurfacedPayload.model_validate(envelope["payload"]).memories, "surfaced", SURFACING_WEIGHT)


@register(RESTORED_EVENT)
def restored(envelope: dict[str, Any]) -> Extraction:
    target = _target(envelope["payload"])
    ref = EntityRef(target.entity_name, target.entity_type)
    return Extraction(feedback=[FeedbackSignal(ref, "restored", RESTORE_WEIGHT, True)])


@register(PINNED_EVENT)
def pinned(envelope: dict[str, Any]) -> Extraction:
    target = _target(envelope["payload"])
    name = pin_name(target.entity_type, target.entity_name)
    pin = EntityDraft(name, PIN_TYPE, summary=f"pinned {name}" + (f": {target.reason}" if target.reason else ""))
    return Extraction(entities=[pin])


@register(UNPINNED_EVENT)
def unpinned(envelope: dict[str, Any]) -> Extraction:
    target = _target(envelope["payload"])
    return Extraction(
        invalidations=[Invalidation(EntityRef(pin_name(target.entity_type, target.entity_name), PIN_TYPE))]
    )


@register(PROMOTED_EVENT)
def promoted(envelope: dict[str, Any]) -> Extraction:
    return _reinforcing(PromotedPayload.model_validate(envelope["payload"]).memories, "promoted", PROMOTION_WEIGHT)
