"""Agent lifecycle as events: finished turns, subagent hand-offs and skills.

Each module turns one lifecycle moment into Eventloom drafts (so it is cited and replayable like everything
else) and, where the caller needs an answer, reads the projection's catalog to summarise what changed.
"""
