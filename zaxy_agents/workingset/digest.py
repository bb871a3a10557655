"""Fold a session's events into a :class:`WorkingSet`: a pure function of the log.

Vocabulary read (other event types are ignored, so any producer can contribute by using these types):

* tasks — opened/updated by ``task.created``, ``task.updated``, ``task.started``, ``task.blocked``; closed by
  ``task.completed``, ``task.closed``, ``task.cancelled``, ``task.done``, or an update whose ``status`` is
  done/completed/closed/cancelled/resolved. Keyed by ``task_id`` (or ``id``, else the title).
* decisions — ``decision.recorded``/``made``/``accepted``; dropped by ``decision.superseded``/``revoked``.
* facts — ``fact.asserted``/``recorded``, ``finding.accepted``; keyed by ``key`` (else ``subject predicate``,
  an id, or the text), so re-asserting a key supersedes; dropped by ``fact.retracted``, ``finding.rejected``
  and ``memory.invalidated`` of that key. Facts the user stated in a prompt (``origin: user_prompt``,
  written by the hooks, see :mod:`zaxy_agents.capture.directives`) form the ``instructions`` section.
* known unknowns — ``question.raised``/``opened``, ``unknown.recorded``/``raised``, ``blocker.raised``/
  ``recorded``; dropped by ``question.answered``/``resolved``, ``unknown.resolved``, ``blocker.resolved``/
  ``cleared``.
* files — ``file.edit.applied`` (latest per path, with edit counts); commands — ``command.completed``
  (latest per command text, with exit code); prompts — ``hook.user_prompt_submitted`` and user
  ``transcript.turn``; replies — ``hook.stopped`` (the client's last assistant message) and assistant
  ``transcript.turn``; compactions — ``hook.postcompact`` summaries and ``transcript.compacted``.
* any event whose payload has ``supersedes`` (a citation or a list of them) removes the cited items.

Two folds: :class:`StandingFold` holds the standing sections (tasks, instructions, decisions, facts,
unknowns) and is meant to be fed the *whole* log once and then only new events (it serialises to JSON for
the cache in :mod:`.cache`, with tombstones so a task closed in one session closes it in a merge with
another); :class:`RecentFold` holds what only the recent window matters for. :func:`merge` turns folds of
one or several sessions into a :class:`WorkingSet`, newest first, every item citing its own session.

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

DEFAULT_WINDOW = 2_000  # events read from the tail of the log for the recent sections
ITEM_TEXT_MAX_CHARS = 280
LONG_TEXT_MAX_CHARS = {"instruction": 400, "reply": 700, "compaction": 700}
DEFAULT_LIMITS = {
    "open_tasks": 25,
    "instructions": 12,
    "decisions": 12,
    "facts": 12,
    "unknowns": 12,
    "files": 15,
    "commands": 12,
    "prompts": 5,
    "replies": 1,
    "compactions": 1,
}
# How much standing state a fold keeps (most recently touched first): far more than any packet shows, and a
# bound on the cache file whatever the log's length.
STANDING_CAP = 400
TOMBSTONE_CAP = 2_000
SUPERSEDED_CAP = 2_000
FOLD_VERSION = 1

TASK_OPEN = frozenset({"task.created", "task.updated", "task.started", "task.blocked", "task.reopened"})
TASK_CLOSE = frozenset({"task.completed", "task.closed", "task.cancelled", "task.done"})
CLOSED_STATUSES = frozenset({"done", "completed", "complete", "closed", "cancelled", "canceled", "resolved"})
DECISION_ADD = frozenset({"decision.recorded", "decision.made", "decision.accepted"})
DECISION_DROP = frozenset({"decision.superseded", "decision.revoked", "decision.reverted"})
FACT_ADD = frozenset({"fact.asserted", "fact.recorded", "finding.accepted"})
FACT_DROP = frozenset({"fact.retracted", "finding.rejected", "finding.retracted"})
INVALIDATED = "memory.invalidated"
UNKNOWN_ADD = frozenset(
    {"question.raised", "question.opened", "unknown.recorded", "unknown.raised", "blocker.raised", "blocker.recorded"}
)
UNKNOWN_DROP = frozenset(
    {"question.answered", "question.resolved", "unknown.resolved", "blocker.resolved", "blocker.cleared"}
)
PROMPT_TYPES = frozenset({"hook.user_prompt_submitted"})
REPLY_TYPES = frozenset({"hook.stopped"})
COMPACTION_TYPES = frozenset({"hook.postcompact", "transcript.compacted"})
USER_ORIGIN = "user_prompt"
STANDING_TYPES = (
    TASK_OPEN
    | TASK_CLOSE
    | DECISION_ADD
    | DECISION_DROP
    | FACT_ADD
    | FACT_DROP
    | UNKNOWN_ADD
    | UNKNOWN_DROP
    | {INVALIDATED}
)
RECENT_TYPES = PROMPT_TYPES | REPLY_TYPES | COMPACTION_TYPES | {"file.edit.applied", "command.completed"}
# Every type the folds read (readers may skip decoding any other event). Events of other types may still
# carry ``supersedes``; readers that skip them lose only that (documented in docs/hooks.md).
RELEVANT_TYPES = STANDING_TYPES | RECENT_TYPES | {"transcript.turn"}

_ID_KEYS = {
    "task": ("task_id", "id"),
    "decision": ("decision_id", "id"),
    "fact": ("key", "fact_id", "finding_id", "id"),
    "unknown": ("question_id", "unknown_id", "blocker_id", "id"),
}
_TEXT_KEYS = {
    "task": ("title", "task", "text", "description", "summary"),
    "decision": ("decision", "text", "title", "summary"),
    "fact": ("fact", "finding", "text", "statement", "summary", "title", "claim"),
    "unknown": ("question", "unknown", "blocker", "text", "description", "title"),
}
_SECTION_OF = {"task": "open_tasks", "decision": "decisions", "fact": "facts", "unknown": "unknowns"}


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
    if kind == "fact" and payload.get("subject") and payload.get("predicate"):
        return f"id:{payload['subject']} {payload['predicate']}"
    text = _first(payload, _TEXT_KEYS[kind])
    return f"text:{one_line(text).lower()}" if text is not None else None


def _stamp(envelope: dict[str, Any]) -> tuple[str, int, str, str]:
    """``(session, seq, hash, timestamp)`` of an envelope: what an item needs to cite it."""
    return (str(envelope.get("session", "")), int(envelope["seq"]), str(envelope["hash"]), str(envelope["timestamp"]))


class StandingFold:
    """Open tasks, decisions, facts (user-stated ones included) and unknowns of one session, over its whole log.

    ``entries[section][key] = [text, session, seq, hash, timestamp, detail]`` (plain lists: JSON as is);
    ``closed[section][key] = timestamp`` remembers what was closed, so a merge across sessions lets the newest
    word win; ``superseded`` holds citations an event named in ``supersedes``. ``covered`` is the ``(seq,
    hash)`` of the last event fed: the cache is valid only while the log still has that event at that seq.
    """

    __slots__ = ("closed", "covered_hash", "covered_seq", "entries", "session", "superseded")

    def __init__(self, session: str) -> None:
        self.session = session
        self.entries: dict[str, dict[str, list[Any]]] = {name: {} for name in _SECTION_OF.values()}
        self.closed: dict[str, dict[str, str]] = {name: {} for name in _SECTION_OF.values()}
        self.superseded: dict[str, str] = {}
        self.covered_seq = 0
        self.covered_hash = ""

    # ------------------------------------------------------------------ feeding
    def feed(self, envelope: dict[str, Any]) -> None:
        kind = envelope.get("type", "")
        payload = envelope.get("payload")
        payload = payload if isinstance(payload, dict) else {}
        supersedes = payload.get("supersedes")
        if supersedes:
            for citation in [supersedes] if isinstance(supersedes, str) else supersedes:
                self.superseded[str(citation)] = str(envelope.get("timestamp", ""))
        if kind in TASK_OPEN or kind in TASK_CLOSE:
            self._task(kind, payload, envelope)
        elif kind in DECISION_ADD or kind in DECISION_DROP:
            self._toggle("decision", kind in DECISION_ADD, payload, envelope)
        elif kind in FACT_ADD or kind in FACT_DROP:
            self._toggle("fact", kind in FACT_ADD, payload, envelope)
        elif kind == INVALIDATED:
            entity_type = payload.get("entity_type") or payload.get("type") or "fact"
            name = payload.get("entity") or payload.get("name") or payload.get("entity_name")
            if entity_type == "fact" and isinstance(name, str) and name:
                for key in (f"id:{name}", f"text:{one_line(name).lower()}"):
                    self._close("facts", key, envelope)
        elif kind in UNKNOWN_ADD or kind in UNKNOWN_DROP:
            self._toggle("unknown", kind in UNKNOWN_ADD, payload, envelope)
        self.covered_seq, self.covered_hash = int(envelope["seq"]), str(envelope["hash"])

    def _close(self, section: str, key: str, envelope: dict[str, Any]) -> None:
        self.entries[section].pop(key, None)
        self.closed[section].pop(key, None)  # re-inserted: the dict stays ordered by recency
        self.closed[section][key] = str(envelope.get("timestamp", ""))

    def _task(self, kind: str, payload: dict[str, Any], envelope: dict[str, Any]) -> None:
        key = _key("task", payload)
        if key is None:
            return
        status = str(payload.get("status") or "").lower()
        tasks = self.entries["open_tasks"]
        if kind in TASK_CLOSE or status in CLOSED_STATUSES:
            self._close("open_tasks", key, envelope)
            return
        previous = tasks.pop(key, None)
        detail = dict(previous[5]) if previous else {"task_id": _first(payload, _ID_KEYS["task"]), "status": "open"}
        title = _first(payload, _TEXT_KEYS["task"])
        if title is not None:
            detail["title"] = one_line(title)
        if status:
            detail["status"] = status
        elif kind == "task.started":
            detail["status"] = "in_progress"
        elif kind == "task.blocked":
            detail["status"] = "blocked"
        elif kind == "task.reopened":
            detail["status"] = "open"
        detail = {name: value for name, value in detail.items() if value is not None}
        self.closed["open_tasks"].pop(key, None)
        tasks[key] = ["", *_stamp(envelope), detail]  # re-inserted: the dict stays ordered by recency

    def _toggle(self, kind: str, add: bool, payload: dict[str, Any], envelope: dict[str, Any]) -> None:
        key = _key(kind, payload)
        if key is None:
            return
        section = _SECTION_OF[kind]
        if not add:
            self._close(section, key, envelope)
            return
        self.entries[section].pop(key, None)
        text = str(_first(payload, _TEXT_KEYS[kind]))
        detail = {k: payload[k] for k in (*_ID_KEYS[kind], "subject", "rationale", "status") if k in payload}
        if kind == "fact" and payload.get("subject") and not text.startswith(str(payload["subject"])):
            text = f"{payload['subject']}: {text}"
        if kind == "decision" and payload.get("rationale"):
            text = f"{text} — because {one_line(payload['rationale'], 160)}"
        if kind == "fact" and payload.get("origin") == USER_ORIGIN:
            detail["origin"] = USER_ORIGIN
            for name in ("client", "directive"):
                if isinstance(payload.get(name), str):
                    detail[name] = payload[name]
        limit = LONG_TEXT_MAX_CHARS["instruction"] if detail.get("origin") == USER_ORIGIN else ITEM_TEXT_MAX_CHARS
        self.closed[section].pop(key, None)
        self.entries[section][key] = [one_line(text, limit), *_stamp(envelope), detail]

    # ------------------------------------------------------------------ persistence
    def trim(self) -> None:
        """Keep the fold bounded (most recent first): what the cache stores whatever the log's length."""
        for section, entries in self.entries.items():
            if len(entries) > STANDING_CAP:
                self.entries[section] = dict(list(entries.items())[-STANDING_CAP:])
        for section, closed in self.closed.items():
            if len(closed) > TOMBSTONE_CAP:
                self.closed[section] = dict(list(closed.items())[-TOMBSTONE_CAP:])
        if len(self.superseded) > SUPERSEDED_CAP:
            self.superseded = dict(list(self.superseded.items())[-SUPERSEDED_CAP:])

    def to_json(self) -> dict[str, Any]:
        self.trim()
        return {
            "version": FOLD_VERSION,
            "session": self.session,
            "covered": {"seq": self.covered_seq, "hash": self.covered_hash},
            "entries": self.entries,
            "closed": self.closed,
            "superseded": self.superseded,
        }

    @classmethod
    def from_json(cls, data: object, session: str) -> StandingFold | None:
        """The fold a cache file holds, or ``None`` when it is not one of this version and session."""
        if not isinstance(data, dict) or data.get("version") != FOLD_VERSION or data.get("session") != session:
            return None
        fold = cls(session)
        try:
            covered = data["covered"]
            fold.covered_seq, fold.covered_hash = int(covered["seq"]), str(covered["hash"])
            for section in fold.entries:
                entries = data["entries"][section]
                closed = data["closed"][section]
                if not isinstance(entries, dict) or not isinstance(closed, dict):
                    return None
                for entry in entries.values():
                    if not (isinstance(entry, list) and len(entry) == 6 and isinstance(entry[5], dict)):
                        return None
                    entry[2] = int(entry[2])
                fold.entries[section] = entries
                fold.closed[section] = {str(key): str(value) for key, value in closed.items()}
            if not isinstance(data["superseded"], dict):
                return None
            fold.superseded = {str(key): str(value) for key, value in data["superseded"].items()}
        except (KeyError, TypeError, ValueError):
            return None
        return fold


