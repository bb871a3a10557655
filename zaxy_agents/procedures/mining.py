"""Mine recurring successful step sequences across sessions (deterministic, no LLM).

A *trace* is a maximal run of consecutive successful steps in one session; a failed step or a completed task
ends it. Every contiguous sub-sequence of 2..``max_length`` labels of a trace is a pattern; its *support* is
the number of distinct sessions it occurs in. Patterns with support >= ``min_support`` are kept, minus those
contained in a longer kept pattern with the same support (closed patterns), so "a b c" seen in three
sessions is proposed once rather than also as "a b" and "b c".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from zaxy_agents.eventloom.models import Event

from .steps import Step, collapse, step_of

TRACE_BREAKERS = frozenset({"task.completed"})
MAX_LENGTH = 6


@dataclass
class MinedProcedure:
    """A recurring sequence: its labels, the sessions it occurred in and one cited occurrence per session."""

    steps: tuple[str, ...]
    occurrences: dict[str, list[Event]] = field(default_factory=dict)

    @property
    def support(self) -> int:
        return len(self.occurrences)

    @property
    def sessions(self) -> list[str]:
        return sorted(self.occurrences)


def traces(events: Iterable[Event]) -> list[list[Step]]:
    """Maximal runs of successful steps (consecutive repeats collapsed), in log order."""
    runs: list[list[Step]] = []
    current: list[Step] = []
    for event in events:
        step = step_of(event)
        if step is None:
            if event.type in TRACE_BREAKERS and current:
                runs.append(current)
                current = []
            continue
        if step.ok:
            current.append(step)
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return [collapse(run) for run in runs if len(collapse(run)) >= 2]


def mine(
    sessions: dict[str, Iterable[Event]], *, min_support: int, max_length: int = MAX_LENGTH, limit: int = 20
) -> list[MinedProcedure]:
    """Closed patterns with support >= ``min_support``, longest and best supported first."""
    found: dict[tuple[str, ...], MinedProcedure] = {}
    for session in sorted(sessions):
        for trace in traces(sessions[session]):
            labels = [step.label for step in trace]
            for size in range(2, min(max_length, len(trace)) + 1):
                for start in range(len(trace) - size + 1):
                    pattern = tuple(labels[start : start + size])
                    if len(set(pattern)) < 2:
                        continue  # "a a" style patterns are not procedures
                    mined = found.setdefault(pattern, MinedProcedure(pattern))
                    mined.occurrences.setdefault(session, [step.event for step in trace[start : start + size]])
    kept = [m for m in found.values() if m.support >= min_support]
    closed = [m for m in kept if not any(_contains(o.steps, m.steps) and o.support == m.support for o in kept)]
    closed.sort(key=lambda m: (-len(m.steps), -m.support, m.steps))
    return closed[:limit]


def _contains(longer: tuple[str, ...], shorter: tuple[str, ...]) -> bool:
    if len(longer) <= len(shorter):
        return False
    return any(longer[i : i + len(shorter)] == shorter for i in range(len(longer) - len(shorter) + 1))
