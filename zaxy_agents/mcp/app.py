"""The MCP application without a transport: tools/list per profile, tools/call through the executor, capture.

Both transports share it. The stdio transport (``stdio.py``) speaks JSON-RPC itself and never imports the MCP SDK
(importing it costs ~0.45 s of CPU: ``mcp.types`` builds hundreds of pydantic models), so this module returns
plain JSON values shaped exactly as the SDK serialises them (``model_dump(by_alias=True, mode="json",
exclude_none=True)``); the SDK-based server of the HTTP transport (``server.py``) wraps the same values in the
SDK's types. ``tests/mcp/test_stdio_protocol.py`` checks both transports write the same bytes.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from zaxy_agents import __version__
from zaxy_agents.errors import InvalidRequestError, ZaxyError

from .backend import Backend
from .caller import Caller
from .capture import LifecycleCapture
from .config import SESSION_HEADER, ServerConfig
from .wire import NON_FINITE_KEY, PROTOCOL_VERSIONS

logger = logging.getLogger("zaxy.mcp")

SERVER_NAME = "zaxy"
INSTRUCTIONS = """Zaxy is this workspace's memory: an append-only, hash-chained log with a budgeted, cited checkout.
Call memory_checkout before answering questions about the project or resuming work, and follow its answerability
(answer_from_memory, refresh_recommended with a suggested memory_query, or ask_user). Cite the eventloom://
citations you rely on. Remember decisions, facts and task changes with memory_append; retract what stopped being
true with memory_invalidate; say what helped with memory_feedback. memory_capabilities lists every tool,
including those callable by name but not listed under the current profile."""


class McpApp:
    """Zaxy's MCP tools behind any transport: one per process."""

    def __init__(self, config: ServerConfig, backend: Backend | None = None) -> None:
        self.config = config
        self.backend = backend or Backend(config.settings, share=config.share)
        self.capture = LifecycleCapture(config.settings.eventloom_path, enabled=config.capture)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self.backend.start()

    def close(self, transport: str = "stdio") -> None:
        """Record ``session.ended`` for the default session (stdio: the one client this process served), flush
        lifecycle capture, then hand the graph over."""
        if transport == "stdio":
            self.capture.record_session_ended(
                self.config.default_session, transport=transport, client=self.config.client
            )
        self.capture.close()
        self.backend.close()

    # ------------------------------------------------------------------ MCP methods
    def tools(self) -> list[dict[str, Any]]:
        """The ``tools`` of a tools/list result under this server's profile."""
        from . import registry

        return [tool_json(spec) for spec in registry.listed(self.config.profile)]  # type: ignore[arg-type]

    def stdio_caller(self) -> Caller:
        """Over stdio the caller is the local user of the default session."""
        return Caller(
            session=self.config.default_session,
            transport="stdio",
            server=self.describe("stdio"),
            default_scope=self.config.shared_sessions() or None,
        )

    def call_tool_result(self, name: str, arguments: dict[str, Any], caller: Caller) -> dict[str, Any]:
        """Validate, run (here or in the owner process), capture; the tools/call result as JSON values (the
        calling thread blocks while the fabric works: transports call this from a worker thread)."""
        from . import executor, registry

        started = time.perf_counter()
        spec = registry.get(name)
        session = caller.session
        try:
            non_finite = arguments.pop(NON_FINITE_KEY, None)
            if non_finite is not None:
                raise InvalidRequestError(
                    f"a number is NaN or infinite at {non_finite}",
                    field=str(non_finite).removeprefix("arguments."),
                    remediation="Send finite numbers only (1e400 is read as infinity); store others as strings.",
                )
            spec, _args, bound = executor.prepare(name, arguments, caller)
            session = bound.session
            result = self.backend.execute(name, arguments, bound, read_only=spec.read_only)
        except ZaxyError as exc:
            return self._finish_error(exc, name, spec, arguments, session, caller, started)
        except Exception as exc:  # never a traceback to the client
            logger.exception("tool %s failed", name)
            error = ZaxyError(
                f"{name} failed with {type(exc).__name__}",
                code="internal_error",
                remediation="The server's stderr has the details; retry once.",
            )
            return self._finish_error(error, name, spec, arguments, session, caller, started)
        self.capture.record(
            session,
            tool=name,
            status="ok",
            arguments=arguments,
            summary=executor.summarize(spec, result),
            duration_ms=(time.perf_counter() - started) * 1000,
            transport=caller.transport,
        )
        text = executor.render(spec, result) or json.dumps(result, ensure_ascii=False, default=str)
        return {"content": [{"type": "text", "text": text}], "structuredContent": result, "isError": False}

    def _finish_error(
        self,
        error: ZaxyError,
        name: str,
        spec: Any,
        arguments: dict[str, Any],
        session: str,
        caller: Caller,
        started: float,
    ) -> dict[str, Any]:
        body = error.to_dict()
        if spec is not None:  # unknown tools are not captured: their name is caller-controlled noise
            self.capture.record(
                session,
                tool=name,
                status="error",
                arguments=arguments,
                summary=f"{error.code}: {error.message}",
                duration_ms=(time.perf_counter() - started) * 1000,
                transport=caller.transport,
                error_code=error.code,
            )
        text = json.dumps(body, ensure_ascii=False)
        return {"content": [{"type": "text", "text": text}], "structuredContent": body, "isError": True}

    def initialize_result(self, requested_version: Any) -> dict[str, Any]:
        """The initialize result: the client's protocol version when supported, else the latest."""
        version = requested_version if requested_version in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
        return {
            "protocolVersion": version,
            "capabilities": {"experimental": {}, "tools": {"listChanged": False}},
            "serverInfo": {"name": SERVER_NAME, "version": __version__},
            "instructions": INSTRUCTIONS,
        }

    # ------------------------------------------------------------------ reporting
    def describe(self, transport: str) -> dict[str, Any]:
        """What memory_capabilities reports about the server (profile, unlisted tools, process role)."""
        from . import registry

        listed = [spec.name for spec in registry.listed(self.config.profile)]  # type: ignore[arg-type]
        every = [spec.name for spec in registry.all_tools()]
        process = self.backend.describe()
        if transport == "http":  # the owner socket lives in the workspace: no filesystem paths over HTTP
            process.pop("socket", None)
        return {
            "name": SERVER_NAME,
            "version": __version__,
            "transport": transport,
            "profile": self.config.profile,
            "listed_tools": listed,
            "unlisted_tools": [name for name in every if name not in listed],
            "default_session": self.config.default_session if transport == "stdio" else None,
            "session_header": SESSION_HEADER if transport == "http" else None,
            "lifecycle_capture": self.capture.enabled,
            "lifecycle_stats": self.capture.stats(),
            "process": process,
            "workspace": self._describe_workspace(transport),
        }

    def _describe_workspace(self, transport: str) -> dict[str, Any] | None:
        """Which workspace and client this server serves, and which sessions it recalls together (stdio)."""
        workspace = self.config.workspace
        if workspace is None or transport != "stdio":
            return None
        return {
            "root": workspace.root,
            "client": self.config.client,
            "sharing": workspace.sharing and not workspace.session_forced,
            "sharing_disabled_by": workspace.sharing_disabled_by,
            "shared_sessions": self.config.shared_sessions(),
        }


def tool_json(spec: Any) -> dict[str, Any]:
    """One tool of a tools/list result, as the SDK serialises ``types.Tool`` (no ``None`` fields)."""
    return {
        "name": spec.name,
        "description": spec.description,
        "inputSchema": spec.input_schema(),
        "annotations": {
            "readOnlyHint": spec.read_only,
            "destructiveHint": False,
            "idempotentHint": spec.read_only,
            "openWorldHint": False,
        },
    }
