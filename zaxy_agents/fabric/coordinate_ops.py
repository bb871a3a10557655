"""Coordinate on the fabric: ``fabric.coordination`` is the mission service (see zaxy_agents.coordinate)."""

from __future__ import annotations

from functools import cached_property

from zaxy_agents.coordinate.service import CoordinateService

from .mixin import FabricMixin


class CoordinateOperations(FabricMixin):
    @cached_property
    def coordination(self) -> CoordinateService:
        """Missions, workers, findings, review, promotion, handoffs and proof traces (replay-backed)."""
        return CoordinateService(self.log, self.append_many)
