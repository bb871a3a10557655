"""Synthesis artifacts and the evidence ledger (seed 003): composed answers kept auditable, never facts."""
