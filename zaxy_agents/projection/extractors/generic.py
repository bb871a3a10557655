"""The fallback: an unknown event type projects one generic event entity (never dropped)."""

from __future__ import annotations

from typing import Any

from ..model import EntityDraft, Extraction
from ..registry import register
from .common import bounded, event_time, flatten_text

# Internal bookkeeping events: nothing to remember, nothing to search.
SILENT_PREFIXES = ("checkpoint.", "eventloom.", "memory.ref.", "metacognition.", "extraction.")


def generic_event(envelope: dict[str, Any]) -> Extraction:
    text = flatten_text(envelope["payload"])
    entity = EntityDraft(
        name=f"{envelope['type']} #{envelope['seq']}",
        entity_type="event",
        summary=bounded(text) if text else envelope["type"],
        properties={"event_type": envelope["type"], "actor": envelope["actor"]},
        valid_from=event_time(envelope),
        importance=0.2,
    )
    return Extraction(entities=[entity], searchable_text=f"{envelope['type']} {text}".strip())


@register("checkpoint.*", "eventloom.*", "memory.ref.*", "metacognition.*", "extraction.*")
def silent(envelope: dict[str, Any]) -> Extraction:
    """Bookkeeping events (checkpoints, refs, recovery notes, markers) stay in the log only."""
    return Extraction()
