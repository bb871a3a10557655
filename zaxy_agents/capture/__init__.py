"""Capture surfaces: IDE hook sinks (Claude Code, Codex), transcript/rollout capture, hook and MCP config writers.

Everything here is a surface: it maps what a client tool emits into Eventloom events and hands them to the
fabric (``zaxy_agents.fabric`` / the stdlib-only ``zaxy_agents.fabric.light`` on the hook fast path). Modules
used by ``zaxy hook-event`` (``workspace``, ``hook_mapping``, ``hook_sink``, ``edits``) are stdlib-only.
"""
