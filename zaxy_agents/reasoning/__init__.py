"""Reasoning-loop primitives (seed 002/003 beta.1): observable, replayable records of the memory operations an
agent calls while it reasons — trace evidence, never authority."""
