"""The reinforcement taxonomy (seed 004 2.2): surfacing, feedback, promotion, restore, pinning, invalidation."""
