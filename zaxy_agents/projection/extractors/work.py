"""Work events: tasks, decisions, facts, tool calls, commands, file edits, document chunks, sessions.

Events carrying a ``task_id`` (or the seed's camelCase ``taskId``) link the task to what was observed while
doing it (``observed_command``, ``observed_file_edit``, ``observed_tool_call``, ``has_checkpoint``). Nothing is
inferred from free text: without an explicit task identifier there is no link (seed 002).
"""

from __future__ import annotations

from typing import Any

from ..model import EntityDraft, EntityRef, Extraction, RelationDraft
from ..registry import ExtractionFailed, register
from .common import bounded, event_time, flatten_text, pick, pick_text

TASK_STATUS = {"task.created": "open", "task.completed": "done"}
TASK_ID_KEYS = ("task_id", "taskId")


def _task_link(payload: dict[str, Any], target: EntityRef, relation_type: str) -> list[RelationDraft]:
    task_id = pick(payload, *TASK_ID_KEYS)
    if task_id is None:
        return []
    return [RelationDraft(EntityRef(str(task_id), "task"), target, relation_type)]


def _task_tag(payload: dict[str, Any]) -> str:
    """``task T-7`` appended to an observation's searchable text, so a question about a task finds it."""
    task_id = pick(payload, *TASK_ID_KEYS)
    return f" task {task_id}" if task_id is not None else ""


def _task_reference(payload: dict[str, Any]) -> list[EntityDraft]:
    task_id = pick(payload, *TASK_ID_KEYS)
    return [] if task_id is None else [EntityDraft(str(task_id), "task", mode="reference")]


@register("task.created", "task.updated", "task.completed")
def task_event(envelope: dict[str, Any]) -> Extraction:
    """``{task_id? , title?, status?, description?}``: each event is a new version of the task."""
    payload = envelope["payload"]
    name = pick_text(payload, "task_id", "id", "title", required="a task_id or title")
    title = pick_text(payload, "title", "name", "summary") or name
    status = pick_text(payload, "status") or TASK_STATUS.get(envelope["type"], "in_progress")
    description = pick_text(payload, "description", "details", "notes")
    entity = EntityDraft(
        name=name,
        entity_type="task",
        summary=bounded(f"{title} [{status}]" + (f": {description}" if description else "")),
        properties={"title": title, "status": status},
        valid_from=event_time(envelope),
        importance=0.8 if status not in {"done", "completed", "cancelled"} else 0.5,
    )
    return Extraction(entities=[entity], searchable_text=" ".join(p for p in (title, status, description) if p))


@register("task.checkpoint")
def task_checkpoint(envelope: dict[str, Any]) -> Extraction:
    payload = envelope["payload"]
    if pick(payload, *TASK_ID_KEYS) is None:
        raise ExtractionFailed("task.checkpoint needs task_id")
    note = pick_text(payload, "note", "summary", "text")
    entity = EntityDraft(
        name=f"checkpoint #{envelope['seq']}",
        entity_type="checkpoint",
        summary=bounded(note or "checkpoint"),
        valid_from=event_time(envelope),
        importance=0.4,
    )
    ref = EntityRef(entity.name, "checkpoint")
    return Extraction(
        entities=[*_task_reference(payload), entity],
        relations=_task_link(payload, ref, "has_checkpoint"),
        searchable_text=note + _task_tag(payload),
    )


@register("decision.recorded")
def decision(envelope: dict[str, Any]) -> Extraction:
    """``{decision, rationale?, decision_id?, topic?, task_id?}``; a topic re-decided supersedes the old one."""
    payload = envelope["payload"]
    text = pick_text(payload, "decision", "text", "title", "summary", required="the decision text")
    rationale = pick_text(payload, "rationale", "reason", "why")
    name = pick_text(payload, "decision_id", "topic") or text
    entity = EntityDraft(
        name=bounded(name, 200),
        entity_type="decision",
        summary=bounded(text + (f" (because {rationale})" if rationale else "")),
        properties={"decision": text, "rationale": rationale},
        valid_from=event_time(envelope),
        importance=0.9,
    )
    ref = EntityRef(entity.name, "decision")
    return Extraction(
        entities=[*_task_reference(payload), entity],
        relations=_task_link(payload, ref, "has_decision"),
        searchable_text=f"{text} {rationale}".strip() + _task_tag(payload),
    )


