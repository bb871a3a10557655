"""Projection of ``coordination.*`` events: none. Mission state is read by replay through the coordination tools.

A worker's finding is worker-local and non-authoritative until promoted; projecting it into the shared graph
would let a general memory_checkout serve it as memory. Promotions are not projected either: the fold checks
each one against the mission's authority rules, which a per-event extractor cannot, so the coordination tools
(which do check) are the only reader of mission state.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.projection.model import Extraction
from zaxy_agents.projection.registry import register


@register("coordination.*")
def coordination_event(envelope: dict[str, Any]) -> Extraction:
    return Extraction()
