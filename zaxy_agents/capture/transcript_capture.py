"""``zaxy capture codex|claude``: tail client transcripts of this workspace into its memory session.

No daemon: one pass by default, ``--watch`` polls in the foreground until interrupted. Idempotent across
restarts: every captured event cites its source (``file`` + ``line``), the cursor cache under
``<eventloom>/.zaxy/capture/`` says how far each file was read, and on start the cursor is reconciled with
the source refs in the log, so a crash between append and cursor save never duplicates events. Tool calls
and prompts the live hooks already recorded (same ``tool_use_id`` / prompt id) are skipped.

Only complete lines are read; a line still being written is picked up on the next pass.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .claude_transcript import CLIENT as CLAUDE_CLIENT
from .claude_transcript import SOURCE_KIND as CLAUDE_SOURCE
from .claude_transcript import ClaudeTranscriptMapper, project_dir_name
from .codex_rollout import CLIENT as CODEX_CLIENT
from .codex_rollout import SOURCE_KIND as CODEX_SOURCE
from .codex_rollout import CodexRolloutMapper, read_session_meta
from .transcript_common import Captured
from .workspace import Workspace, find_workspace_root

APPEND_CHUNK = 500


def codex_home() -> str:
    return os.path.expanduser(os.environ.get("CODEX_HOME") or "~/.codex")


def claude_config_dir() -> str:
    return os.path.expanduser(os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude")


class Source:
    """One client's transcript family: where files live, which belong to a workspace, how to map them."""

    def __init__(
        self, client: str, kind: str, mapper: Callable[[], Any], discover: Callable[[Workspace, dict], list[str]]
    ) -> None:
        self.client, self.kind, self.mapper, self.discover = client, kind, mapper, discover


def _discover_codex(workspace: Workspace, cursors: dict[str, Any], home: str | None = None) -> list[str]:
    """Rollouts whose ``session_meta.cwd`` lies in this workspace (decisions cached in the cursor file)."""
    files = sorted(glob.glob(os.path.join(home or codex_home(), "sessions", "*", "*", "*", "rollout-*.jsonl")))
    ours = []
    for path in files:
        entry = cursors.setdefault(path, {})
        if "workspace" not in entry:
            try:
                with open(path, encoding="utf-8") as handle:
                    meta = read_session_meta(handle.readline())
            except OSError:
                continue
            if meta is None:
                continue  # first line not written yet: decide on the next pass
            cwd = meta.get("cwd")
            entry["workspace"] = isinstance(cwd, str) and find_workspace_root(cwd) == workspace.root
        if entry.get("workspace"):
            ours.append(path)
    return ours


def _discover_claude(workspace: Workspace, cursors: dict[str, Any], config_dir: str | None = None) -> list[str]:
    folder = os.path.join(config_dir or claude_config_dir(), "projects", project_dir_name(workspace.root))
    return sorted(glob.glob(os.path.join(folder, "*.jsonl")))


SOURCES = {
    "codex": Source(CODEX_CLIENT, CODEX_SOURCE, CodexRolloutMapper, _discover_codex),
    "claude": Source(CLAUDE_CLIENT, CLAUDE_SOURCE, ClaudeTranscriptMapper, _discover_claude),
}


class FileTail:
    """Reads one transcript file incrementally, feeding every complete line to its mapper in order."""

    def __init__(self, path: str, mapper: Any) -> None:
        self.path, self.mapper = path, mapper
        self.offset = 0
        self.line = 0

    def advance(self, emit_after: int) -> Iterator[tuple[int, Captured]]:
        """Feed new complete lines; yield ``(line number, event)`` for lines past ``emit_after``."""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1
        for raw in data[:end].splitlines():
            self.line += 1
            self.offset += len(raw) + 1
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            events = self.mapper.feed(record)
            if self.line > emit_after:
                for event in events:
                    yield self.line, event


class CaptureRun:
    """State of one capture process (one pass, or a ``--watch`` loop) for one source and workspace."""

    def __init__(self, fabric: Any, workspace: Workspace, source: Source, **discover_options: Any) -> None:
        self.fabric, self.workspace, self.source = fabric, workspace, source
        self.session = workspace.session_for(source.client)
        self.discover_options = discover_options
        self.cursor_name = f"{source.client}-transcripts"
        self.tails: dict[str, FileTail] = {}
        state = fabric.captured_state(self.session)
        self.logged_lines: dict[str, int] = state["lines"]
        self.refs: set[str] = state["refs"]

    def poll(self) -> dict[str, Any]:
        """One pass over every transcript file of the workspace; returns what was appended."""
        cursors = self.fabric.capture_cursors(self.cursor_name)
        files = cursors.setdefault("files", {})
        paths = self.source.discover(self.workspace, files, **self.discover_options)
        report: dict[str, Any] = {"session": self.session, "files": len(paths), "appended": 0, "skipped_duplicates": 0}
        for path in paths:
            entry = files.setdefault(path, {})
            done = max(int(entry.get("line", 0)), self.logged_lines.get(path, 0))
            tail = self.tails.get(path)
            if tail is None:
                try:
                    size = os.path.getsize(path)
                except OSError:
                    continue
                if done and entry.get("size") == size:
                    continue  # unchanged since the last pass of an earlier process
                tail = self.tails[path] = FileTail(path, self.source.mapper())
            drafts = []
            for line, event in tail.advance(done):
                if event.dedupe_key and event.dedupe_key in self.refs:
                    report["skipped_duplicates"] += 1
                    continue
                if event.dedupe_key:
                    self.refs.add(event.dedupe_key)
                drafts.append(event.draft(self.source.kind, path, line))
            for start in range(0, len(drafts), APPEND_CHUNK):
                self.fabric.append_many(self.session, drafts[start : start + APPEND_CHUNK])
            report["appended"] += len(drafts)
            entry.update({"line": max(done, tail.line), "size": tail.offset})
            self.logged_lines[path] = entry["line"]
        self.fabric.save_capture_cursors(self.cursor_name, cursors)
        return report


def capture(
    fabric: Any,
    workspace: Workspace,
    source_name: str,
    *,
    watch: bool = False,
    interval: float = 2.0,
    on_report: Callable[[dict[str, Any]], None] | None = None,
    max_polls: int | None = None,
    **discover_options: Any,
) -> dict[str, Any]:
    """Run one pass (or poll until interrupted / ``max_polls``); returns the totals."""
    run = CaptureRun(fabric, workspace, SOURCES[source_name], **discover_options)
    totals: dict[str, Any] = {"session": run.session, "appended": 0, "skipped_duplicates": 0, "polls": 0, "files": 0}
    stop = threading.Event()
    previous = _stop_on_interrupt(stop) if watch else None
    try:
        while True:
            report = run.poll()  # never interrupted half-way: Ctrl-C only sets ``stop`` while watching
            totals["polls"] += 1
            totals["files"] = report["files"]
            totals["appended"] += report["appended"]
            totals["skipped_duplicates"] += report["skipped_duplicates"]
            if on_report is not None:
                on_report(report)
            if not watch or stop.is_set() or (max_polls is not None and totals["polls"] >= max_polls):
                return totals
            if stop.wait(interval):
                return totals
    except KeyboardInterrupt:
        return totals
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _stop_on_interrupt(stop: threading.Event) -> Any:
    """Make Ctrl-C (SIGINT) finish the current poll and stop, instead of cutting it short; returns the previous
    handler. Only possible from the main thread; elsewhere Ctrl-C keeps its default behaviour."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, lambda signum, frame: stop.set())
