"""Zaxy Agents: cited, replayable memory for AI agents.

Import what you need from the subpackages (``zaxy_agents.fabric``, ``zaxy_agents.langgraph``, ...); this
package module stays import-light on purpose.
"""

__version__ = "0.1.0"
