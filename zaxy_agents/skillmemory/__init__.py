"""Procedural memory for planning and checkout (seed 003 Skill Analytics, seed 002 beta.2): skills and procedure
candidates classified as applicable, diagnostic or excluded; analytics; plans. Read-only."""
