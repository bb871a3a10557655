"""The fallback: an unknown event type projects one generic event entity (never dropped)."""

from __future__ import annotations

from typing import Any

from ..model import EntityDraft, Extraction
from ..registry import produces_nothing, register
from .common import bounded, event_time, flatten_text

# Internal bookkeeping events: nothing to remember, nothing to search.
SILENT_PREFIXES = ("checkpoint.", "eventloom.", "memory.ref.", "metacognition.", "extraction.")
# Metadata any event may carry (seed 004: the cues it was written in, the encoding gate's tag): read by ranking,
# never searched as the event's content.
METADATA_KEYS = frozenset({"cues", "encoding_gate"})


def generic_event(envelope: dict[str, Any]) -> Extraction:
    payload = envelope["payload"]
    text = flatten_text(
        {k: v for k, v in payload.items() if k not in METADATA_KEYS} if isinstance(payload, dict) else payload
    )
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
@produces_nothing
def silent(envelope: dict[str, Any]) -> Extraction:
    """Bookkeeping events (checkpoints, refs, recovery notes, markers) stay in the log only."""
    return Extraction()
