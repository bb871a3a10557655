"""Build a :class:`WorkingSet` from a session's event envelopes: a pure function of the log.

Vocabulary read (other event types are ignored, so any producer can contribute by using these types):

* tasks — opened/updated by ``task.created``, ``task.updated``, ``task.started``, ``task.blocked``; closed by
  ``task.completed``, ``task.closed``, ``task.cancelled``, ``task.done``, or an update whose ``status`` is
  done/completed/closed/cancelled/resolved. Keyed by ``task_id`` (or ``id``, else the title).
* decisions — ``decision.recorded``/``made``/``accepted``; dropped by ``decision.superseded``/``revoked``.
* facts — ``fact.asserted``/``recorded``, ``finding.accepted``; dropped by ``fact.retracted``,
  ``finding.rejected``.
* known unknowns — ``question.raised``/``opened``, ``unknown.recorded``/``raised``, ``blocker.raised``/
  ``recorded``; dropped by ``question.answered``/``resolved``, ``unknown.resolved``, ``blocker.resolved``/
  ``cleared``.
* files — ``file.edit.applied`` (latest per path, with edit counts); commands — ``command.completed``
  (latest per command text, with exit code); prompts — ``hook.user_prompt_submitted`` and user
  ``transcript.turn``; compactions — ``hook.postcompact`` summaries and ``transcript.compacted``.
* any event whose payload has ``supersedes`` (a citation or a list of them) removes the cited items.

Stdlib only: the SessionStart hook calls it.
"""

from __future__ import annotations

import json

from zaxy_agents.eventloom.citations import format_citation

from .model import WorkingItem, WorkingSet

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

DEFAULT_WINDOW = 2_000  # events read from the tail of the log
ITEM_TEXT_MAX_CHARS = 280
DEFAULT_LIMITS = {
    "open_tasks": 25,
    "decisions": 12,
    "facts": 12,
    "unknowns": 12,
    "files": 15,
    "commands": 12,
    "prompts": 5,
    "compactions": 1,
}

TASK_OPEN = frozenset({"task.created", "task.updated", "task.started", "task.blocked", "task.reopened"})
TASK_CLOSE = frozenset({"task.completed", "task.closed", "task.cancelled", "task.done"})
CLOSED_STATUSES = frozenset({"done", "completed", "complete", "closed", "cancelled", "canceled", "resolved"})
DECISION_ADD = frozenset({"decision.recorded", "decision.made", "decision.accepted"})
DECISION_DROP = frozenset({"decision.superseded", "decision.revoked", "decision.reverted"})
FACT_ADD = frozenset({"fact.asserted", "fact.recorded", "finding.accepted"})
FACT_DROP = frozenset({"fact.retracted", "finding.rejected", "finding.retracted"})
UNKNOWN_ADD = frozenset(
    {"question.raised", "question.opened", "unknown.recorded", "unknown.raised", "blocker.raised", "blocker.recorded"}
)
UNKNOWN_DROP = frozenset(
    {"question.answered", "question.resolved", "unknown.resolved", "blocker.resolved", "blocker.cleared"}
)
PROMPT_TYPES = frozenset({"hook.user_prompt_submitted"})
COMPACTION_TYPES = frozenset({"hook.postcompact", "transcript.compacted"})
# Every type the digest reads (readers may skip decoding any other event).
RELEVANT_TYPES = (
    TASK_OPEN
    | TASK_CLOSE
    | DECISION_ADD
    | DECISION_DROP
    | FACT_ADD
    | FACT_DROP
    | UNKNOWN_ADD
    | UNKNOWN_DROP
    | PROMPT_TYPES
    | COMPACTION_TYPES
    | {"file.edit.applied", "command.completed", "transcript.turn"}
)

_ID_KEYS = {
    "task": ("task_id", "id"),
    "decision": ("decision_id", "id"),
    "fact": ("fact_id", "finding_id", "id"),
    "unknown": ("question_id", "unknown_id", "blocker_id", "id"),
}
_TEXT_KEYS = {
    "task": ("title", "task", "text", "description", "summary"),
    "decision": ("decision", "text", "title", "summary"),
    "fact": ("fact", "finding", "text", "statement", "summary", "title"),
    "unknown": ("question", "unknown", "blocker", "text", "description", "title"),
}