class RecentFold:
    """Files, commands, prompts, replies and compactions of the recent window of one session."""

    __slots__ = ("commands", "compactions", "files", "first_seq", "last", "prompts", "replies")

    def __init__(self) -> None:
        self.files: dict[str, list[Any]] = {}
        self.commands: dict[str, list[Any]] = {}
        self.prompts: list[list[Any]] = []
        self.replies: list[list[Any]] = []
        self.compactions: list[list[Any]] = []
        self.first_seq = 0
        self.last: dict[str, Any] | None = None

    def feed(self, envelope: dict[str, Any]) -> None:
        if not self.first_seq:
            self.first_seq = int(envelope["seq"])
        self.last = envelope
        kind = envelope.get("type", "")
        payload = envelope.get("payload")
        payload = payload if isinstance(payload, dict) else {}
        if kind == "command.completed":
            command = payload.get("command")
            if isinstance(command, str) and command.strip():
                self.commands.pop(command.strip(), None)
                detail = {"command": command, "exit_code": payload.get("exit_code")}
                self.commands[command.strip()] = ["", *_stamp(envelope), detail]
        elif kind == "file.edit.applied":
            path = payload.get("path")
            if isinstance(path, str) and path:
                previous = self.files.pop(path, None)
                before = previous[5] if previous else {"edits": 0, "lines_added": 0, "lines_removed": 0}
                detail = {
                    "path": path,
                    "operation": str(payload.get("operation") or "edit"),
                    "edits": before["edits"] + 1,
                    "lines_added": before["lines_added"] + _int(payload.get("lines_added")),
                    "lines_removed": before["lines_removed"] + _int(payload.get("lines_removed")),
                }
                self.files[path] = ["", *_stamp(envelope), detail]
        elif kind in PROMPT_TYPES or (kind == "transcript.turn" and payload.get("role") == "user"):
            text = payload.get("prompt") if kind in PROMPT_TYPES else payload.get("text")
            if isinstance(text, str) and text.strip():
                self.prompts.append([one_line(text), *_stamp(envelope), {}])
        elif kind in REPLY_TYPES or (kind == "transcript.turn" and payload.get("role") == "assistant"):
            text = payload.get("last_assistant_message") if kind in REPLY_TYPES else payload.get("text")
            if isinstance(text, str) and text.strip():
                self.replies.append([one_line(text, LONG_TEXT_MAX_CHARS["reply"]), *_stamp(envelope), {}])
        elif kind in COMPACTION_TYPES:
            summary = payload.get("compact_summary") or payload.get("summary")
            if isinstance(summary, str) and summary.strip():
                detail = {"trigger": payload.get("trigger")} if payload.get("trigger") else {}
                detail["summary"] = summary[:8_000]
                self.compactions.append(
                    [one_line(summary, LONG_TEXT_MAX_CHARS["compaction"]), *_stamp(envelope), detail]
                )


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _text(kind: str, entry: list[Any]) -> str:
    """The display text of an entry (tasks, files and commands are rendered from their detail)."""
    detail = entry[5]
    if kind == "task":
        title = detail.get("title") or detail.get("task_id") or "untitled task"
        task_id = detail.get("task_id")
        return f"[{detail.get('status', 'open')}] {title}" + (f" ({task_id})" if task_id and task_id != title else "")
    if kind == "file":
        suffix = f", {detail['edits']} edits" if detail["edits"] > 1 else ""
        return f"{detail['path']} ({detail['operation']}, +{detail['lines_added']}/-{detail['lines_removed']}{suffix})"
    if kind == "command":
        code = detail["exit_code"]
        return f"`{one_line(detail['command'], 200)}` → " + ("exit ?" if code is None else f"exit {code}")
    return entry[0]


