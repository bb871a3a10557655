"""Find Eventloom citations inside free text (a model's answer), in order of first appearance."""

from __future__ import annotations

import re

from zaxy_agents.eventloom.canonical import CITATION_HASH_PREFIX_LENGTH

_IN_TEXT = re.compile(r"eventloom://([A-Za-z0-9_.-]{1,128})/events/([1-9][0-9]{0,18})#([0-9a-f]{12,64})")


def find_citations(text: str) -> list[str]:
    """Every citation in ``text`` once, in canonical form (12 hex of the hash), first appearance first."""
    found: dict[str, None] = {}
    for session, seq, prefix in _IN_TEXT.findall(text or ""):
        found.setdefault(f"eventloom://{session}/events/{seq}#{prefix[:CITATION_HASH_PREFIX_LENGTH]}", None)
    return list(found)
