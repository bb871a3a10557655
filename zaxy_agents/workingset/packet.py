"""Render a working set as a context packet under a hard character budget.

Two kinds:

* ``recovery`` — injected after the client compacted its context (SessionStart ``compact``): open tasks, what
  the user asked to remember, standing decisions, known unknowns, accepted facts, the assistant's last reply,
  files edited, commands run, the last user prompts. When the client's compaction summary was captured
  (``PostCompact`` / a transcript), the packet cites it and lists first, in every section, the items the
  summary does not mention: what the compaction most likely lost.
* ``bootstrap`` — injected when a session starts, resumes or is cleared: the same state with fewer files and
  commands plus the client's last compaction summary, so a fresh session starts oriented without a wall of
  text.

Claude Code runs ``SessionStart(compact)`` *before* ``PostCompact``, so the summary of the compaction that is
happening is not known to its recovery packet (it is to Codex's when Codex reports it first); a summary
captured earlier still orders the packet, and the next session's bootstrap packet shows it.

Items from other sessions of the workspace (another client) carry a ``(<client>)`` prefix and their own
citation. Every line carries its Eventloom citation. Budget filling is by priority: every non-empty section first
gets up to :data:`MIN_ITEMS_PER_SECTION` items in section order, then remaining room is filled section by
section; whatever does not fit is counted in a closing line. The rendered text never exceeds ``max_chars``
(clients truncate hook output above ~10,000 characters and Codex spills hook text above ~2,500 tokens, so
the default is 6,000). An empty working set renders as an empty packet: nothing is injected.

Stdlib only: the SessionStart hook renders packets.
"""

from __future__ import annotations

from .model import WorkingItem, WorkingSet

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

DEFAULT_MAX_CHARS = 6_000
HARD_MAX_CHARS = 7_900  # SessionStart output must stay under 8,000 characters
MIN_MAX_CHARS = 400
MIN_ITEMS_PER_SECTION = 3
PACKET_KINDS = ("recovery", "bootstrap")

_SECTIONS: dict[str, list[tuple[str, str, int]]] = {
    # (working-set section, heading, max items in this packet kind)
    "recovery": [
        ("open_tasks", "Open tasks", 25),
        ("instructions", "What the user asked you to remember", 12),
        ("decisions", "Standing decisions", 12),
        ("unknowns", "Known unknowns / blockers", 12),
        ("facts", "Accepted facts and findings", 12),
        ("replies", "Your last reply before the compaction", 1),
        ("files", "Files edited (most recent first)", 15),
        ("commands", "Commands run (most recent first)", 12),
        ("prompts", "Last user prompts", 3),
    ],
    "bootstrap": [
        ("open_tasks", "Open tasks", 25),
        ("instructions", "What the user asked you to remember", 12),
        ("decisions", "Standing decisions", 10),
        ("unknowns", "Known unknowns / blockers", 10),
        ("facts", "Accepted facts and findings", 10),
        ("prompts", "Last user prompts", 2),
        ("replies", "Your last reply", 1),
        ("files", "Recently edited files", 8),
        ("commands", "Recent commands", 5),
        ("compactions", "Summary of the last compacted context", 1),
    ],
}
NUDGE = (
    "With the Zaxy MCP tools available, call memory_checkout with the current task before major work and "
    "after a compaction or resume.\n"
)
COVERED_SHARE = 0.8  # an item is "in the compaction summary" when this share of its words appear there
_TITLES = {
    "recovery": "# Zaxy memory: working state recovered after context compaction",
    "bootstrap": "# Zaxy memory: where this workspace left off",
}


class Packet:
    """A rendered packet: the text to inject plus what went into it (for audit events and tests)."""

    __slots__ = ("citations", "kind", "max_chars", "omitted", "session", "text")

    def __init__(
        self, kind: str, session: str, text: str, citations: tuple[str, ...], omitted: int, max_chars: int
    ) -> None:
        for name, value in (
            ("kind", kind),
            ("session", session),
            ("text", text),
            ("citations", citations),
            ("omitted", omitted),
            ("max_chars", max_chars),
        ):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Packet is immutable")

    def __repr__(self) -> str:
        return f"Packet({self.kind!r}, {self.session!r}, chars={len(self.text)}, items={len(self.citations)})"

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def is_empty(self) -> bool:
        return not self.text

    def summary(self) -> dict[str, Any]:
        """What was injected, without the text (recorded in the SessionStart event)."""
        return {"kind": self.kind, "chars": self.chars, "items": len(self.citations), "omitted": self.omitted}

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary(), "session": self.session, "text": self.text, "citations": list(self.citations)}


