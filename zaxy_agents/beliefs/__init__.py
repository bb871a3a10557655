"""Belief-update proposals (seed 002/003 beta.1): cited, review-gated, never an update of current facts."""
