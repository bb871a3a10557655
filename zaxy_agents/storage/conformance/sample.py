"""A small, deterministic memory that exercises every projection path: facts that supersede each other, decisions,
tasks, an inferred edge, an invalidation, a causal explanation, conversation turns and an unknown event type."""

from __future__ import annotations

import json
from typing import Any

from zaxy_agents.eventloom.canonical import GENESIS_HASH
from zaxy_agents.eventloom.protocol import EventLog

SESSIONS = ("alpha", "beta")


def sample_drafts(session: str) -> list[dict[str, Any]]:
    other = "Porto" if session == "alpha" else "Braga"
    return [
        {"type": "fact.asserted", "payload": {"subject": "user", "predicate": "city", "object": "Lisbon"}},
        {"type": "decision.recorded", "payload": {"decision": "use postgres", "rationale": "many workers"}},
        {"type": "task.created", "payload": {"task_id": "T-1", "title": "deploy the gateway"}},
        {"type": "transcript.turn", "payload": {"role": "user", "text": "the gateway retries on timeouts"}},
        {"type": "fact.asserted", "payload": {"subject": "user", "predicate": "city", "object": other}},
        {"type": "command.completed", "payload": {"command": "make deploy", "exit_code": 2, "task_id": "T-1"}},
        {"type": "weather.observed", "payload": {"sky": "clear", "temperature": 21}},
        {"type": "task.completed", "payload": {"task_id": "T-1"}},
        {"type": "memory.invalidated", "payload": {"name": "use postgres", "entity_type": "decision", "reason": "x"}},
        {"type": "transcript.turn", "payload": {"role": "assistant", "text": "deploy failed with exit code 2"}},
    ]


def write_sample(log: EventLog) -> None:
    """Append the sample to ``log`` (each session in two batches, so both append paths are used)."""
    for session in SESSIONS:
        drafts = sample_drafts(session)
        log.append(session, drafts[0]["type"], drafts[0]["payload"])
        log.append_many(session, drafts[1:])
        first = log.get(session, 1)
        log.append(
            session,
            "inference.edge.generated",
            {
                "source": {"name": "T-1", "entity_type": "task"},
                "target": {"name": "use postgres", "entity_type": "decision"},
                "relation_type": "likely_implemented_decision",
                "confidence": 0.7,
                "inference_method": "conformance_sample_v1",
                "evidence": {"seq": first.seq, "hash": first.hash},
            },
        )


def copy_log(source: EventLog, target: EventLog) -> None:
    """Make ``target`` hold byte-identical sessions (import of the stored lines)."""
    for summary in source.sessions():
        head = target.head(summary.session)
        after = (0, GENESIS_HASH) if head is None else (head.seq, head.hash)
        lines = [(json.loads(line), line) for line in source.replay_lines(summary.session, after[0] + 1)]
        target.import_lines(summary.session, lines, after)
