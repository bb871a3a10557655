"""A finished turn as events, and "what changed since the last checkout" as a bounded, cited summary."""

from __future__ import annotations

from typing import Any

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.citations import format_citation
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.projection.catalog import EntityCatalog

MAX_TURN_TEXT = 20_000
MAX_TOOLS = 32
MAX_CHANGES_SCANNED = 500
MAX_ITEMS_PER_LIST = 10
TOOL_STATUSES = ("ok", "error")
TURN_ROLES = ("user", "assistant", "system", "tool")
# Bookkeeping the memory server writes about itself: counted apart, never reported as a change.
BOOKKEEPING_PREFIXES = ("metacognition.", "memory.ref.", "checkpoint.", "eventloom.", "extraction.")
TRACKED_TYPES = ("fact", "decision", "task", "file", "command_run", "skill", "memory_item", "document_chunk")


def turn_drafts(
    *,
    user_text: str | None,
    assistant_text: str | None,
    tools_used: list[dict[str, Any]] | None,
    turn_id: str | None,
    role: str | None = None,
    content: str | None = None,
) -> list[dict[str, Any]]:
    """Drafts for one finished turn: the ``role``/``content`` turn (the seed's form), the user and assistant turns,
    then one ``tool.call.completed`` per tool."""
    drafts: list[dict[str, Any]] = []
    if (role is None) != (content is None):
        raise InvalidRequestError(
            "role and content go together", field="content" if content is None else "role", remediation="Pass both."
        )
    if role is not None and role not in TURN_ROLES:
        raise InvalidRequestError(
            f"unknown role {role!r}", field="role", remediation=f"Use one of {', '.join(TURN_ROLES)}."
        )
    turns = [
        (role, content, "content"),
        ("user", user_text, "user_text"),
        ("assistant", assistant_text, "assistant_text"),
    ]
    for speaker, text, field in turns:
        if speaker is None or text is None or not text.strip():
            continue
        if len(text) > MAX_TURN_TEXT:
            raise InvalidRequestError(
                f"{field} is longer than {MAX_TURN_TEXT} characters",
                field=field,
                remediation="Pass the turn's text itself, not attached files; trim long tool output.",
            )
        payload: dict[str, Any] = {"role": speaker, "speaker": speaker, "text": text}
        if turn_id:
            payload["segment"] = turn_id
        drafts.append({"type": "transcript.turn", "actor": speaker, "payload": payload})
    for index, tool in enumerate((tools_used or [])[:MAX_TOOLS]):
        name = tool.get("name")
        if not isinstance(name, str) or not name.strip():
            raise InvalidRequestError(
                "every tool needs a name", field=f"tools_used[{index}].name", remediation="Name the tool."
            )
        status = tool.get("status") or "ok"
        if status not in TOOL_STATUSES:
            raise InvalidRequestError(
                f"unknown tool status {status!r}",
                field=f"tools_used[{index}].status",
                remediation=f"Use one of {', '.join(TOOL_STATUSES)}.",
            )
        payload = {"tool": name, "status": status, "origin": "turn"}
        if tool.get("summary"):
            payload["result_summary"] = str(tool["summary"])
        if turn_id:
            payload["turn_id"] = turn_id
        drafts.append({"type": "tool.call.completed", "actor": "agent", "payload": payload})
    if not drafts:
        raise InvalidRequestError(
            "the turn has nothing to record",
            field="user_text",
            remediation="Pass user_text, assistant_text or tools_used.",
        )
    return drafts


def changes_since(log: EventLog, catalog: EntityCatalog, session: str, since_seq: int) -> dict[str, Any]:
    """What events after ``since_seq`` changed in ``session``: new/updated items, superseded and invalidated ones.

    Reads at most :data:`MAX_CHANGES_SCANNED` events (``truncated`` says when there were more); lists are capped
    at :data:`MAX_ITEMS_PER_LIST` items, each with its citation. The catalog must be caught up to the log.
    """
    head = log.head(session)
    head_seq = head.seq if head is not None else 0
    event_types: dict[str, int] = {}
    bookkeeping = 0
    changed: dict[str, list[dict[str, Any]]] = {"new_or_updated": [], "superseded": [], "invalidated": []}
    counts = dict.fromkeys(changed, 0)
    scanned = 0
    start = max(since_seq, head_seq - MAX_CHANGES_SCANNED) + 1
    for envelope in log.replay_envelopes(session, start, head_seq) if head_seq >= start else ():
        scanned += 1
        kind = envelope["type"]
        if kind.startswith(BOOKKEEPING_PREFIXES) or envelope["payload"].get("capture") == "lifecycle":
            bookkeeping += 1
            continue
        event_types[kind] = event_types.get(kind, 0) + 1
        for version in catalog.event_versions(session, envelope["seq"]):
            if version.entity_type not in TRACKED_TYPES:
                continue
            _push(changed, counts, "new_or_updated", _item(version))
            history = [v.id for v in catalog.history(version.key)]
            position = history.index(version.id) if version.id in history else 0
            if position > 0:
                previous = catalog.version(history[position - 1])
                assert previous is not None
                if previous.source_event_seq <= since_seq or previous.session != session:
                    _push(changed, counts, "superseded", {**_item(previous), "superseded_by": version.citation})
        if kind == "memory.invalidated":
            payload = envelope["payload"]
            _push(
                changed,
                counts,
                "invalidated",
                {
                    "name": payload.get("entity_name", payload.get("entity")),
                    "entity_type": payload.get("entity_type"),
                    "reason": payload.get("reason"),
                    "citation": format_citation(session, envelope["seq"], envelope["hash"]),
                },
            )
    return {
        "since_seq": since_seq,
        "head_seq": head_seq,
        "events": sum(event_types.values()),
        "bookkeeping_events": bookkeeping,
        "event_types": dict(sorted(event_types.items())),
        **changed,
        "counts": counts,
        "truncated": head_seq - since_seq > scanned,
    }


def _item(version: Any) -> dict[str, Any]:
    return {
        "entity_type": version.entity_type,
        "name": version.name,
        "summary": version.summary,
        "citation": version.citation,
    }


def _push(changed: dict[str, list[dict[str, Any]]], counts: dict[str, int], kind: str, item: dict[str, Any]) -> None:
    counts[kind] += 1
    if len(changed[kind]) < MAX_ITEMS_PER_LIST:
        changed[kind].append(item)
