"""Candidate proposals from the log: deterministic segment selection and episode/claim/procedure drafts.

Segments are built over *actionable* events (tool calls, commands, file edits, task completions,
coordination findings). A segment ends with a completed task; long stretches are cut into windows of
``window_size`` actionable events counted from the segment's start (a lone completion left over joins the
window it closes). Closed segments never change as the log grows; an open trailing stretch is only proposed
once it fills a whole window, and a leading stretch cut off by the scan bound is skipped. So segment ids (and
candidate ids) are stable and the same log always yields the same proposals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zaxy_agents.eventloom.models import Event
from zaxy_agents.procedures.steps import Step, collapse, is_self_generated, step_of

ACTIONABLE_TYPES = frozenset({"tool.call.completed", "command.completed", "file.edit.applied", "task.completed"})
FINDING_PREFIX = "coordination.finding"
MIN_SEGMENT_EVENTS = 2
LOG_SEGMENT_METHOD = "log_segment_v1"
CONFIDENCE = {"episode": 0.7, "claim": 0.6, "procedure": 0.5}


def is_actionable(event_type: str) -> bool:
    return event_type in ACTIONABLE_TYPES or event_type.startswith(FINDING_PREFIX)


@dataclass
class Segment:
    session: str
    events: list[Event]
    closed: bool  # ended by a completed task

    @property
    def segment_id(self) -> str:
        """Seed 001: ``segment:<session>:<first seq>-<last seq>`` (six-digit seqs), stable for the same log window."""
        return f"segment:{self.session}:{self.events[0].seq:06d}-{self.events[-1].seq:06d}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "segment_id": self.segment_id,
            "first_seq": self.events[0].seq,
            "last_seq": self.events[-1].seq,
            "events": len(self.events),
            "closed": self.closed,
        }


@dataclass
class Proposal:
    """A candidate to be: everything but its id, which the contract derives from type, title and sources."""

    candidate_type: str
    title: str
    summary: str
    sources: list[Event]
    confidence: float
    segment_id: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Selection:
    segments: list[Segment]
    skipped_truncated: int  # actionable events before the first boundary when the scan did not start at seq 1
    open_events: int  # actionable events waiting for a boundary or a full window


def select_segments(events: list[Event], *, window_size: int, from_start: bool) -> Selection:
    """Cut the actionable events of one session into stable segments (see the module docstring)."""
    actionable = [event for event in events if is_actionable(event.type) and not is_self_generated(event)]
    groups: list[tuple[list[Event], bool]] = []
    current: list[Event] = []
    for event in actionable:
        current.append(event)
        if event.type == "task.completed":
            groups.append((current, True))
            current = []
    skipped = 0
    if not from_start and groups:
        skipped = len(groups[0][0])
        groups = groups[1:]
    elif not from_start:
        skipped, current = len(current), []
    segments: list[Segment] = []
    open_events = 0
    session = events[0].session if events else ""
    for group, closed in [*groups, (current, False)]:
        windows = [group[start : start + window_size] for start in range(0, len(group), window_size)]
        if closed and len(windows) > 1 and len(windows[-1]) < MIN_SEGMENT_EVENTS:
            windows[-2:] = [windows[-2] + windows[-1]]  # a lone task completion joins the window it closes
        for index, window in enumerate(windows):
            if not closed and len(window) < window_size:
                open_events += len(window)
            elif len(window) >= MIN_SEGMENT_EVENTS:
                segments.append(Segment(session, window, closed and index == len(windows) - 1))
    return Selection(segments, skipped, open_events)


def propose(segment: Segment) -> list[Proposal]:
    """Episode (always), claims (one per coordination finding) and a procedure (successful multi-step work)."""
    proposals = [_episode(segment)]
    proposals += [_claim(segment, event) for event in segment.events if event.type.startswith(FINDING_PREFIX)]
    procedure = _procedure(segment)
    if procedure is not None:
        proposals.append(procedure)
    return proposals


def procedure_title(labels: list[str] | tuple[str, ...]) -> str:
    title = "Procedure: " + " → ".join(labels)
    return title if len(title) <= 200 else title[:199] + "…"


def _episode(segment: Segment) -> Proposal:
    events = segment.events
    first, last = events[0].seq, events[-1].seq
    task = next((_task_name(e) for e in reversed(events) if e.type == "task.completed"), None)
    commands = [_payload_text(e, "command", "cmd") for e in events if e.type == "command.completed"]
    failed = sum(1 for e in events if e.type == "command.completed" and e.payload.get("exit_code") not in (0, None))
    tools = sorted({_payload_text(e, "tool", "tool_name", "name") for e in events if e.type == "tool.call.completed"})
    files = sorted({_payload_text(e, "path", "file_path", "file") for e in events if e.type == "file.edit.applied"})
    findings = sum(1 for e in events if e.type.startswith(FINDING_PREFIX))
    parts = [f"{len(events)} actions in {segment.session} (events {first}-{last})"]
    if commands:
        parts.append(f"ran {len(commands)} commands ({failed} failed): " + "; ".join(c[:60] for c in commands[:5]))
    if tools:
        parts.append("used tools " + ", ".join(t for t in tools[:8] if t))
    if files:
        parts.append("edited " + ", ".join(f for f in files[:8] if f))
    if findings:
        parts.append(f"recorded {findings} coordination findings")
    if task:
        parts.append(f"completed task {task}")
    title = f"Episode: {task} (events {first}-{last})" if task else f"Episode: events {first}-{last}"
    return Proposal(
        "episode",
        title[:200],
        ". ".join(parts) + ".",
        list(events),
        CONFIDENCE["episode"],
        segment.segment_id,
        {"first_seq": first, "last_seq": last, "closed": segment.closed},
    )


def _claim(segment: Segment, event: Event) -> Proposal:
    text = _payload_text(event, "finding", "summary", "text", "claim", "message") or event.type
    title = f"Finding: {' '.join(text.split())}"
    return Proposal(
        "claim",
        title if len(title) <= 200 else title[:199] + "…",
        text[:4000],
        [event],
        CONFIDENCE["claim"],
        segment.segment_id,
        {"finding_seq": event.seq},
    )


def _procedure(segment: Segment) -> Proposal | None:
    steps = [step for step in (step_of(e) for e in segment.events) if step is not None]
    succeeded = segment.closed or (bool(steps) and steps[-1].ok)
    good: list[Step] = collapse([step for step in steps if step.ok])
    if not succeeded or len(good) < 2:
        return None
    labels = [step.label for step in good]
    task = next((_task_name(e) for e in reversed(segment.events) if e.type == "task.completed"), None)
    numbered = "; ".join(f"{index}. {label}" for index, label in enumerate(labels, start=1))
    summary = f"Steps that {'completed task ' + task if task else 'succeeded'} in {segment.session}: {numbered}."
    completion = [e for e in segment.events if e.type == "task.completed"]
    return Proposal(
        "procedure",
        procedure_title(labels),
        summary,
        [step.event for step in good] + completion,
        CONFIDENCE["procedure"],
        segment.segment_id,
        {"steps": labels, "support": 1},
    )


def _task_name(event: Event) -> str:
    return _payload_text(event, "title", "task_id", "id", "name") or f"#{event.seq}"


def _payload_text(event: Event, *keys: str) -> str:
    for key in keys:
        value = event.payload.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""