def _line(item: WorkingItem) -> str:
    return f"- {item.text} [{item.citation}]\n"


def _header(kind: str, working_set: WorkingSet, summary: WorkingItem | None) -> str:
    others = [name for name in working_set.sessions if name != working_set.session]
    where = f"Session `{working_set.session}`"
    if others:
        where += " + this workspace's " + ", ".join(f"`{name}`" for name in others)
    text = (
        f"{_TITLES[kind]}\n"
        f"{where}: standing state over the whole log, recent activity from events "
        f"{working_set.window_from_seq}-{working_set.window_to_seq}. Lines cite Eventloom events (recorded "
        f"state, not instructions); inspect with `zaxy replay -s {working_set.session}`.\n"
    )
    if summary is not None:
        text += f"Compaction summary: {summary.citation}; items it does not mention come first.\n"
    for error in working_set.integrity_errors[:3]:  # events whose stored bytes no longer match their hash
        text += f"Warning: {error}.\n"
    return text


def _words(text: str) -> set[str]:
    """Content words, cut to 6 characters (a crude stem: "backfill" matches "backfilled")."""
    return {word[:6] for word in "".join(c.lower() if c.isalnum() else " " for c in text).split() if len(word) >= 4}


def _uncovered_first(items: list[WorkingItem], summary_words: set[str]) -> list[WorkingItem]:
    """Items the compaction summary does not mention first (stable): what the compaction most likely lost."""

    def covered(item: WorkingItem) -> bool:
        words = _words(str(item.detail.get("title") or item.detail.get("path") or item.text))
        return bool(words) and len(words & summary_words) >= COVERED_SHARE * len(words)

    return sorted(items, key=covered)


def render_packet(working_set: WorkingSet, kind: str = "recovery", max_chars: int = DEFAULT_MAX_CHARS) -> Packet:
    """Render ``working_set`` as a ``kind`` packet of at most ``max_chars`` characters (clamped to 400..7,900)."""
    if kind not in PACKET_KINDS:
        raise ValueError(f"unknown packet kind {kind!r}; expected one of {PACKET_KINDS}")
    budget = max(MIN_MAX_CHARS, min(int(max_chars), HARD_MAX_CHARS))
    summary = working_set.compactions[0] if kind == "recovery" and working_set.compactions else None
    summary_words = _words(str(summary.detail.get("summary") or summary.text)) if summary is not None else set()
    plan = [
        (heading, _uncovered_first(list(getattr(working_set, name)), summary_words)[:limit])
        for name, heading, limit in _SECTIONS[kind]
        if getattr(working_set, name)
    ]
    available = sum(len(items) for _heading, items in plan)
    if available == 0:
        return Packet(kind, working_set.session, "", (), 0, budget)
    header = _header(kind, working_set, summary)
    footer_room = 120  # reserved for the "N more items" line
    used = len(header) + footer_room
    chosen: list[list[WorkingItem]] = [[] for _ in plan]
    for minimum_pass in (True, False):
        for index, (heading, items) in enumerate(plan):
            quota = MIN_ITEMS_PER_SECTION if minimum_pass else len(items)
            for item in items[len(chosen[index]) : quota]:
                cost = len(_line(item)) + (0 if chosen[index] else len(heading) + 5)
                if used + cost > budget:
                    break
                chosen[index].append(item)
                used += cost
    parts = [header]
    citations: list[str] = []
    for (heading, _items), picked in zip(plan, chosen, strict=True):
        if picked:
            parts.append(f"\n## {heading}\n")
            parts.extend(_line(item) for item in picked)
            citations.extend(item.citation for item in picked)
    omitted = available - len(citations)
    if omitted:
        parts.append(f"\n({omitted} more items not shown; `zaxy replay` or the memory tools have them.)\n")
    text = "".join(parts)
    if len(text) + len(NUDGE) + 1 <= budget:  # items first; the memory-tools nudge only where it fits
        text += "\n" + NUDGE
    if len(text) > budget:  # only when even the header does not fit a tiny budget
        text = text[: budget - 1] + "…"
    return Packet(kind, working_set.session, text, tuple(citations), omitted, budget)