@register("fact.asserted")
def fact(envelope: dict[str, Any]) -> Extraction:
    """``{fact|statement, subject?, predicate?, object?, key?}``.

    Identity: ``key``, else ``subject predicate`` when both are given (so "user.favourite_color" re-asserted
    supersedes the old value), else the statement itself.
    """
    payload = envelope["payload"]
    subject = pick_text(payload, "subject", "entity")
    predicate = pick_text(payload, "predicate", "attribute", "relation")
    obj = pick_text(payload, "object", "value")
    statement = pick_text(payload, "fact", "statement", "text", "claim")
    if not statement:
        if not (subject and predicate and obj):
            raise ExtractionFailed("fact.asserted needs 'fact' text or subject + predicate + object")
        statement = f"{subject} {predicate} {obj}"
    name = pick_text(payload, "key") or (f"{subject} {predicate}" if subject and predicate else statement)
    entity = EntityDraft(
        name=bounded(name, 200),
        entity_type="fact",
        summary=bounded(statement),
        properties={"subject": subject, "predicate": predicate, "object": obj},
        valid_from=event_time(envelope),
        importance=float(payload.get("importance", 0.8)) if isinstance(payload.get("importance"), int | float) else 0.8,
    )
    extraction = Extraction(entities=[entity], searchable_text=f"{subject} {statement}".strip())
    if subject:
        extraction.entities.insert(0, EntityDraft(subject, "topic", mode="reference", importance=0.4))
        extraction.relations.append(RelationDraft(EntityRef(entity.name, "fact"), EntityRef(subject, "topic"), "about"))
    return extraction


@register("tool.call.completed")
def tool_call(envelope: dict[str, Any]) -> Extraction:
    """``{tool|tool_name, status?, argument_keys?, result_summary?, task_id?}`` (argument values never stored)."""
    payload = envelope["payload"]
    if payload.get("capture") == "lifecycle":  # the memory server's audit of its own tools: log only, never recalled
        return Extraction()
    tool = pick_text(payload, "tool", "tool_name", "name", required="the tool name")
    status = pick_text(payload, "status") or "completed"
    result = pick_text(payload, "result_summary", "summary", "output")
    keys = pick(payload, "argument_keys", "arg_keys") or []
    name = f"{tool} #{envelope['seq']}"
    call = EntityDraft(
        name=name,
        entity_type="tool_call",
        summary=bounded(f"{tool} ({status})" + (f": {result}" if result else "")),
        properties={"tool": tool, "status": status, "argument_keys": keys if isinstance(keys, list) else []},
        valid_from=event_time(envelope),
        importance=0.3,
    )
    ref = EntityRef(name, "tool_call")
    return Extraction(
        entities=[*_task_reference(payload), EntityDraft(tool, "tool", mode="reference", importance=0.3), call],
        relations=[
            RelationDraft(ref, EntityRef(tool, "tool"), "invoked_tool"),
            *_task_link(payload, ref, "observed_tool_call"),
        ],
        searchable_text=f"{tool} {status} {result}".strip() + _task_tag(payload),
    )


@register("command.completed")
def command(envelope: dict[str, Any]) -> Extraction:
    """``{command, exit_code, output?, cwd?, task_id?}``."""
    payload = envelope["payload"]
    text = pick_text(payload, "command", "cmd", required="the command")
    exit_code = payload.get("exit_code")
    output = pick_text(payload, "output", "stdout", "stderr", "result_summary")
    name = f"{bounded(text, 120)} #{envelope['seq']}"
    outcome = "ok" if exit_code == 0 else (f"exit {exit_code}" if exit_code is not None else "unknown exit")
    entity = EntityDraft(
        name=name,
        entity_type="command_run",
        summary=bounded(f"$ {text} -> {outcome}" + (f": {output}" if output else "")),
        properties={"command": bounded(text, 500), "exit_code": exit_code},
        valid_from=event_time(envelope),
        importance=0.5 if exit_code not in (0, None) else 0.3,
    )
    ref = EntityRef(name, "command_run")
    return Extraction(
        entities=[*_task_reference(payload), entity],
        relations=_task_link(payload, ref, "observed_command"),
        searchable_text=f"{text} {outcome} {output}".strip() + _task_tag(payload),
    )


