"""Folding a redundant append into reinforcement (seed 004: "Projection treats redundant events as reinforcement
signals rather than new ranked entries").

The write-time encoding gate tags an append ``redundant`` when it duplicates an existing memory of the same type
and names that memory in ``payload.encoding_gate.reinforces`` (``{entity_name, entity_type}``). The projection
then reads the event as weak reinforcement of that memory (``redundant`` feedback, weight 0.1: salience's
reinforcement and recency) instead of a second, competing entry: no entity, no indexed text, no new version.

Reversible by replay: the tag is plain metadata in the unchanged, hash-chained log, and the event is still in
``memory_replay``; a projection without this policy (or an event whose tag names no memory: tags written before
the fold existed) projects it as an ordinary event again.
"""

from __future__ import annotations

from typing import Any

from .model import EntityRef, Extraction, FeedbackSignal

GATE_FIELD = "encoding_gate"
REDUNDANT_TAG = "redundant"
REDUNDANT_WEIGHT = 0.1  # weak, like surfacing: repeating a memory is exposure, not confirmed use
MAX_NAME_CHARS = 500


def folded(envelope: dict[str, Any]) -> Extraction | None:
    """The reinforcement a gated redundant append stands for, or ``None`` when the event projects as usual."""
    payload = envelope.get("payload")
    gate = payload.get(GATE_FIELD) if isinstance(payload, dict) else None
    if not isinstance(gate, dict) or gate.get("tag") != REDUNDANT_TAG:
        return None
    target = gate.get("reinforces")
    if not isinstance(target, dict):
        return None
    name, entity_type = target.get("entity_name"), target.get("entity_type")
    if not isinstance(name, str) or not isinstance(entity_type, str) or not name or not entity_type:
        return None
    if len(name) > MAX_NAME_CHARS or len(entity_type) > 64:
        return None
    return Extraction(feedback=[FeedbackSignal(EntityRef(name, entity_type), "redundant", REDUNDANT_WEIGHT, True)])
