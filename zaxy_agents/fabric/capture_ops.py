"""Fabric operations for capture surfaces: cursors, what was already captured, hook health.

Capture cursors are derived state (``<eventloom>/.zaxy/capture/<name>.json``): a cache of how far each
client file was read. The log stays the source of truth: :meth:`captured_state` rebuilds "how far" from the
``source`` refs of captured events, so a lost or stale cursor never duplicates events.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import TYPE_CHECKING, Any

from zaxy_agents.config import DERIVED_DIR_NAME
from zaxy_agents.errors import InvalidRequestError

from .hook_state import read_hook_errors
from .service import FabricService


def edit_key(call_id: object, path: object, cwd: object = None) -> str | None:
    """The capture dedupe key of one file edit: one per file of a tool call (a patch touching 4 files is 4 edits,
    never 1), ``tool:<id>#<absolute path>`` with relative paths resolved against the client's ``cwd``."""
    if not (isinstance(call_id, str) and call_id and isinstance(path, str) and path):
        return None
    if not os.path.isabs(path) and isinstance(cwd, str) and cwd:
        path = os.path.join(cwd, path)
    return f"tool:{call_id}#{os.path.normpath(path)}"


if TYPE_CHECKING:
    pass

CAPTURE_SCAN_WINDOW = 20_000  # events of the session tail scanned for source refs and client refs


class CaptureService(FabricService):
    """Service: the capture part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def _cursor_file(self, name: str) -> str:
        if not (0 < len(name) <= 64 and name.isascii() and name.replace("-", "").replace("_", "").isalnum()):
            raise InvalidRequestError(
                f"invalid cursor name {name[:80]!r}", field="name", remediation="Use 1-64 of [A-Za-z0-9_-]."
            )
        return os.path.join(self.settings.eventloom_dir, DERIVED_DIR_NAME, "capture", f"{name}.json")

    def capture_cursors(self, name: str) -> dict[str, Any]:
        """The cursor cache ``name`` (``{}`` when absent or unreadable: it is rebuildable)."""
        try:
            with open(self._cursor_file(name), encoding="utf-8") as handle:
                value = json.load(handle)
        except (OSError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}

    def save_capture_cursors(self, name: str, cursors: dict[str, Any]) -> None:
        """Replace the cursor cache atomically (write a temp file, fsync, rename)."""
        path = self._cursor_file(name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{name}.", dir=os.path.dirname(path))
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                try:
                    text = json.dumps(cursors, ensure_ascii=False, sort_keys=True)
                except (TypeError, ValueError) as exc:
                    raise InvalidRequestError(
                        f"cursors are not plain JSON: {exc}", field="cursors", remediation="Use string keys only."
                    ) from None
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, path)
        except BaseException:
            if os.path.exists(temp):
                os.unlink(temp)
            raise

    def captured_state(self, session: str, *, window: int = CAPTURE_SCAN_WINDOW) -> dict[str, Any]:
        """What the tail of ``session`` already holds: ``{"lines": {file: last line}, "refs": {client refs}}``.

        ``lines`` comes from captured events' ``source`` refs; ``refs`` are ``tool:<id>`` / ``prompt:<id>``
        keys of tool calls and prompts recorded by hooks or capture, so capture can skip duplicates.
        """
        lines: dict[str, int] = {}
        refs: set[str] = set()
        head = self.log.head(session) if self.log.has_session(session) else None
        if head is None:
            return {"lines": lines, "refs": refs}
        for envelope in self.log.replay_envelopes(session, max(1, head.seq - window + 1)):
            payload = envelope.get("payload") or {}
            source = payload.get("source")
            if isinstance(source, dict) and isinstance(source.get("file"), str) and isinstance(source.get("line"), int):
                lines[source["file"]] = max(lines.get(source["file"], 0), source["line"])
            if isinstance(payload.get("tool_use_id"), str):
                if envelope.get("type") == "file.edit.applied":  # one ref per file of a multi-file edit
                    refs.add(edit_key(payload["tool_use_id"], payload.get("path"), payload.get("cwd")) or "")
                else:
                    refs.add(f"tool:{payload['tool_use_id']}")
            if envelope.get("type") == "client.error" and isinstance(payload.get("prompt_id"), str):
                refs.add(f"error:{payload['prompt_id']}")
            for key in ("prompt_id", "client_turn_id", "client_ref"):
                if isinstance(payload.get(key), str) and envelope.get("type") in (
                    "hook.user_prompt_submitted",
                    "transcript.turn",
                ):
                    refs.add(f"prompt:{payload[key]}")
        return {"lines": lines, "refs": refs}

    def last_event(self, session: str) -> dict[str, Any] | None:
        """The newest event of ``session`` as a plain envelope with its citation (``None`` when empty)."""
        if not self.log.has_session(session):
            return None
        head = self.log.head(session)
        if head is None:
            return None
        for envelope in self.log.replay_envelopes(session, head.seq, head.seq):
            return {**envelope, "citation": head.citation}
        return None

    def hook_errors(self, workspace: str | None = None, limit: int = 5) -> dict[str, Any]:
        """Recent ``zaxy hook-event`` failures recorded for this Eventloom folder (and ``workspace``)."""
        return read_hook_errors(self.settings.eventloom_dir, workspace, limit)

    def capture_signals(self, session: str, *, workspace: str | None = None, scan: int = 500) -> dict[str, Any]:
        """What the log says about capture into ``session``: the last hook and MCP-lifecycle events (within the
        last ``scan`` events), hook errors, and events still waiting in the hook spool (a held lock)."""
        from zaxy_agents.storage.files.spool import pending_files

        last_hook: dict[str, Any] | None = None
        last_lifecycle: dict[str, Any] | None = None
        head = self.log.head(session) if self.log.has_session(session) else None
        if head is not None:
            for envelope in self.log.replay_envelopes(session, max(1, head.seq - scan + 1), head.seq):
                kind = str(envelope.get("type", ""))
                payload = envelope.get("payload") or {}
                brief = {"type": kind, "seq": envelope["seq"], "timestamp": envelope.get("timestamp")}
                if kind.startswith("hook.") or payload.get("hook_event_name"):
                    last_hook = {**brief, "client": payload.get("client")}
                elif kind == "tool.call.completed" and payload.get("capture") == "lifecycle":
                    last_lifecycle = {**brief, "tool": payload.get("tool")}
        spooled = pending_files(self.settings.eventloom_dir, session)
        return {
            "session": session,
            "events": head.seq if head is not None else 0,
            "last_hook_event": last_hook,
            "last_mcp_activity": last_lifecycle,
            "hook_errors": self.hook_errors(workspace),
            "spool_pending_files": len(spooled),
        }