def one_line(text: object, limit: int = ITEM_TEXT_MAX_CHARS) -> str:
    """Collapse whitespace to one line and cut to ``limit`` characters."""
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False, sort_keys=True) if text is not None else ""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _first(payload: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = payload.get(key)
        if value not in (None, ""):
            return value
    return None


def _key(kind: str, payload: dict[str, Any]) -> str | None:
    value = _first(payload, _ID_KEYS[kind])
    if value is not None:
        return f"id:{value}"
    text = _first(payload, _TEXT_KEYS[kind])
    return f"text:{one_line(text).lower()}" if text is not None else None


class _Builder:
    """Folds envelopes (in seq order) into per-section state; order-preserving dicts keep it O(events).

    Sections hold cheap ``(kind, text, envelope, detail)`` tuples; :class:`WorkingItem` objects (citation,
    one-line text) are built only for what survives the limits, which keeps a 2,000-event fold fast enough for
    the SessionStart hook.
    """

    def __init__(self, session: str) -> None:
        self.session = session
        self.tasks: dict[str, dict[str, Any]] = {}
        self.decisions: dict[str, tuple[Any, ...]] = {}
        self.facts: dict[str, tuple[Any, ...]] = {}
        self.unknowns: dict[str, tuple[Any, ...]] = {}
        self.files: dict[str, tuple[Any, ...]] = {}
        self.commands: dict[str, tuple[Any, ...]] = {}
        self.prompts: list[tuple[Any, ...]] = []
        self.compactions: list[tuple[Any, ...]] = []
        self.superseded: set[str] = set()
        self.first_seq = 0
        self.last: dict[str, Any] | None = None

    def item(self, pending: tuple[Any, ...]) -> WorkingItem:
        kind, text, envelope, detail = pending
        seq = int(envelope["seq"])
        citation = format_citation(self.session, seq, str(envelope["hash"]))
        return WorkingItem(kind, one_line(text), citation, seq, str(envelope.get("timestamp", "")), detail)

    def feed(self, envelope: dict[str, Any]) -> None:
        if not self.first_seq:
            self.first_seq = int(envelope["seq"])
        self.last = envelope
        kind = envelope.get("type", "")
        payload = envelope.get("payload")
        payload = payload if isinstance(payload, dict) else {}
        supersedes = payload.get("supersedes")
        if supersedes:
            self.superseded.update([supersedes] if isinstance(supersedes, str) else map(str, supersedes))
        if kind == "command.completed":
            self.command(payload, envelope)
        elif kind == "file.edit.applied":
            self.file(payload, envelope)
        elif kind in TASK_OPEN or kind in TASK_CLOSE:
            self.task(kind, payload, envelope)
        elif kind in DECISION_ADD or kind in DECISION_DROP:
            self.toggle("decision", self.decisions, kind in DECISION_ADD, payload, envelope)
        elif kind in FACT_ADD or kind in FACT_DROP:
            self.toggle("fact", self.facts, kind in FACT_ADD, payload, envelope)
        elif kind in UNKNOWN_ADD or kind in UNKNOWN_DROP:
            self.toggle("unknown", self.unknowns, kind in UNKNOWN_ADD, payload, envelope)
        elif kind in PROMPT_TYPES or (kind == "transcript.turn" and payload.get("role") == "user"):
            text = payload.get("prompt") if kind in PROMPT_TYPES else payload.get("text")
            if isinstance(text, str) and text.strip():
                self.prompts.append(("prompt", text, envelope, {}))
        elif kind in COMPACTION_TYPES:
            summary = payload.get("compact_summary") or payload.get("summary")
            if isinstance(summary, str) and summary.strip():
                detail = {"trigger": payload.get("trigger")} if payload.get("trigger") else {}
                self.compactions.append(("compaction", summary, envelope, detail))

    def task(self, kind: str, payload: dict[str, Any], envelope: dict[str, Any]) -> None:
        key = _key("task", payload)
        if key is None:
            return
        status = str(payload.get("status") or "").lower()
        if kind in TASK_CLOSE or status in CLOSED_STATUSES:
            self.tasks.pop(key, None)
            return
        state = self.tasks.get(key) or {"task_id": _first(payload, _ID_KEYS["task"]), "status": "open"}
        title = _first(payload, _TEXT_KEYS["task"])
        if title is not None:
            state["title"] = title
        if status:
            state["status"] = status
        elif kind == "task.started":
            state["status"] = "in_progress"
        elif kind == "task.blocked":
            state["status"] = "blocked"
        state["envelope"] = envelope
        self.tasks[key] = state

    def toggle(
        self,
        kind: str,
        into: dict[str, tuple[Any, ...]],
        add: bool,
        payload: dict[str, Any],
        envelope: dict[str, Any],
    ) -> None:
        key = _key(kind, payload)
        if key is None:
            return
        into.pop(key, None)  # re-insert so the dict stays ordered by recency
        if not add:
            return
        text = str(_first(payload, _TEXT_KEYS[kind]))
        detail = {k: payload[k] for k in (*_ID_KEYS[kind], "subject", "rationale", "status") if k in payload}
        if kind == "fact" and payload.get("subject") and not text.startswith(str(payload["subject"])):
            text = f"{payload['subject']}: {text}"
        if kind == "decision" and payload.get("rationale"):
            text = f"{text} — because {one_line(payload['rationale'], 160)}"
        into[key] = (kind, text, envelope, detail)

    def file(self, payload: dict[str, Any], envelope: dict[str, Any]) -> None:
        path = payload.get("path")
        if not isinstance(path, str) or not path:
            return
        previous = self.files.pop(path, None)
        before = previous[3] if previous else {"edits": 0, "lines_added": 0, "lines_removed": 0}
        detail = {
            "path": path,
            "operation": str(payload.get("operation") or "edit"),
            "edits": before["edits"] + 1,
            "lines_added": before["lines_added"] + int(payload.get("lines_added") or 0),
            "lines_removed": before["lines_removed"] + int(payload.get("lines_removed") or 0),
        }
        self.files[path] = ("file", None, envelope, detail)

    def command(self, payload: dict[str, Any], envelope: dict[str, Any]) -> None:
        command = payload.get("command")
        if not isinstance(command, str):
            return
        key = command.strip()
        if not key:
            return
        self.commands.pop(key, None)
        self.commands[key] = ("command", None, envelope, {"command": command, "exit_code": payload.get("exit_code")})

    @staticmethod
    def text_of(pending: tuple[Any, ...]) -> tuple[Any, ...]:
        """Fill in the text of file and command entries (built late: only survivors need it)."""
        kind, text, envelope, detail = pending
        if kind == "file":
            suffix = f", {detail['edits']} edits" if detail["edits"] > 1 else ""
            text = (
                f"{detail['path']} ({detail['operation']}, +{detail['lines_added']}/-{detail['lines_removed']}{suffix})"
            )
        elif kind == "command":
            code = detail["exit_code"]
            text = f"`{one_line(detail['command'], 200)}` → " + ("exit ?" if code is None else f"exit {code}")
        return kind, text, envelope, detail

    def recent(self, pendings: Iterable[tuple[Any, ...]], limit: int) -> tuple[WorkingItem, ...]:
        """Newest first, skipping superseded items, building at most ``limit`` items."""
        chosen: list[WorkingItem] = []
        for pending in reversed(list(pendings)):
            if len(chosen) >= limit:
                break
            item = self.item(self.text_of(pending))
            if item.citation not in self.superseded:
                chosen.append(item)
        return tuple(chosen)

    def result(self, limits: dict[str, int], head_seq: int, head_citation: str | None) -> WorkingSet:
        tasks = []
        for state in sorted(self.tasks.values(), key=lambda state: int(state["envelope"]["seq"])):
            title = state.get("title") or state.get("task_id") or "untitled task"
            task_id = state.get("task_id")
            text = f"[{state['status']}] {title}" + (f" ({task_id})" if task_id and task_id != title else "")
            detail = {k: state[k] for k in ("task_id", "status", "title") if state.get(k) is not None}
            tasks.append(("task", text, state["envelope"], detail))
        last_seq = int(self.last["seq"]) if self.last else 0
        last_citation = format_citation(self.session, last_seq, str(self.last["hash"])) if self.last else None
        return WorkingSet(
            self.session,
            head_seq=head_seq or last_seq,
            head_citation=head_citation or last_citation,
            window_from_seq=self.first_seq or 1,
            window_to_seq=last_seq,
            open_tasks=self.recent(tasks, limits["open_tasks"]),  # most recently touched first
            decisions=self.recent(self.decisions.values(), limits["decisions"]),
            facts=self.recent(self.facts.values(), limits["facts"]),
            unknowns=self.recent(self.unknowns.values(), limits["unknowns"]),
            files=self.recent(self.files.values(), limits["files"]),
            commands=self.recent(self.commands.values(), limits["commands"]),
            prompts=self.recent(self.prompts, limits["prompts"]),
            compactions=self.recent(self.compactions, limits["compactions"]),
        )


def build_working_set(
    session: str,
    envelopes: Iterable[dict[str, Any]],
    *,
    head_seq: int = 0,
    head_citation: str | None = None,
    window_from_seq: int | None = None,
    limits: dict[str, int] | None = None,
) -> WorkingSet:
    """Fold ``envelopes`` (one session, ascending seq; normally the last :data:`DEFAULT_WINDOW`) into a digest.

    Events whose type is not in :data:`RELEVANT_TYPES` may be left out by the caller; ``window_from_seq`` then
    says where the read range started (default: the first envelope's seq).
    """
    builder = _Builder(session)
    for envelope in envelopes:
        builder.feed(envelope)
    if window_from_seq is not None:
        builder.first_seq = window_from_seq
    return builder.result({**DEFAULT_LIMITS, **(limits or {})}, head_seq, head_citation)
