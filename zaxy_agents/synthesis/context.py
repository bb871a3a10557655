"""Checkout extension ``synthesis`` (seed 003): the bundle of a numeric or aggregation question.

``diagnostics.synthesis`` holds the question type, ``answer_candidates`` (rank, candidate type, answer value,
confidence, supporting and excluded source ids), ``ledger_rows`` (fact id, source group, citation, value, label,
include/exclude reason) and ``source_groups``, composed from the checkout's cited hits. A question that asks for
no number gets an empty bundle. The guidance line says what to do with a candidate that shapes the answer.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.checkout.extensions.context import CheckoutContext

from .ledger import Source, bundle

GUIDANCE = (
    "synthesis: diagnostics.synthesis.answer_candidates are composed from the cited ledger_rows (non-authoritative, "
    "not facts); check the rows before relying on one, and when a candidate shapes your answer record it with "
    "memory_synthesis_artifact (and a row you used or excluded with memory_synthesis_evidence)."
)


def sources(context: CheckoutContext) -> list[Source]:
    """The checkout's hits as ledger sources: a graph fact groups its versions, an event is its own group."""
    out = []
    for hit in context.hits:
        entity = hit.entity
        group = f"{hit.session}/{entity.entity_type}:{entity.name}" if entity is not None else None
        out.append(
            Source(
                citation=hit.citation,
                session=hit.session,
                seq=hit.seq,
                event_type=hit.event_type,
                text=hit.text,
                fact_id=entity.id if entity is not None else f"event:{hit.session}:{hit.seq}",
                source_group=group or f"event:{hit.session}:{hit.seq}",
                valid_from=entity.valid_from if entity is not None else "",
                entity=(entity.name, entity.entity_type) if entity is not None else None,
            )
        )
    return out


def synthesis(context: CheckoutContext) -> tuple[dict[str, Any], list[str]]:
    block = bundle(context.query, sources(context)) if context.query else bundle("", [])
    return block, lines(block)


def lines(block: dict[str, Any], *, candidates: int = 3, rows: int = 6) -> list[str]:
    """The guidance lines of a bundle (they close the prompt, so a model that sees the checkout as text, e.g.
    through LangGraph's memory_checkout tool, has the ids to record): the top candidates and included rows."""
    if not block.get("answer_candidates"):
        return []
    shown = "; ".join(
        f"{item['candidate_id']} rank {item['rank']} {item['candidate_type']} = {item['answer_text']} "
        f"(confidence {item['confidence']})"
        for item in block["answer_candidates"][:candidates]
    )
    included = [row for row in block["ledger_rows"] if row["status"] == "included"]
    cited = "; ".join(f"{row['row_id']} {row['raw']} [{row['citation']}]" for row in included[:rows])
    excluded = len(block["ledger_rows"]) - len(included)
    return [
        GUIDANCE,
        f"synthesis candidates: {shown}",
        f"synthesis ledger rows: {cited}" + (f" ({excluded} excluded)" if excluded else ""),
    ]
