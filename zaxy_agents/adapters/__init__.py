"""Zaxy memory for agent frameworks other than LangGraph (which has :mod:`zaxy_agents.langgraph`).

* :mod:`.openai_agents` — the OpenAI Agents SDK: ``ZaxySession`` (its ``Session`` protocol) and
  ``zaxy_mcp_server`` (Zaxy's MCP tools through the SDK's MCP support).
* :mod:`.pydantic_ai` — Pydantic AI: ``ZaxyMessageHistory`` (load / save ``message_history``) and a
  ``history_processors`` hook that adds a cited Memory Checkout to each model request.

Each module imports its framework lazily: install the framework you use (``openai-agents``,
``pydantic-ai-slim``). See docs/frameworks.md.
"""
