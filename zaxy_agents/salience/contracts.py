"""Payload contracts and the reinforcement taxonomy of seed 004's salience ledger.

A promotion reinforces each memory (entity) the promoted finding's evidence events asserted; a redundant append
reinforces the memory named in its tag's ``reinforces`` and is itself folded (not ranked, see
:mod:`zaxy_agents.projection.fold`).

Salience is rebuilt from the log alone: every event that moves it is one of these (or an existing event type
listed in :data:`REINFORCEMENT`), so replaying the log yields the same salience for every memory.

| event | class | effect on salience |
|---|---|---|
| ``memory.surfaced`` | surfacing (weak) | reinforcement weight 0.1 per event, recency reset |
| ``memory.reinforced`` (positive feedback) | feedback (strong) | its ``weight`` (default 1.0), recency reset |
| ``memory.restored`` | restore (strong) | weight 1.0, recency reset: an attenuated memory is above the floor again |
| ``memory.promoted`` (after a ``coordination.finding.promoted``) | promotion (strong) | weight 1.0, recency reset |
| an append the encoding gate tagged ``redundant`` | repetition (weak) | weight 0.1 on the memory it repeats |
| ``memory.invalidated`` | invalidation (negative) | closes the version: it is no longer current |
| ``memory.feedback`` (negative ``memory_feedback``) | audit only | none (counted, never decays memory) |
| ``memory.pinned`` / ``memory.unpinned`` | exemption | exempt from the attenuation floor while pinned |
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

SURFACED_EVENT = "memory.surfaced"
RESTORED_EVENT = "memory.restored"
PINNED_EVENT = "memory.pinned"
UNPINNED_EVENT = "memory.unpinned"
PROMOTED_EVENT = "memory.promoted"
SURFACING_WEIGHT = 0.1
RESTORE_WEIGHT = 1.0
PROMOTION_WEIGHT = 1.0

REINFORCEMENT = {
    SURFACED_EVENT: "surfacing (weak)",
    "memory.reinforced": "feedback (strong)",
    RESTORED_EVENT: "restore (strong)",
    PROMOTED_EVENT: "promotion (strong)",
    "memory.invalidated": "invalidation (negative)",
    "memory.feedback": "audit only",
    PINNED_EVENT: "exemption",
    UNPINNED_EVENT: "exemption lifted",
}


class MemoryTarget(BaseModel):
    """The memory an event is about: ``{entity_name, entity_type, reason?}`` (memory_feedback's shape)."""

    model_config = ConfigDict(extra="forbid")

    entity_name: str = Field(min_length=1, max_length=500)
    entity_type: str = Field(default="fact", min_length=1, max_length=64)
    reason: str | None = Field(default=None, max_length=1000)


class SurfacedPayload(BaseModel):
    """``memory.surfaced``: the memories one checkout showed (weak reinforcement), with the packet's query."""

    model_config = ConfigDict(extra="forbid")

    memories: list[MemoryTarget] = Field(min_length=1, max_length=200)
    query: str | None = Field(default=None, max_length=4000)


class PromotedPayload(BaseModel):
    """``memory.promoted``: the memories an accepted, promoted Coordinate finding cites (strong reinforcement),
    with the promotion event that caused it (``promotion_ref``, the mission's ``coordination.finding.promoted``)."""

    model_config = ConfigDict(extra="forbid")

    memories: list[MemoryTarget] = Field(min_length=1, max_length=200)
    mission_id: str = Field(min_length=1, max_length=64)
    finding_id: str = Field(min_length=1, max_length=64)
    promotion_ref: str = Field(min_length=1, max_length=1000)


CONTRACTS: dict[str, type[BaseModel]] = {
    PROMOTED_EVENT: PromotedPayload,
    SURFACED_EVENT: SurfacedPayload,
    RESTORED_EVENT: MemoryTarget,
    PINNED_EVENT: MemoryTarget,
    UNPINNED_EVENT: MemoryTarget,
}
