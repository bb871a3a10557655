"""The MCP server: Zaxy memory as tools for IDE agents (Claude Code, Codex, Cursor, VS Code, Claude Desktop).

Modules: ``registry`` (tool specs and profiles), ``tools/`` (one module per tool family, auto-discovered),
``executor`` (validation, session scoping, structured errors), ``backend`` (how this process reaches memory:
graph owner, proxy to the owner, or standalone), ``capture`` (lifecycle events), ``app`` (the tools behind any
transport), ``stdio`` (the stdio transport, JSON-RPC without the MCP SDK), ``server`` (the app on the SDK's
low-level server), ``http`` (streamable HTTP with bearer auth and rate limits, on the SDK), ``wire`` (JSON-RPC
helpers both share), ``contract`` (the tested tool contract). Nothing here is imported by ``zaxy --help``; the MCP
SDK loads only for the HTTP transport.
"""
