"""Coordinate on the fabric: ``fabric.coordination`` is the mission service (see zaxy_agents.coordinate)."""

from __future__ import annotations

from functools import cached_property

from zaxy_agents.coordinate.proofs import SynthesisPort
from zaxy_agents.coordinate.service import CoordinateService

from .mixin import FabricMixin


class CoordinateOperations(FabricMixin):
    @cached_property
    def coordination(self) -> CoordinateService:
        """Missions, workers, findings, review, promotion, handoffs, proof packets and traces (replay-backed)."""
        synthesis = SynthesisPort(record=self.record_synthesis_artifact, read=self.synthesis_artifact)  # type: ignore[attr-defined]
        return CoordinateService(self.log, self.append_many, synthesis)
