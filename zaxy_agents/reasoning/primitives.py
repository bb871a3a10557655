"""Which agent tools are reasoning primitives, their deterministic phase, and what a call observed.

The phase taxonomy is the seed's, deliberately small: ``planning`` (reads that shape what to do next),
``execution`` (recording what an answer used), ``review`` (reads that check why something happened or whether
memory still holds) and ``reflection`` (proposals about memory itself). Routing is a fixed table — policy
metadata, not a learned planner. An observation keeps the primitive, its phase, the call's status, how many
results it returned and how many distinct citations backed them (with a sample).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

Phase = Literal["planning", "execution", "review", "reflection"]
PHASES: tuple[str, ...] = get_args(Phase)

# tool -> (primitive, phase)
PRIMITIVE_TOOLS: dict[str, tuple[str, str]] = {
    "memory_claim_confidence": ("get_claim_confidence", "planning"),
    "memory_known_unknowns": ("list_known_unknowns", "planning"),
    "memory_causal_successors": ("trace_effects", "planning"),
    "memory_plan_from_procedures": ("plan_from_procedures", "planning"),
    "memory_synthesis_artifact": ("record_synthesis", "execution"),
    "memory_synthesis_evidence": ("record_synthesis_evidence", "execution"),
    "memory_causal_predecessors": ("trace_causes", "review"),
    "memory_confidence_trajectory": ("confidence_trajectory", "review"),
    "memory_reverification_needs": ("reverification_needs", "review"),
    "memory_record_known_unknown": ("record_known_unknown", "reflection"),
    "memory_propose_belief_update": ("propose_belief_update", "reflection"),
    "memory_consolidation_propose_from_log": ("propose_from_log", "reflection"),
}
# umbrella tools: (tool, operation) -> the tool the operation stands for
UMBRELLAS = {
    ("memory_confidence", "claim"): "memory_claim_confidence",
    ("memory_confidence", "trajectory"): "memory_confidence_trajectory",
    ("memory_confidence", "reverification"): "memory_reverification_needs",
    ("memory_confidence", "known_unknowns"): "memory_known_unknowns",
    ("memory_confidence", "record_known_unknown"): "memory_record_known_unknown",
    ("memory_consolidation", "propose_from_log"): "memory_consolidation_propose_from_log",
}
# an explanation appended as an event is the explain_outcome primitive (seed 003's example)
APPENDED = {"outcome.explained": ("explain_outcome", "review")}
PRIMITIVES: dict[str, str] = {primitive: phase for primitive, phase in [*PRIMITIVE_TOOLS.values(), *APPENDED.values()]}
RESULT_KEYS = ("results", "items", "edges", "answer_candidates", "steps", "procedures", "points", "candidates")
MAX_CITATIONS = 20
_WALK_LIMIT = 5000


def primitive_of(tool: str, arguments: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """``(primitive, phase)`` when calling ``tool`` with ``arguments`` is a reasoning primitive, else ``None``."""
    arguments = arguments or {}
    if tool == "memory_append" or tool == "memory_append_event":
        kind = arguments.get("event_type", arguments.get("type"))
        return APPENDED.get(kind) if isinstance(kind, str) else None
    target = UMBRELLAS.get((tool, arguments.get("operation")), tool)
    return PRIMITIVE_TOOLS.get(target)


def observed(result: Any) -> tuple[int, list[str]]:
    """How many results ``result`` holds and the distinct eventloom:// citations in it (in order of appearance)."""
    count = 1
    if isinstance(result, Mapping):
        for key in RESULT_KEYS:
            if isinstance(result.get(key), list):
                count = len(result[key])
                break
    citations: dict[str, None] = {}
    stack, seen = [result], 0
    while stack and seen < _WALK_LIMIT:
        item = stack.pop()
        seen += 1
        if isinstance(item, str):
            if item.startswith("eventloom://") and "#" in item:
                citations.setdefault(item, None)
        elif isinstance(item, Mapping):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
    return count, list(citations)
