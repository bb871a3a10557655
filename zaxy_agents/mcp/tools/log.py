"""The log itself: memory_append (core), memory_verbatim and memory_replay (full)."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import Field

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import (
    MAX_PAYLOAD_DEPTH,
    MAX_PAYLOAD_KEYS,
    MAX_SCOPE,
    SessionName,
    ToolArgs,
    optional,
    payload_validator,
    session_field,
)
from zaxy_agents.mcp.tools.meta import Cues

EVENT_TYPE_PATTERN = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$"
# Event types with a gate of their own: appending them raw would bypass it (e.g. the admin token on reviews).
GATED_TYPES = {
    "consolidation.candidate.reviewed": "memory_consolidation_review",
    "belief.update.reviewed": "memory_review_belief_update",
    "coordination.mission.started": "coordination_start",
    "coordination.worker.created": "coordination_worker_create",
    "coordination.assignment.created": "coordination_assign",
    "coordination.finding.reported": "coordination_report_finding",
    "coordination.finding.reviewed": "coordination_review_finding",
    "coordination.finding.promoted": "coordination_promote",
    "coordination.handoff.created": "coordination_handoff",
    "coordination.proof_packet.created": "coordination_record_synthesis_artifact",
    "memory.promoted": "coordination_promote (a promotion's strong reinforcement cites the promotion)",
    # synthesis: the tools check the bundle against the cited events before appending
    "memory.synthesis.artifact.created": "memory_synthesis_artifact",
    "memory.synthesis.used": "memory_synthesis_artifact",
    "memory.synthesis.rejected": "memory_synthesis_artifact",
    "memory.synthesis.corrected": "memory_synthesis_artifact",
    "memory.evidence.reinforced": "memory_synthesis_evidence",
    "memory.evidence.excluded": "memory_synthesis_evidence",
    "reasoning.primitive.called": "the primitive tools themselves (Zaxy records their calls)",
}
RESERVED_PREFIXES = ("coordination.",)  # the whole namespace, as LangGraph's memory tools reserve it
REPLAY_MAX_CHARS = 200_000


class AppendArgs(ToolArgs):
    ARGUMENT_ALIASES: ClassVar[dict[str, str]] = {"type": "event_type"}

    event_type: str = Field(
        min_length=3,
        max_length=128,
        pattern=EVENT_TYPE_PATTERN,
        description="Dotted lowercase event type. Recognised: fact.asserted {fact, subject?, predicate?, key?}; "
        "decision.recorded {decision, rationale?, topic?}; task.created|task.updated|task.completed {task_id, "
        "title?, status?}; command.completed {command, exit_code}; file.edit.applied {path}; transcript.turn "
        "{role, text}; document.chunk {path, text}. Others are stored and searchable as generic events.",
    )
    payload: dict[str, Any] = Field(
        default_factory=dict,
        json_schema_extra={"maxProperties": MAX_PAYLOAD_KEYS},
        description=f"JSON object (at most {MAX_PAYLOAD_DEPTH} levels deep). A fact re-asserted with the same "
        "key (or subject + predicate) supersedes the old one. Secrets are redacted before hashing.",
    )
    actor: str = Field(default="agent", min_length=1, max_length=256, description="Who produced the event.")
    encoding_gate: bool = Field(
        default=False,
        description="Tag the event novel, reinforcing or redundant against what memory already holds (payload "
        "field encoding_gate; tagging only: the event is always appended).",
    )
    cues: optional(
        Cues, "The context it was written in (mission, workspace, tool, phase): stored as payload.cues for recall."
    ) = None
    thread: optional(
        SessionName, "The session (thread) to append to; same as session_id. Defaults to the server's session."
    ) = None

    _bounded = payload_validator("payload")
    _thread = session_field("thread")


@tool(
    "memory_append",
    profile="core",
    order=20,
    summarize=lambda r: f"{r.get('type')} seq={r.get('seq')}",
    description="""Remember something: append one event (a fact, decision, task change, command result...) to
    the session's hash-chained log. Returns its eventloom:// citation. Nothing is ever overwritten: a newer fact
    supersedes an older one with the same identity. memory_checkout is the front door for reading memory back.""",
)
def memory_append(call: ToolCall[AppendArgs]) -> dict[str, Any]:
    args = call.args
    if args.event_type in GATED_TYPES:
        raise InvalidRequestError(
            f"{args.event_type} events are written by {GATED_TYPES[args.event_type]}, not appended directly",
            field="event_type",
            remediation=f"Call {GATED_TYPES[args.event_type]} (it checks the rights and references first).",
        )
    if args.event_type.startswith(RESERVED_PREFIXES):  # a type Coordinate may add later is never raw-appendable
        raise InvalidRequestError(
            f"{args.event_type}: the coordination.* event types are written by the coordination_* tools only",
            field="event_type",
            remediation="Use the coordination_* tools (they check the mission's roles first).",
        )
    payload = args.payload
    if args.cues is not None:
        given = payload.get("cues") if isinstance(payload.get("cues"), dict) else {}
        payload = {**payload, "cues": {**args.cues.model_dump(exclude_none=True), **given}}
    append = call.fabric.append_gated if args.encoding_gate else call.fabric.append
    event = append(call.session, args.event_type, payload, actor=args.actor)
    return {
        "citation": event.citation,
        "session": event.session,
        "seq": event.seq,
        "type": event.type,
        "timestamp": event.timestamp,
        "hash": event.hash,
        "redacted_paths": list(event.security.redacted_paths) if event.security else [],
        **({"encoding_gate": event.payload["encoding_gate"]} if args.encoding_gate else {}),
    }


class VerbatimArgs(ToolArgs):
    ARGUMENT_ALIASES: ClassVar[dict[str, str]] = {"k": "limit"}

    query: str = Field(min_length=1, max_length=4000, description="Words to look for in raw event text.")
    scope: optional(list[SessionName], "Other sessions to search as well.", max_length=MAX_SCOPE) = None
    limit: int = Field(default=10, ge=1, le=50, description="How many events to return.")


@tool(
    "memory_verbatim",
    profile="full",
    order=120,
    read_only=True,
    summarize=lambda r: f"hits={len(r.get('hits', []))}",
    description="""Lexical search over the raw text of logged events only (no graph, no embeddings): exact
    wording, error messages, identifiers, quoted phrases. Every hit is cited, with its raw content, source kind
    (transcript, document, command, ...) and source metadata (document path and lines, transcript turn).""",
)
def memory_verbatim(call: ToolCall[VerbatimArgs]) -> dict[str, Any]:
    args = call.args
    sessions = sorted({call.session, *(call.caller.allow_scope(args.scope) or [])})
    found = call.fabric.verbatim(args.query, sessions=sessions, k=args.limit)
    response = found.model_dump(mode="json", exclude_none=True)
    for hit in response["hits"]:
        event = next(iter(call.fabric.replay(hit["session"], hit["seq"], hit["seq"])), None)
        hit["content"] = hit["text"]
        hit["source_kind"] = SOURCE_KINDS.get(hit["event_type"], hit["event_type"].split(".")[0])
        hit["source"] = source_metadata(event.payload) if event is not None else {}
    return response


SOURCE_KINDS = {
    "transcript.turn": "transcript",
    "document.chunk": "document",
    "command.completed": "command",
    "tool.call.completed": "tool_call",
    "file.edit.applied": "file_edit",
}
SOURCE_KEYS = ("path", "source_path", "line_start", "line_end", "chunk_index", "title", "role", "speaker", "message_id")


def source_metadata(payload: dict[str, Any]) -> dict[str, Any]:
    """Where a hit's text came from: document path and line range, transcript role/turn, capture source."""
    metadata = {key: payload[key] for key in SOURCE_KEYS if isinstance(payload.get(key), str | int)}
    captured = payload.get("source")
    if isinstance(captured, dict):  # captured transcripts: {kind, file, line}
        metadata.update({f"source_{key}": value for key, value in captured.items() if isinstance(value, str | int)})
    return metadata


