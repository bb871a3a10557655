"""Event types the conversation layer writes and reads (documented in docs/langgraph.md)."""

from __future__ import annotations

TRANSCRIPT_TURN = "transcript.turn"
TOOL_CALL_COMPLETED = "tool.call.completed"
COMPACTED = "transcript.compacted"
FEEDBACK_TYPES = frozenset({"memory.reinforced", "memory.feedback"})
