"""``context_assemble``: one prompt-ready bundle for one or several questions, with its assembly metadata.

Each question is checked out on its share of the budget; the bundle starts with an ``# Active Memory Working
Set`` section (the session's goals, tasks, decisions, blockers, files and sources), then each question's packet
with citations already shown left out. Every context item says which assembly lane it came from: ``graph``
(entities and evidence found through the entity lanes), ``verbatim`` (raw event text, the reserved source-recall
lane) or ``replay`` (the session's latest events).
"""

from __future__ import annotations

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
        lines = [
            line for line in packet.prompt.splitlines() if "eventloom://" not in line or _citation_in(line) not in seen
        ]
        seen.update(_citation_in(line) for line in packet.prompt.splitlines() if "eventloom://" in line)
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
    items: list[dict[str, Any]] = []
    shown: set[str] = set()
    for query, packet in zip(queries, packets, strict=True):
        for fact in packet.current_facts:
            if fact.citation in shown:
                continue
            shown.add(fact.citation)
            items.append(
                {
                    "content": fact.summary,
                    "citation": fact.citation,
                    "metadata": {
                        "assembly_lane": "graph",
                        "query": query,
                        "entity_name": fact.name,
                        "entity_type": fact.entity_type,
                        "tier": fact.tier,
                    },
                }
            )
        for evidence in packet.evidence:
            if evidence.citation in shown:
                continue
            shown.add(evidence.citation)
            items.append(
                {
                    "content": evidence.text,
                    "citation": evidence.citation,
                    "metadata": {
                        "assembly_lane": assembly_lane(evidence),
                        "query": query,
                        "event_type": evidence.event_type,
                        "status": evidence.status,
                        "lanes": evidence.lanes,
                    },
                }
            )
    return items


def _citation_in(line: str) -> str:
    start = line.find("eventloom://")
    end = line.find(")", start)
    return line[start : end if end > 0 else None]
