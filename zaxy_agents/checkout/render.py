"""Render the packet's ``prompt``: a ``# Memory Checkout`` section in stability tiers.

Tier 1 (stable knowledge) comes first and is serialised canonically — sorted, no timestamps, no scores — so
repeated checkouts in a session share a byte-identical prefix (prompt caches hit); tier 2 (session state) and
tier 3 (query evidence) follow.
"""

from __future__ import annotations

import hashlib

from .budget import Candidate

HEADER = "# Memory Checkout"
SECTION_TITLES = {
    "stable": "## Stable memory (tier 1: current decisions and facts)",
    "reviewed": "## Reviewed consolidation (accepted dispositions: non-authoritative, not current facts)",
    "goals": "## Goals",
    "tasks": "## Open tasks",
    "decisions": "## Recent decisions",
    "blockers": "## Blockers and failures",
    "artifacts": "## Recent files",
    "source_anchors": "## Sources",
    "recent": "## Recent events (replay, oldest first)",
    "evidence": "## Evidence for this question",
}
STATE_SECTIONS = ("goals", "tasks", "decisions", "blockers", "artifacts", "source_anchors")


def render(kept: list[Candidate], guidance_lines: list[str], query: str) -> tuple[str, str]:
    """Return (prompt, stable_prefix)."""
    by_section: dict[str, list[Candidate]] = {}
    for candidate in kept:
        by_section.setdefault(candidate.section, []).append(candidate)
    parts = [HEADER, ""]
    stable = sorted(by_section.get("stable", []), key=lambda c: c.line)
    if stable:
        parts += [SECTION_TITLES["stable"], *[c.line for c in stable], ""]
    prefix = "\n".join(parts)
    reviewed = sorted(by_section.get("reviewed", []), key=lambda c: c.line)
    if reviewed:
        parts += [SECTION_TITLES["reviewed"], *[c.line for c in reviewed], ""]
    for section in STATE_SECTIONS:
        lines = by_section.get(section, [])
        if lines:
            parts += [SECTION_TITLES[section], *[c.line for c in sorted(lines, key=lambda c: -c.value)], ""]
    recent = sorted(by_section.get("recent", []), key=lambda c: c.value)
    if recent:
        parts += [SECTION_TITLES["recent"], *[c.line for c in recent], ""]
    evidence = sorted(by_section.get("evidence", []), key=lambda c: -c.value)
    if evidence:
        parts += [
            f"{SECTION_TITLES['evidence']}: {query!r}" if query else SECTION_TITLES["evidence"],
            *[c.line for c in evidence],
            "",
        ]
    parts += ["## How to use this memory", *guidance_lines]
    return "\n".join(parts).rstrip() + "\n", prefix


def prefix_digest(prefix: str) -> str:
    return hashlib.sha256(prefix.encode()).hexdigest()


def one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
