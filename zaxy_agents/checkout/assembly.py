"""``context_assemble``: one prompt-ready bundle for one or several questions, with its assembly metadata.

Each question is checked out on its share of the budget; the bundle starts with an ``# Active Memory Working
Set`` section (the session's goals, tasks, decisions, blockers, files and sources), then each question's packet
with citations already shown left out. Every context item says which assembly lane it came from: ``graph``
(entities and evidence found through the entity lanes), ``verbatim`` (raw event text, the reserved source-recall
lane) or ``replay`` (the session's latest events).
"""

from __future__ import annotations

import re
from typing import Any

from .models import CheckoutPacket, EvidenceItem, FactItem, WorkingItem
from .tokens import get_encoding

HEADER = "# Active Memory Working Set"
ASSEMBLY_LANES = ("graph", "verbatim", "replay")


def assembly_lane(item: EvidenceItem | FactItem) -> str:
    """``replay`` for the recent-events lane, ``verbatim`` for raw-text-only hits, else ``graph``."""
    if isinstance(item, FactItem):
        return "graph"
    lanes = set(item.lanes)
    if "replay" in lanes and len(lanes) == 1:
        return "replay"
    return "verbatim" if lanes <= {"verbatim", "replay"} else "graph"


def assemble_context(
    queries: list[str],
    packets: list[CheckoutPacket],
    *,
    max_tokens: int,
    share: int,
    limit: int,
    replay: dict[str, Any],
    encoding: str,
) -> dict[str, Any]:
    seen: set[str] = set()
    working = _working_lines(packets[0]) if packets else []
    seen.update(citation for _, citation in working)
    blocks = []
    for packet in packets:
        cited = _item_citations(packet)  # citations come from the packet's events, never from its guidance text
        lines = []
        for line in packet.prompt.splitlines():
            citation = _citation_in(line)
            if citation is None or citation not in cited:
                lines.append(line)
            elif citation not in seen:
                lines.append(line)
                seen.add(citation)
        blocks.append("\n".join(lines))
    head = [HEADER, *(line for line, _ in working)] if working else [HEADER, "- (no open work recorded)"]
    prompt = "\n".join(head) + "\n\n" + "\n\n".join(blocks)
    items = _items(queries, packets)
    counts = {lane: sum(1 for item in items if item["metadata"]["assembly_lane"] == lane) for lane in ASSEMBLY_LANES}
    elided: dict[str, Any] = {"count": 0, "by_section": {}, "citations": []}
    for packet in packets:
        part = packet.diagnostics.elided
        elided["count"] += part.get("count", 0)
        for section, count in part.get("by_section", {}).items():
            elided["by_section"][section] = elided["by_section"].get(section, 0) + count
        elided["citations"] = sorted({*elided["citations"], *part.get("citations", [])})
    used = len(get_encoding(encoding).encode(prompt, disallowed_special=()))
    return {
        "prompt": prompt,
        "items": items,
        "context_counts": counts,
        "assembly_policy": {
            "queries": len(queries),
            "tokens_per_query": share,
            "limit": limit,
            "lanes": list(ASSEMBLY_LANES),
            "verbatim_lane": "reserved: raw event text is always a retrieval lane",
            "replay": replay,
            "purpose": packets[0].purpose.name if packets else "general",
        },
        "working_set": packets[0].working_set.model_dump(mode="json") if packets else {},
        "citations": sorted(seen),
        "answerability": {packet.query: packet.quality.answerability for packet in packets},
        "budget": {"budget_requested": max_tokens, "budget_used": used, "elided": elided},
    }


def _working_lines(packet: CheckoutPacket) -> list[tuple[str, str]]:
    sections: list[tuple[str, list[WorkingItem]]] = [
        ("goal", packet.working_set.goals),
        ("task", packet.working_set.tasks),
        ("decision", packet.working_set.decisions),
        ("blocker", packet.working_set.blockers),
        ("file", packet.working_set.artifacts),
        ("source", packet.working_set.source_anchors),
    ]
    return [(f"- [{kind}] {item.text} ({item.citation})", item.citation) for kind, items in sections for item in items]


def _items(queries: list[str], packets: list[CheckoutPacket]) -> list[dict[str, Any]]:
    """Every fact and evidence item once (by citation), with the lane and question it was assembled for."""
    items: list[dict[str, Any]] = []
    shown: set[str] = set()
    for query, packet in zip(queries, packets, strict=True):
        rows = [
            (fact.summary, fact.citation, {"assembly_lane": "graph", "entity_name": fact.name,
                                           "entity_type": fact.entity_type, "tier": fact.tier})
            for fact in packet.current_facts
        ] + [
            (item.text, item.citation, {"assembly_lane": assembly_lane(item), "event_type": item.event_type,
                                        "status": item.status, "lanes": item.lanes})
            for item in packet.evidence
        ]  # fmt: skip
        for content, citation, metadata in rows:
            if citation not in shown:
                shown.add(citation)
                items.append({"content": content, "citation": citation, "metadata": {**metadata, "query": query}})
    return items


_LINE_CITATION = re.compile(r"\((eventloom://[A-Za-z0-9_.-]+/events/[1-9][0-9]*#[0-9a-f]{12,64})\)$")


def _citation_in(line: str) -> str | None:
    """The citation a packet line ends with (``- text (eventloom://...)``), else ``None``."""
    match = _LINE_CITATION.search(line.rstrip())
    return match.group(1) if match else None


def _item_citations(packet: CheckoutPacket) -> set[str]:
    items = [*packet.current_facts, *packet.reviewed_memory, *packet.evidence, *packet.working_set.items()]
    return {item.citation for item in items}
