"""Conversation events: transcript turns and IDE hook lifecycle events."""

from __future__ import annotations

from typing import Any

from ..model import EntityDraft, EntityRef, Extraction, Invalidation, RelationDraft
from ..registry import register
from .common import bounded, event_time, flatten_text, pick, pick_text


@register("transcript.turn")
def transcript_turn(envelope: dict[str, Any]) -> Extraction:
    """``{role, speaker?, text, message_id?, caption?, occurred_at?, source_ref?}`` -> a turn + its speaker."""
    payload = envelope["payload"]
    text = pick_text(payload, "text", "content", "message", required="the turn's text")
    role = pick_text(payload, "role") or "user"
    # A tool message's ``name`` is the tool, not a speaker: tool output is attributed to the role.
    speaker = (
        pick_text(payload, "speaker", "author") or (role if role == "tool" else pick_text(payload, "name")) or role
    )
    caption = pick_text(payload, "caption", "image_caption", "attachment_text")
    when = event_time(envelope)
    name = pick_text(payload, "message_id", "source_ref") or f"turn #{envelope['seq']}"
    turn = EntityDraft(
        name=name,
        entity_type="turn",
        summary=bounded(f"{speaker}: {text}" + (f" [image: {caption}]" if caption else "")),
        properties={"role": role, "speaker": speaker, "occurred_at": when},
        valid_from=when,
        importance=0.4,
    )
    participant = EntityDraft(name=speaker, entity_type="participant", mode="reference", importance=0.3)
    relation = RelationDraft(EntityRef(speaker, "participant"), EntityRef(name, "turn"), "spoke")
    segment = pick_text(payload, "segment", "sitting", "conversation_session")
    return Extraction(
        entities=[participant, turn],
        relations=[relation],
        searchable_text=text,
        speaker=speaker,
        caption=caption or None,
        segment=segment or None,
        occurred_at=when,
    )


@register("transcript.item_removed")
def transcript_item_removed(envelope: dict[str, Any]) -> Extraction:
    """A framework session removed its newest item (OpenAI Agents ``pop_item``): the turn is no longer current."""
    message_id = pick_text(envelope["payload"], "message_id", required="the removed turn's message_id")
    return Extraction(invalidations=[Invalidation(EntityRef(message_id, "turn"), "removed from the conversation")])


@register("transcript.cleared")
def transcript_cleared(envelope: dict[str, Any]) -> Extraction:
    """A framework session was cleared: its history starts again (the turns stay in the log)."""
    return Extraction()


@register("hook.user_prompt_submitted")
def user_prompt(envelope: dict[str, Any]) -> Extraction:
    payload = envelope["payload"]
    prompt = pick_text(payload, "prompt", "text", required="the prompt text")
    entity = EntityDraft(
        name=f"prompt #{envelope['seq']}",
        entity_type="prompt",
        summary=bounded(prompt),
        properties={"client": pick(payload, "client") or ""},
        valid_from=event_time(envelope),
        importance=0.5,
    )
    return Extraction(entities=[entity], searchable_text=prompt, speaker="user", occurred_at=entity.valid_from)


@register("hook.*")
def hook_event(envelope: dict[str, Any]) -> Extraction:
    """Lifecycle markers (session start, stop, compaction): one hook entity, searchable by its text fields."""
    payload = envelope["payload"]
    text = flatten_text({k: v for k, v in payload.items() if k not in {"transcript_path", "cwd"}})
    entity = EntityDraft(
        name=f"{envelope['type']} #{envelope['seq']}",
        entity_type="hook_event",
        summary=bounded(f"{envelope['type']}: {text}" if text else envelope["type"]),
        properties={"event_type": envelope["type"]},
        valid_from=event_time(envelope),
        importance=0.2,
    )
    summary_text = pick_text(payload, "compact_summary", "summary")
    return Extraction(entities=[entity], searchable_text=summary_text)
