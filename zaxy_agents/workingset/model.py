"""The working-set value types: cited items grouped into "where was I" sections.

Plain immutable classes with ``__slots__`` (like :class:`~zaxy_agents.eventloom.citations.Citation`) rather
than dataclasses or pydantic: the SessionStart hook builds a working set on every session start and
``dataclasses`` alone costs ~13 ms of import. ``to_dict()`` gives the JSON shape for surfaces and models.
"""

from __future__ import annotations

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

SECTION_KINDS = (
    "task",
    "instruction",
    "decision",
    "fact",
    "unknown",
    "file",
    "command",
    "prompt",
    "reply",
    "compaction",
)
# Sections folded over the whole log (cached incrementally) vs. read from the recent window only.
STANDING_SECTIONS = ("open_tasks", "instructions", "decisions", "facts", "unknowns")
RECENT_SECTIONS = ("files", "commands", "prompts", "replies", "compactions")


class WorkingItem:
    """One line of the working set, citing the event it was derived from.

    ``kind``: one of :data:`SECTION_KINDS`; ``text``: a one-line summary; ``citation``:
    ``eventloom://<session>/events/<seq>#<hash12>`` of the latest event that shaped the item (for a task, its
    last update); ``detail``: the structured fields behind the text (``task_id``, ``status``, ``path``,
    ``exit_code``, ...).
    """

    __slots__ = ("citation", "detail", "kind", "seq", "text", "timestamp")

    def __init__(
        self, kind: str, text: str, citation: str, seq: int, timestamp: str, detail: dict[str, Any] | None = None
    ) -> None:
        for name, value in (
            ("kind", kind),
            ("text", text),
            ("citation", citation),
            ("seq", seq),
            ("timestamp", timestamp),
            ("detail", dict(detail or {})),
        ):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("WorkingItem is immutable")

    def __repr__(self) -> str:
        return f"WorkingItem({self.kind!r}, {self.text!r}, {self.citation!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WorkingItem) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.kind, self.citation, self.text))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "citation": self.citation,
            "seq": self.seq,
            "timestamp": self.timestamp,
            "detail": dict(self.detail),
        }


class WorkingSet:
    """A log-derived digest of one session's (or one workspace's) current state.

    Standing sections (open tasks, user instructions, decisions, facts, unknowns) are folded over the *whole*
    log, however long (incrementally, through a cache tied to the log's head); recent sections (files,
    commands, prompts, replies, compactions) come from the last ``window`` events:
    ``window_from_seq..window_to_seq`` is that range and ``complete`` is True when it starts at seq 1. Every
    section is ordered most recent first (tasks by their last update). ``sessions`` lists the sessions merged
    into it (one unless a workspace's clients are recalled together); every item cites its own session.
    """

    __slots__ = (
        "commands",
        "compactions",
        "complete",
        "decisions",
        "facts",
        "files",
        "head_citation",
        "head_seq",
        "instructions",
        "integrity_errors",
        "open_tasks",
        "prompts",
        "replies",
        "session",
        "sessions",
        "unknowns",
        "window_from_seq",
        "window_to_seq",
    )

    def __init__(
        self,
        session: str,
        *,
        head_seq: int = 0,
        head_citation: str | None = None,
        window_from_seq: int = 1,
        window_to_seq: int = 0,
        open_tasks: tuple[WorkingItem, ...] = (),
        instructions: tuple[WorkingItem, ...] = (),
        decisions: tuple[WorkingItem, ...] = (),
        facts: tuple[WorkingItem, ...] = (),
        unknowns: tuple[WorkingItem, ...] = (),
        files: tuple[WorkingItem, ...] = (),
        commands: tuple[WorkingItem, ...] = (),
        prompts: tuple[WorkingItem, ...] = (),
        replies: tuple[WorkingItem, ...] = (),
        compactions: tuple[WorkingItem, ...] = (),
        sessions: tuple[str, ...] = (),
        integrity_errors: tuple[str, ...] = (),
    ) -> None:
        values = {
            "session": session,
            "sessions": tuple(sessions) or (session,),
            "head_seq": head_seq,
            "head_citation": head_citation,
            "window_from_seq": window_from_seq,
            "window_to_seq": window_to_seq,
            "complete": window_from_seq <= 1,
            "open_tasks": tuple(open_tasks),
            "instructions": tuple(instructions),
            "decisions": tuple(decisions),
            "facts": tuple(facts),
            "unknowns": tuple(unknowns),
            "files": tuple(files),
            "commands": tuple(commands),
            "prompts": tuple(prompts),
            "replies": tuple(replies),
            "compactions": tuple(compactions),
            "integrity_errors": tuple(integrity_errors),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("WorkingSet is immutable")

    def __repr__(self) -> str:
        counts = ", ".join(f"{name}={len(items)}" for name, items in self.sections())
        return f"WorkingSet({self.session!r}, head_seq={self.head_seq}, {counts})"

    def sections(self) -> list[tuple[str, tuple[WorkingItem, ...]]]:
        """``(section name, items)`` in a stable order."""
        return [
            ("open_tasks", self.open_tasks),
            ("instructions", self.instructions),
            ("decisions", self.decisions),
            ("facts", self.facts),
            ("unknowns", self.unknowns),
            ("files", self.files),
            ("commands", self.commands),
            ("prompts", self.prompts),
            ("replies", self.replies),
            ("compactions", self.compactions),
        ]

    def items(self) -> list[WorkingItem]:
        return [item for _name, items in self.sections() for item in items]

    @property
    def is_empty(self) -> bool:
        return not any(items for _name, items in self.sections())

    def without(self, citations: set[str], integrity_errors: list[str]) -> WorkingSet:
        """This working set minus the items citing ``citations`` (events that failed their read-side check),
        carrying ``integrity_errors`` (the warnings naming them)."""
        if not citations and not integrity_errors:
            return self
        kept = {name: tuple(i for i in items if i.citation not in citations) for name, items in self.sections()}
        return WorkingSet(
            self.session,
            head_seq=self.head_seq,
            head_citation=self.head_citation,
            window_from_seq=self.window_from_seq,
            window_to_seq=self.window_to_seq,
            sessions=self.sessions,
            integrity_errors=(*self.integrity_errors, *integrity_errors),
            **kept,
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "session": self.session,
            "sessions": list(self.sessions),
            "head_seq": self.head_seq,
            "head_citation": self.head_citation,
            "window": {"from_seq": self.window_from_seq, "to_seq": self.window_to_seq, "complete": self.complete},
        }
        for name, items in self.sections():
            data[name] = [item.to_dict() for item in items]
        if self.integrity_errors:
            data["integrity_errors"] = list(self.integrity_errors)
        return data