class ReplayArgs(ToolArgs):
    from_seq: int = Field(default=1, ge=1, description="First seq to return.")
    to_seq: optional(int, "Last seq to return (default: the tail).", ge=1) = None
    limit: int = Field(default=100, ge=1, le=500, description="At most this many events per call.")


@tool(
    "memory_replay",
    profile="full",
    order=130,
    read_only=True,
    admin=True,
    summarize=lambda r: f"events={len(r.get('events', []))} next_seq={r.get('next_seq')}",
    description="""Read the session's log in order, each event with its citation (paged: pass next_seq as
    from_seq). Over HTTP this needs the admin token.""",
)
def memory_replay(call: ToolCall[ReplayArgs]) -> dict[str, Any]:
    args = call.args
    head = call.fabric.head(call.session)
    events: list[dict[str, Any]] = []
    size = 0
    next_seq = None
    for event in call.fabric.replay(call.session, args.from_seq, args.to_seq):
        item = {**event.envelope(), "citation": event.citation}
        size += len(json.dumps(item, ensure_ascii=False, default=str))
        if len(events) >= args.limit or (events and size > REPLAY_MAX_CHARS):
            next_seq = event.seq
            break
        events.append(item)
    return {
        "session": call.session,
        "head_seq": head.seq if head is not None else 0,
        "events": events,
        "next_seq": next_seq,
    }