@register("file.edit.applied")
def file_edit(envelope: dict[str, Any]) -> Extraction:
    """``{path, operation?, lines_added?, lines_removed?, task_id?}`` (never file content).

    The file (one entity per path, versioned, citing its ``Source``) and the edit itself: a ``file_edit``
    observation (``edited_file`` -> the file), which is what a task observed (seed 002 ``OBSERVED_FILE_EDIT``).
    """
    payload = envelope["payload"]
    path = pick_text(payload, "path", "file_path", "file", required="the file path")
    operation = pick_text(payload, "operation", "op") or "edit"
    added, removed = payload.get("lines_added"), payload.get("lines_removed")
    changes = f"{operation}, +{added or 0}/-{removed or 0}"
    properties = {"operation": operation, "lines_added": added, "lines_removed": removed}
    entity = EntityDraft(
        name=path,
        entity_type="file",
        summary=bounded(f"{path} ({changes})"),
        properties=properties,
        valid_from=event_time(envelope),
        importance=0.5,
        source_path=path,
    )
    edit = EntityDraft(
        name=f"{bounded(path, 200)} edit #{envelope['seq']}",
        entity_type="file_edit",
        summary=bounded(f"{path} ({changes})"),
        properties={"path": path, **properties},
        valid_from=event_time(envelope),
        importance=0.3,
    )
    edit_ref = EntityRef(edit.name, "file_edit")
    return Extraction(
        entities=[*_task_reference(payload), entity, edit],
        relations=[
            RelationDraft(edit_ref, EntityRef(path, "file"), "edited_file"),
            *_task_link(payload, edit_ref, "observed_file_edit"),
        ],
        searchable_text=f"{operation} {path}" + _task_tag(payload),
    )


@register("hook.checkpoint")
def hook_checkpoint(envelope: dict[str, Any]) -> Extraction:
    """The seed's observer checkpoint ``{summary?, reason?, source?, turn_count?, workspace?, task_id?}``: a
    ``hook_checkpoint`` the session recorded (``recorded_checkpoint``) and its task, if named, has."""
    payload = envelope["payload"]
    session = envelope["session"]
    summary = pick_text(payload, "summary", "note", "text")
    reason = pick_text(payload, "reason") or "checkpoint"
    checkpoint = EntityDraft(
        name=f"{session}:checkpoint:{envelope['seq']}",
        entity_type="hook_checkpoint",
        summary=bounded(summary or f"checkpoint ({reason})"),
        properties={
            "source": pick_text(payload, "source") or "hook",
            "reason": reason,
            "turn_count": payload.get("turn_count") if isinstance(payload.get("turn_count"), int) else None,
            "workspace": pick_text(payload, "workspace") or None,
        },
        valid_from=event_time(envelope),
        importance=0.3,
    )
    ref = EntityRef(checkpoint.name, "hook_checkpoint")
    return Extraction(
        entities=[EntityDraft(session, "session", mode="reference"), *_task_reference(payload), checkpoint],
        relations=[
            RelationDraft(EntityRef(session, "session"), ref, "recorded_checkpoint"),
            *_task_link(payload, ref, "has_checkpoint"),
        ],
        searchable_text=f"{summary} {reason}".strip() + _task_tag(payload),
    )


@register("document.chunk")
def document_chunk(envelope: dict[str, Any]) -> Extraction:
    """``{source_path|path, chunk_index, text, title?, line_start?, line_end?, checksum?}``."""
    payload = envelope["payload"]
    path = pick_text(payload, "source_path", "path", required="the document path")
    text = pick_text(payload, "text", "content", required="the chunk text")
    index = payload.get("chunk_index", payload.get("index", envelope["seq"]))
    title = pick_text(payload, "title")
    name = f"{path}#{index}"
    chunk = EntityDraft(
        name=name,
        entity_type="document_chunk",
        summary=bounded(text),
        properties={"title": title, "chunk_index": index},
        valid_from=event_time(envelope),
        importance=0.5,
        source_path=path,
        line_start=_int(payload.get("line_start")),
        line_end=_int(payload.get("line_end")),
        checksum=pick_text(payload, "checksum", "sha256") or None,
    )
    document = EntityDraft(path, "document", summary=title or path, mode="reference", importance=0.4, source_path=path)
    return Extraction(
        entities=[document, chunk],
        relations=[RelationDraft(EntityRef(name, "document_chunk"), EntityRef(path, "document"), "part_of")],
        searchable_text=f"{title} {text}".strip(),
    )


@register("session.ended", "session.started")
def session_marker(envelope: dict[str, Any]) -> Extraction:
    payload = envelope["payload"]
    state = "ended" if envelope["type"] == "session.ended" else "started"
    detail = flatten_text(payload)
    entity = EntityDraft(
        name=envelope["session"],
        entity_type="session",
        summary=bounded(f"session {state}: {detail}".strip()),
        properties={"state": state},
        valid_from=event_time(envelope),
        importance=0.3,
    )
    return Extraction(entities=[entity], searchable_text=detail)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
