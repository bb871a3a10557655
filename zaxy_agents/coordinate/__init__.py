"""Coordinate (seed 003): several agents share one memory without trusting each other blindly.

A mission (parent session) has workers (one session each), assignments, findings reported with citations,
reviews by the roles the mission grants, promotion into accepted mission state, approval packets, handoffs and
proof traces. See docs/coordinate.md. The operations are :class:`.service.CoordinateService`.
"""
