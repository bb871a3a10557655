"""MCP tools, one module per family; every module here is imported by ``registry.discover()``."""