def _item(kind: str, entry: list[Any], prefix: str = "") -> WorkingItem:
    _, session, seq, digest, timestamp, detail = entry
    return WorkingItem(kind, prefix + _text(kind, entry), format_citation(session, seq, digest), seq, timestamp, detail)


def _client_of(session: str) -> str:
    return session.split(".", 1)[0] if "." in session else session


def merge(
    session: str,
    standing: list[StandingFold],
    recent: list[RecentFold],
    *,
    limits: dict[str, int] | None = None,
    head_seq: int = 0,
    head_citation: str | None = None,
    window_from_seq: int | None = None,
) -> WorkingSet:
    """The working set of ``session`` from the folds of it and (optionally) the other sessions of its workspace.

    Per key the newest word wins across sessions (a task opened by one client and closed by another is
    closed); items from another session carry a ``(<client>)`` prefix and cite that session.
    """
    limits = {**DEFAULT_LIMITS, **(limits or {})}
    superseded: set[str] = set()
    for fold in standing:
        superseded.update(fold.superseded)
    sessions = [session, *sorted({fold.session for fold in standing} - {session})]

    def prefix(entry: list[Any]) -> str:
        return "" if entry[1] == session or not entry[1] else f"({_client_of(entry[1])}) "

    def newest(section: str) -> list[list[Any]]:
        winners: dict[str, list[Any]] = {}
        for fold in standing:
            for key, entry in fold.entries[section].items():
                current = winners.get(key)
                if current is None or (entry[4], entry[2]) > (current[4], current[2]):
                    winners[key] = entry
        closed: dict[str, str] = {}
        for fold in standing:
            for key, stamp in fold.closed[section].items():
                closed[key] = max(stamp, closed.get(key, ""))
        alive = [entry for key, entry in winners.items() if key not in closed or entry[4] > closed[key]]
        return sorted(alive, key=lambda entry: (entry[4], entry[2]), reverse=True)

    def pick(kind: str, entries: Iterable[list[Any]], limit: int) -> tuple[WorkingItem, ...]:
        chosen: list[WorkingItem] = []
        for entry in entries:
            if len(chosen) >= limit:
                break
            item = _item(kind, entry, prefix(entry))
            if item.citation not in superseded:
                chosen.append(item)
        return tuple(chosen)

    facts = newest("facts")
    instructions = [entry for entry in facts if entry[5].get("origin") == USER_ORIGIN]
    facts = [entry for entry in facts if entry[5].get("origin") != USER_ORIGIN]

    def recent_entries(name: str) -> list[list[Any]]:
        entries: list[list[Any]] = []
        for fold in recent:
            value = getattr(fold, name)
            entries.extend(value.values() if isinstance(value, dict) else value)
        return sorted(entries, key=lambda entry: (entry[4], entry[2]), reverse=True)

    own = next((fold for fold in recent if fold.last is not None and fold.last.get("session") == session), None)
    own = own or (recent[0] if recent else None)
    last = own.last if own is not None else None
    last_seq = int(last["seq"]) if last else 0
    last_citation = format_citation(session, last_seq, str(last["hash"])) if last else None
    first = window_from_seq if window_from_seq is not None else (own.first_seq if own is not None else 0)
    return WorkingSet(
        session,
        sessions=tuple(sessions),
        head_seq=head_seq or last_seq,
        head_citation=head_citation or last_citation,
        window_from_seq=first or 1,
        window_to_seq=head_seq or last_seq,
        open_tasks=pick("task", newest("open_tasks"), limits["open_tasks"]),
        instructions=pick("instruction", instructions, limits["instructions"]),
        decisions=pick("decision", newest("decisions"), limits["decisions"]),
        facts=pick("fact", facts, limits["facts"]),
        unknowns=pick("unknown", newest("unknowns"), limits["unknowns"]),
        files=pick("file", recent_entries("files"), limits["files"]),
        commands=pick("command", recent_entries("commands"), limits["commands"]),
        prompts=pick("prompt", recent_entries("prompts"), limits["prompts"]),
        replies=pick("reply", recent_entries("replies"), limits["replies"]),
        compactions=pick("compaction", recent_entries("compactions"), limits["compactions"]),
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
    """Fold ``envelopes`` (one session, ascending seq) into a digest: every envelope feeds every section.

    Events whose type is not in :data:`RELEVANT_TYPES` may be left out by the caller; ``window_from_seq`` then
    says where the read range started (default: the first envelope's seq). Long logs go through
    :func:`zaxy_agents.workingset.cache.fold_session` instead, which folds the standing sections over the
    whole log incrementally.
    """
    standing, recent = StandingFold(session), RecentFold()
    for envelope in envelopes:
        envelope = envelope if envelope.get("session") else {**envelope, "session": session}
        standing.feed(envelope)
        recent.feed(envelope)
    return merge(
        session,
        [standing],
        [recent],
        limits=limits,
        head_seq=head_seq,
        head_citation=head_citation,
        window_from_seq=window_from_seq,
    )
