"""The seeds' MCP contract, driven over a real stdio MCP client (issue 16).

Every tool the seeds (/work/shared/seeds, 003 MCP interface and 000/001/004) name is one row of :data:`ROWS`:
its arguments are spelled exactly as the seed spells them (with the seed's example payloads where it gives
one) and the row lists the response fields the seed promises. Rows run in order against one ``zaxy serve``
subprocess, so later rows use what earlier ones wrote (``ctx``). A tool that belongs to another open issue is a
row with ``pending=`` naming it: the row is skipped with that reason until the tool lands, then it is one
edit to enable. docs/seed-differences.md lists what we match, alias and deliberately do differently.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.mcp._client import StdioClient, serve_params
from zaxy_agents.mcp import registry

SESSION = "seed-contract"
SUBAGENT = "seed-contract-worker"
Context = dict[str, Any]
Arguments = dict[str, Any] | Callable[[Context], dict[str, Any]]


@dataclass(frozen=True)
class Row:
    """One seed tool call: the seed's argument names, the response fields it promises, what to keep."""

    label: str
    tool: str
    arguments: Arguments = field(default_factory=dict)
    fields: tuple[str, ...] = ()  # dotted paths; ``name[]`` checks every item of a non-empty list
    check: Callable[[dict[str, Any], Context], None] | None = None  # extra promises (values, not only keys)
    keep: Callable[[dict[str, Any], Context], None] | None = None
    pending: str | None = None  # the open issue the tool belongs to

    def args(self, ctx: Context) -> dict[str, Any]:
        return self.arguments(ctx) if callable(self.arguments) else dict(self.arguments)


def _keep(**paths: str) -> Callable[[dict[str, Any], Context], None]:
    def keep(response: dict[str, Any], ctx: Context) -> None:
        for name, path in paths.items():
            ctx[name] = _values(response, path)[0]

    return keep


def _checked_out(response: dict[str, Any], ctx: Context) -> None:
    assert response["prompt"].startswith("# Memory Checkout")
    assert response["guidance"]["recommended_checkout"]["tool"] == "memory_checkout"
    ctx["feedback"] = response["guidance"]["feedback"]["payloads"][0]


def _retry_checkout(response: dict[str, Any], ctx: Context) -> None:
    quality = response["quality"]
    assert quality["answerability"] == "refresh_recommended", quality
    action = quality["required_action"]
    assert action["tool"] == "memory_checkout" and "exact" in action["missing_slots"], action
    assert action["query"] in action["suggested_queries"]


def _explained(response: dict[str, Any], ctx: Context) -> None:
    (edge,) = response["results"]
    assert edge["method"] == "explicit_outcome_explanation_v1", edge  # seed 000 task 3
    assert edge["evidence"]["source_event_seq"] == ctx["failure_seq"] and edge["evidence"]["resolves"]
    assert (edge["review_status"], edge["authority_status"]) == ("proposed", "non_authoritative")


def _assembled(response: dict[str, Any], ctx: Context) -> None:
    assert response["prompt"].startswith("# Active Memory Working Set")
    lanes = {item["metadata"]["assembly_lane"] for item in response["items"]}
    assert lanes <= {"graph", "verbatim", "replay"} and "replay" in lanes
    assert response["budget"]["budget_used"] <= response["budget"]["budget_requested"]


def _cleaned_event(replay: dict[str, Any]) -> None:
    # (lifecycle capture of earlier calls in that session may land around it: look it up by type)
    (cleaned,) = [event for event in replay["events"] if event["type"] == "subagent.cleaned"]
    assert cleaned["payload"]["integrity_status"] == "verified" and cleaned["payload"]["parent_session_id"] == SESSION


def _cleaned(response: dict[str, Any], ctx: Context) -> None:
    assert response["handoff"]["integrity_status"] == "verified"
    assert response["cleaned_event"].startswith(f"eventloom://{SUBAGENT}/")


def _supporting_row(checkout: dict[str, Any]) -> dict[str, Any]:
    synthesis = checkout["diagnostics"]["synthesis"]
    first = synthesis["answer_candidates"][0]["supporting_source_ids"][0]
    return next(row for row in synthesis["ledger_rows"] if row["row_id"] == first)


MISSION = "seed-mission"
_IN_MISSION = {"mission_id": MISSION}


def _finding(response: dict[str, Any], ctx: Context) -> None:
    assert (response["review_status"], response["authority_status"]) == ("pending", "non_authoritative")
    ctx["finding_id"] = response["finding_id"]


def _accepted_state(response: dict[str, Any], ctx: Context) -> None:
    assert [row["finding_id"] for row in response["accepted_state"]] == [ctx["finding_id"]]
    assert response["purpose"]["preset"] == "coordinate"


COORDINATE_ROWS: tuple[Row, ...] = (
    # --- seed 003: Coordinate (issue 21) ---------------------------------------------------------------------
    Row(
        "coordination_start",
        "coordination_start",
        {**_IN_MISSION, "title": "Seed mission", "objective": "Exercise the seed tools", "reviewers": ["sre"]},
        ("mission_id", "session", "citation"),
    ),
    Row(
        "coordination_worker_create",
        "coordination_worker_create",
        {**_IN_MISSION, "worker_id": "w1", "purpose": "look"},
        ("worker_session", "citation"),
    ),
    Row(
        "coordination_assign",
        "coordination_assign",
        {**_IN_MISSION, "worker_id": "w1", "task": "Find the cause"},
        ("assignment_id", "citation"),
    ),
    Row(
        "coordination_report_finding (pending, non-authoritative)",
        "coordination_report_finding",
        {**_IN_MISSION, "worker_id": "w1", "subject": "cause", "claim": "pool exhausted", "confidence": 0.8},
        ("finding_id", "review_status", "authority_status", "citation"),
        check=_finding,
    ),
    Row(
        "coordination_review_finding",
        "coordination_review_finding",
        lambda ctx: {
            **_IN_MISSION,
            "finding_id": ctx["finding_id"],
            "status": "accepted",
            "rationale": "checked",
            "reviewer": "sre",
        },
        ("status", "citation"),
    ),
    Row(
        "coordination_promote",
        "coordination_promote",
        lambda ctx: {**_IN_MISSION, "finding_id": ctx["finding_id"], "promoted_by": "sre"},
        ("authority_status", "citation"),
    ),
    Row(
        "coordination_merge_brief",
        "coordination_merge_brief",
        _IN_MISSION,
        ("findings.promoted[]", "counts", "conflicts", "workers[]"),
    ),
    Row(
        "coordination_checkout (promoted parent state by default)",
        "coordination_checkout",
        _IN_MISSION,
        ("prompt", "accepted_state[]", "purpose", "diagnostics.accepted_count"),
        check=_accepted_state,
    ),
    Row(
        "coordination_performance_ledger",
        "coordination_performance_ledger",
        _IN_MISSION,
        ("workers[].accepted_rate", "workers[].missing_evidence", "workers[].test_backed_rate"),
    ),
    Row(
        "coordination_handoff (handoff_id, handoff_event_ref)",
        "coordination_handoff",
        {**_IN_MISSION, "summary": "Raise the pool", "next_steps": ["watch"], "risks": ["load"]},
        ("handoff_id", "handoff_event_ref.seq", "handoff_event_ref.hash"),
        keep=_keep(handoff_id="handoff_id"),
    ),
    Row(
        "coordination_proof_trace (handoff_id)",
        "coordination_proof_trace",
        lambda ctx: {**_IN_MISSION, "handoff_id": ctx["handoff_id"]},
        ("steps[]", "claims[]", "verified", "handoff.handoff_event_ref"),
        check=lambda r, ctx: _verified(r),
    ),
    Row(
        "coordination_record_synthesis_artifact (checkout, candidate, outcome, decision_scope handoff, handoff_id)",
        "coordination_record_synthesis_artifact",
        lambda ctx: {
            **_IN_MISSION,
            "checkout": ctx["synthesis_checkout"],
            "candidate": ctx["synthesis_checkout"]["diagnostics"]["synthesis"]["answer_candidates"][0],
            "outcome": "used",
            "decision_scope": "handoff",
            "handoff_id": ctx["handoff_id"],
            "actor": "sre",
        },
        (
            "proof_id",
            "artifact_id",
            "handoff_event_ref.seq",
            "accepted_finding_ids[]",
            "outcome.event_type",
            "citation",
        ),
        keep=_keep(artifact_id="artifact_id"),
    ),
    Row(
        "coordination_proof_trace (artifact_id)",
        "coordination_proof_trace",
        lambda ctx: {**_IN_MISSION, "artifact_id": ctx["artifact_id"]},
        ("steps[]", "claims[]", "verified", "artifact.answer_candidates[]", "proof_packets[].handoff_event_ref"),
        check=lambda r, ctx: _verified(r),
    ),
    Row(
        "coordination_report_finding (a second one, for the approval round trip)",
        "coordination_report_finding",
        {**_IN_MISSION, "worker_id": "w1", "subject": "cache", "claim": "cache cold"},
        ("finding_id",),
        keep=_keep(second_id="finding_id"),
    ),
    Row(
        "coordination_approval_packet (packet_id, items)",
        "coordination_approval_packet",
        _IN_MISSION,
        ("packet_id", "items[]"),
        keep=_keep(packet_id="packet_id"),
    ),
    Row(
        "coordination_apply_approval (decisions as review events, promote only where asked)",
        "coordination_apply_approval",
        lambda ctx: {
            **_IN_MISSION,
            "packet_id": ctx["packet_id"],
            "actor": "sre",
            "decisions": [{"finding_id": ctx["second_id"], "status": "accepted", "rationale": "ok", "promote": True}],
        },
        ("reviews[]", "promotions[]"),
    ),
)


def _verified(response: dict[str, Any]) -> None:
    assert response["verified"] is True


ROWS: tuple[Row, ...] = (
    # --- seed 003: the log and the front door -------------------------------------------------------------
    Row(
        "memory_append (event_type, actor, payload, thread)",
        "memory_append",
        {
            "event_type": "decision.recorded",
            "actor": "assistant",
            "payload": {
                "decision": "Memory Checkout is the model-facing context contract.",
                "topic": "memory checkout",
            },
            "thread": SESSION,
        },
        ("citation", "seq", "hash"),
        keep=_keep(decision_citation="citation"),
    ),
    Row(
        "memory_append: a fact to invalidate later",
        "memory_append",
        {"event_type": "fact.asserted", "actor": "agent", "payload": {"key": "ci runner", "fact": "CI runs on m5"}},
        ("citation", "timestamp"),
        keep=_keep(fact_time="timestamp"),
    ),
    Row(
        "memory_append: an observation linked to its task by taskId (seed 002)",
        "memory_append",
        {
            "event_type": "command.completed",
            "actor": "agent",
            "payload": {"command": "pytest", "exit_code": 1, "output": "1 failed", "taskId": "task-7"},
        },
        ("citation", "seq", "hash"),
        keep=_keep(failure_seq="seq", failure_hash="hash", failure_citation="citation"),
    ),
    Row(
        "memory_append: outcome.explained in the seed's shape (seed 000 task 3)",
        "memory_append",
        lambda ctx: {
            "event_type": "outcome.explained",
            "actor": "assistant",
            "payload": {
                "cause": {"name": "command:pytest", "entity_type": "command"},
                "effect": {"name": "test failure", "entity_type": "outcome"},
                "relation_type": "caused",
                "confidence": 0.92,
                "evidence": {
                    "source_event_seq": ctx["failure_seq"],
                    "source_event_hash": ctx["failure_hash"],
                    "reason": "The command output contained the failure.",
                },
            },
        },
        ("citation",),
    ),
    Row(
        "memory_checkout (query, limit, max_tokens, purpose, replay_from_seq, max_recent_events)",
        "memory_checkout",
        {
            "query": "what is the model-facing context contract?",
            "limit": 5,
            "max_tokens": 1500,
            "purpose": {"role": "coding", "task": "memory checkout contract", "expected_action": "answer"},
            "replay_from_seq": 1,
            "max_recent_events": 3,
        },
        (
            "current_facts[].content",
            "current_facts[].citation",
            "current_facts[].source_lane",
            "current_facts[].entity_name",
            "current_facts[].entity_type",
            "diagnostics.source_lanes",
            "diagnostics.citation_count",
            "diagnostics.current_citation_count",
            "diagnostics.current_fact_count",
            "diagnostics.superseded_contexts_excluded",
            "diagnostics.warning_count",
            "diagnostics.feedback_recommended",
            "diagnostics.feedback_tool",
            "diagnostics.budget_requested",
            "diagnostics.budget_used",
            "diagnostics.elided",
            "diagnostics.stable_prefix_chars",
            "quality.answerability",
            "quality.confidence",
            "quality.reasons",
            "quality.required_action",
            "guidance.feedback.tool",
            "guidance.feedback.payloads[].entity_name",
            "guidance.feedback.payloads[].entity_type",
            "guidance.feedback.payloads[].feedback",
            "guidance.feedback.payloads[].actor",
            "guidance.feedback.payloads[].citation",
            "guidance.trust",
            "guidance.ignore",
            "guidance.recommended_checkout.tool",
            "guidance.recommended_checkout.arguments.query",
            "diagnostics.purpose_policy.suppressed",
            "diagnostics.inferred_context",
            "retention.purpose_policy.suppressed",
            "purpose.expected_action",
            "prompt",
        ),
        check=_checked_out,
    ),
    Row(
        "memory_checkout: a composed question with a missing slot (slot_plan, missing_slots, suggested_queries)",
        "memory_checkout",
        {"query": 'how many tests failed in the pytest run, and which file sets "retry_policy"?', "limit": 5},
        (
            "diagnostics.slot_plan[].slot",
            "diagnostics.slot_plan[].satisfied",
            "quality.required_action.tool",
            "quality.required_action.query",
            "quality.required_action.reason",
            "quality.required_action.missing_slots",
            "quality.required_action.suggested_queries",
        ),
        check=_retry_checkout,
    ),
    Row(
        "memory_query (query, temporal_filter, limit)",
        "memory_query",
        lambda ctx: {"query": "context contract", "temporal_filter": ctx["fact_time"], "limit": 5},
        ("hits[].citation", "hits[].score_explanation"),
    ),
    Row(
        "memory_verbatim (query, session_id, limit)",
        "memory_verbatim",
        {"query": "pytest failed", "session_id": SESSION, "limit": 3},
        ("hits[].content", "hits[].score", "hits[].citation", "hits[].source_kind", "hits[].source"),
    ),
    Row(
        "context_assemble (query, replay_from_seq, limit, max_recent_events, max_tokens)",
        "context_assemble",
        {
            "query": "why did the tests fail?",
            "replay_from_seq": 1,
            "limit": 5,
            "max_recent_events": 4,
            "max_tokens": 2000,
        },
        (
            "items[].metadata.assembly_lane",
            "assembly_policy",
            "context_counts.graph",
            "context_counts.verbatim",
            "context_counts.replay",
            "working_set",
            "prompt",
            "budget.budget_requested",
            "budget.budget_used",
            "budget.elided",
        ),
        check=_assembled,
    ),
    Row(
        "memory_feedback (entity_name, entity_type, feedback, ...) from the checkout's payload",
        "memory_feedback",
        lambda ctx: {
            **{k: v for k, v in ctx["feedback"].items() if k != "session_id"},
            "importance": 0.8,
            "query": "what is the model-facing context contract?",
            "source": "memory_checkout",
            "score": 0.91,
            "reason": "Answered the question from it.",
            "purpose": "coding",
            "outcome": "answered",
        },
        ("event", "type", "feedback"),
        check=lambda r, ctx: r["type"] == "memory.reinforced" or pytest.fail(r),
    ),
    Row(
        "memory_feedback: irrelevant is audit-only",
        "memory_feedback",
        {"entity_name": "memory checkout", "entity_type": "decision", "feedback": "irrelevant"},
        ("event",),
        check=lambda r, ctx: r["type"] == "memory.feedback" or pytest.fail(r),
    ),
    # --- seed 003: synthesis artifacts and the evidence ledger (issue 20) -----------------------------------
    Row(
        "memory_append: a cost to compose",
        "memory_append",
        {"event_type": "note.recorded", "payload": {"text": "The CI runners cost $420 this month."}},
        ("citation",),
    ),
    Row(
        "memory_checkout: diagnostics.synthesis.answer_candidates and ledger_rows",
        "memory_checkout",
        {"query": "How much did the CI runners cost in total?"},
        (
            "diagnostics.synthesis.answer_candidates[].rank",
            "diagnostics.synthesis.answer_candidates[].candidate_type",
            "diagnostics.synthesis.answer_candidates[].answer_value",
            "diagnostics.synthesis.answer_candidates[].confidence",
            "diagnostics.synthesis.answer_candidates[].supporting_source_ids",
            "diagnostics.synthesis.answer_candidates[].excluded_source_ids",
            "diagnostics.synthesis.ledger_rows[].fact_id",
            "diagnostics.synthesis.ledger_rows[].source_group",
            "diagnostics.synthesis.ledger_rows[].citation",
            "diagnostics.synthesis.ledger_rows[].value",
            "diagnostics.synthesis.ledger_rows[].label",
            "diagnostics.synthesis.ledger_rows[].reason",
        ),
        keep=lambda r, ctx: ctx.update(synthesis_checkout=r),
    ),
    Row(
        "memory_synthesis_artifact (checkout, candidate, outcome)",
        "memory_synthesis_artifact",
        lambda ctx: {
            "checkout": ctx["synthesis_checkout"],
            "candidate": ctx["synthesis_checkout"]["diagnostics"]["synthesis"]["answer_candidates"][0],
            "outcome": "used",
        },
        ("artifact_id", "citation", "outcome.event_type", "outcome.candidate.candidate_id"),
        check=lambda r, ctx: r["outcome"]["event_type"] == "memory.synthesis.used" or pytest.fail(r),
    ),
    Row(
        "memory_synthesis_evidence (checkout, row, outcome, candidate, reason, actor)",
        "memory_synthesis_evidence",
        lambda ctx: {
            "checkout": ctx["synthesis_checkout"],
            "row": _supporting_row(ctx["synthesis_checkout"]),
            "outcome": "helpful",
            "candidate": ctx["synthesis_checkout"]["diagnostics"]["synthesis"]["answer_candidates"][0],
            "reason": "the answer quotes it",
            "actor": "assistant",
        },
        ("event_type", "citation", "fact_id", "source_group", "row_citation"),
        check=lambda r, ctx: r["event_type"] == "memory.evidence.reinforced" or pytest.fail(r),
    ),
    Row(
        "memory_invalidate (entity_name, entity_type, invalid_at)",
        "memory_invalidate",
        lambda ctx: {"entity_name": "ci runner", "entity_type": "fact", "invalid_at": ctx["fact_time"]},
        ("event", "invalid_at"),
        check=lambda r, ctx: r["invalid_at"] == ctx["fact_time"] or pytest.fail(r),
    ),
    Row(
        "memory_capabilities (session_id, current_task)",
        "memory_capabilities",
        {"session_id": SESSION, "current_task": "fix the failing tests"},
        ("server.profile", "recommended_next_call.tool", "recommended_next_call.arguments.query"),
    ),
    Row(
        "memory_capabilities: what Zaxy is, the profile block, capture health, refresh policy (ide, issue 18)",
        "memory_capabilities",
        {"current_task": "fix the failing tests"},
        ("profile.name", "profile.unlisted_tools", "capture.status", "front_door", "refresh_policy", "what"),
    ),
    Row(
        "memory_bootstrap (session_id, current_task)",
        "memory_bootstrap",
        {"session_id": SESSION, "current_task": "fix the failing tests"},
        ("recommended_checkout.tool", "recommended_checkout.arguments.query", "prompt"),
    ),
    Row(
        "memory_bootstrap: manifest, capture status, trust policy (ide, issue 18)",
        "memory_bootstrap",
        {"current_task": "fix the failing tests"},
        (
            "manifest.recommended_next_call",
            "capture_status.status",
            "trust_policy.cited_current_facts",
            "trust_policy.unsupported_context",
            "trust_policy.feedback_recording",
        ),
    ),
    Row(
        "memory_feeling_of_knowing (query, session_id, cues)",
        "memory_feeling_of_knowing",
        {
            "query": "why did pytest fail?",
            "session_id": SESSION,
            "cues": {"mission": "fix tests", "workspace": "zaxy", "tool": "pytest", "phase": "execution"},
        },
        (
            "verdict",
            "score",
            "signals.query_term_count",
            "signals.entity_name_hits",
            "signals.cue_hits",
            "signals.salience_mass",
        ),
    ),
    Row("memory_replay (session_id, from_seq)", "memory_replay", {"session_id": SESSION, "from_seq": 1}, ("events[]",)),
    # --- seed 000 / 001 / 003: causal and consolidation -----------------------------------------------------
    Row(
        "memory_causal_successors (entity_name, relation_type, depth, session_id)",
        "memory_causal_successors",
        {"entity_name": "command:pytest", "relation_type": "caused", "depth": 2, "session_id": SESSION},
        tuple(
            f"results[].{name}"
            for name in (
                "source",
                "target",
                "relation_type",
                "graph_relation_type",
                "confidence",
                "method",
                "citation",
                "review_status",
                "authority_status",
                "evidence",
                "path_length",
            )
        ),
        check=_explained,
    ),
    Row(
        "memory_causal_predecessors (entity_name, relation_type, depth, session_id)",
        "memory_causal_predecessors",
        {"entity_name": "test failure", "relation_type": "caused", "depth": 2, "session_id": SESSION},
        ("results[].source", "results[].citation", "results[].evidence", "results[].path_length"),
        check=_explained,
    ),
    Row(
        "memory_consolidation_candidate (candidate_type, title, summary, source_events, confidence, method, ...)",
        "memory_consolidation_candidate",
        lambda ctx: {
            "candidate_type": "episode",
            "title": "Pytest failure investigation",
            "summary": "The agent ran pytest, saw a failure, and identified the cause.",
            "source_events": [{"seq": ctx["failure_seq"], "hash": ctx["failure_hash"]}],
            "confidence": 0.74,
            "method": "event_segment_cluster_v1",
            "purpose": "coding",
            "session_id": SESSION,
            "actor": "zaxy-consolidation",
        },
        ("candidate_id", "citation", "candidate.review_status"),
        keep=_keep(candidate_id="candidate_id"),
    ),
    Row(
        "memory_consolidation_propose_from_log (actor, purpose, limit, max_events, window_size)",
        "memory_consolidation_propose_from_log",
        {"session_id": SESSION, "actor": "zaxy-consolidation", "purpose": "coding", "limit": 5, "max_events": 100},
        ("session_id", "segment_count", "candidate_count", "events"),
        check=lambda r, ctx: (
            all(s["segment_id"].startswith(f"segment:{SESSION}:") for s in r["segments"]) or pytest.fail(r["segments"])
        ),  # seed 001: segment:<session>:<first seq>-<last seq>
    ),
    Row(
        "memory_consolidation_review (candidate_id, status, rationale, session_id, actor)",
        "memory_consolidation_review",
        lambda ctx: {
            "candidate_id": ctx["candidate_id"],
            "status": "accepted",
            "rationale": "Cited and useful; acceptance is not authority.",
            "session_id": SESSION,
            "actor": "zaxy-reviewer",
        },
        ("status", "citation", "authority_status"),
        check=lambda r, ctx: r["authority_status"] == "non_authoritative" or pytest.fail(r),
    ),
    Row(
        "memory_consolidation_status (session_id)",
        "memory_consolidation_status",
        {"session_id": SESSION},
        ("pending", "accepted", "rejected", "conflicted", "stale", "superseded", "valid_to_closed"),
    ),
    Row(
        "memory_checkout: consolidation and causal diagnostics (seeds 000, 001, 003)",
        "memory_checkout",
        {"query": "why did command:pytest cause the test failure?", "limit": 8},
        tuple(
            f"diagnostics.consolidation_candidates.{name}"
            for name in (
                "candidate_count",
                "candidate_types",
                "pending_count",
                "accepted_count",
                "rejected_count",
                "conflicted_count",
                "stale_count",
                "superseded_count",
                "valid_to_count",
                "authority_status",
            )
        )
        + tuple(
            f"diagnostics.causal_context.{name}"
            for name in (
                "context_count",
                "edge_count",
                "relation_types",
                "methods",
                "average_trust",
                "authority_status",
            )
        ),
    ),
    Row(
        "memory_consolidation (operation, ...)",
        "memory_consolidation",
        {"operation": "status"},
        ("operation", "accepted"),
    ),
    # --- seed 003: lifecycle ----------------------------------------------------------------------------------
    Row(
        "memory_skill (action, skill_id, ...): proposed",
        "memory_skill",
        lambda ctx: {
            "action": "proposed",
            "skill_id": "python-test-first",
            "version": "1",
            "name": "Python test first",
            "summary": "Write the failing test before the fix.",
            "procedure": ["Write failing test", "Run pytest"],
            "applicability": "Python bug fixes",
            "citations": [ctx["failure_citation"]],
            "failure_modes": ["flaky tests"],
            "rollback": "Revert the test commit.",
        },
        ("event", "type", "skill_id", "version", "status"),
    ),
    Row(
        "memory_skill: outcome_recorded (success_score, feedback, evidence)",
        "memory_skill",
        {
            "action": "outcome_recorded",
            "skill_id": "python-test-first",
            "task": "fix tests",
            "success_score": 0.9,
            "feedback": "the failing test caught the bug",
            "evidence": "pytest passed after the fix",
        },
        ("event", "type", "version"),
        check=lambda r, ctx: r["type"] == "skill.outcome_recorded" or pytest.fail(r),
    ),
    Row(
        "context_after_turn (role, content)",
        "context_after_turn",
        {"role": "user", "content": "Please fix the failing pytest run."},
        ("recorded", "context.prompt"),
    ),
    Row(
        "memory_append: the subagent's own work, in its session",
        "memory_append",
        {"event_type": "task.created", "actor": "worker", "payload": {"task_id": "w-1"}, "thread": SUBAGENT},
        ("citation",),
    ),
    Row(
        "subagent_cleanup (parent_session_id, subagent_session_id, summary)",
        "subagent_cleanup",
        {"parent_session_id": SESSION, "subagent_session_id": SUBAGENT, "summary": "Reproduced the failure."},
        ("handoff.summary", "handoff.integrity_status", "cleaned_event", "event"),
        check=_cleaned,
    ),
    Row(
        "subagent_cleanup wrote subagent.cleaned in the subagent session",
        "memory_replay",
        {"session_id": SUBAGENT, "from_seq": 1},
        ("events[]",),
        check=lambda r, ctx: _cleaned_event(r),
    ),
    # --- seed 003 beta.2: metacognition (issue 20) -----------------------------------------------------------
    Row(
        "memory_record_known_unknown (question, reason, source_events, claim_key)",
        "memory_record_known_unknown",
        lambda ctx: {
            "question": "Which runner does the nightly job use?",
            "reason": "the nightly config is not in memory",
            "source_events": [{"seq": ctx["failure_seq"], "hash": ctx["failure_hash"]}],
            "claim_key": "fact:ci runner",
            "session_id": SESSION,
        },
        ("unknown_id", "citation", "status", "authority_status"),
        check=lambda r, ctx: (r["status"], r["authority_status"]) == ("open", "non_authoritative") or pytest.fail(r),
    ),
    Row(
        "memory_known_unknowns (session_id)",
        "memory_known_unknowns",
        {"session_id": SESSION},
        ("items[].question", "items[].status", "items[].citation", "open_count"),
    ),
    Row(
        "memory_claim_confidence (claim_key; with an assessment point)",
        "memory_claim_confidence",
        lambda ctx: {
            "claim_key": "fact:ci runner",
            "confidence": 0.6,
            "rationale": "one source",
            "source_events": [ctx["failure_citation"]],
        },
        ("claim_key", "current_facts", "assessed_confidence", "supported", "doubts", "recorded"),
    ),
    Row(
        "memory_confidence_trajectory (claim_key)",
        "memory_confidence_trajectory",
        {"claim_key": "fact:ci runner"},
        ("points[].confidence", "points[].citation", "current_confidence", "trend"),
    ),
    Row(
        "memory_reverification_needs (session_id)",
        "memory_reverification_needs",
        {"session_id": SESSION},
        ("requests", "derived", "conflict_clusters", "authority_status"),
    ),
    Row(
        "memory_confidence (operation, ...)",
        "memory_confidence",
        {"operation": "trajectory", "claim_key": "fact:ci runner"},
        ("operation", "points[].confidence"),
    ),
    Row(
        "memory_propose_belief_update (claim, rationale, confidence, citations, phase)",
        "memory_propose_belief_update",
        lambda ctx: {
            "claim": "CI runs on m6 instances",
            "rationale": "the failing run's log names m6",
            "confidence": 0.55,
            "citations": [ctx["failure_citation"]],
            "phase": "reflection",
        },
        ("proposal_id", "citation", "review_status", "authority_status", "proposal.claim", "proposal.citations"),
        check=lambda r, ctx: (
            (r["review_status"], r["authority_status"]) == ("pending", "non_authoritative") or pytest.fail(r)
        ),
    ),
    Row(
        "memory_plan_from_procedures (goal, ...)",
        "memory_plan_from_procedures",
        {"goal": "fix the failing tests"},
        ("goal", "applicable", "diagnostic", "excluded", "authority_status"),
        check=lambda r, ctx: r["authority_status"] == "non_authoritative" or pytest.fail(r),
    ),
    *COORDINATE_ROWS,
)

SEED_TOOLS = sorted({row.tool for row in ROWS})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StdioClient, Context]]:
    root = tmp_path_factory.mktemp("seed-contract")
    params = serve_params(root / "eventloom", "--session-id", SESSION, "--profile", "full")
    with StdioClient(params, errlog=root / "server.log") as client:
        yield client, {}


@pytest.mark.parametrize("row", ROWS, ids=[row.label for row in ROWS])
def test_seed_tool(row: Row, server: tuple[StdioClient, Context]) -> None:
    client, ctx = server
    spec = registry.get(row.tool)
    if row.pending and spec is None:
        pytest.skip(f"{row.tool} belongs to {row.pending}")
    assert spec is not None, f"{row.tool} is not registered"
    arguments = row.args(ctx)
    published = spec.input_schema()["properties"]
    unpublished = set(arguments) - set(published)
    if row.pending and unpublished:
        pytest.skip(f"{row.tool} {sorted(unpublished)} belong to {row.pending}")
    assert not unpublished, f"not the published (seed) names: {unpublished}"
    result = client.call(row.tool, arguments)
    response = result.structuredContent
    missing = [path for path in row.fields if not _values(response, path)]
    if row.pending:  # strict: a pending row that passes must be enabled
        assert result.isError or missing, f"{row.label} passes now: drop pending={row.pending!r}"
        pytest.skip(f"{row.label}: {missing or 'error'} belong to {row.pending}")
    assert not result.isError, response
    assert not missing, f"{row.tool}: missing {missing} in {json.dumps(response)[:2000]}"
    if row.check is not None:
        row.check(response, ctx)
    if row.keep is not None:
        row.keep(response, ctx)


def test_every_core_tool_description_names_checkout_as_the_front_door() -> None:
    """Seed 004, 2.1-alpha.1 exit criterion."""
    for spec in registry.listed("core"):
        assert "memory_checkout" in spec.description and "front door" in spec.description, spec.name


def test_aliases_are_accepted_and_documented(tmp_path: Path) -> None:
    """Earlier names still work (documented in the contract snapshot), but the seed's names are what is listed."""
    for spec in registry.all_tools():
        published = spec.input_schema()["properties"]
        for alias, name in spec.args.ARGUMENT_ALIASES.items():
            assert name in published and alias not in published, (spec.name, alias)
    params = serve_params(tmp_path / "eventloom", "--session-id", "legacy", "--profile", "full")
    with StdioClient(params) as client:
        old = client.ok("memory_append", {"type": "fact.asserted", "payload": {"key": "db", "fact": "db is pg"}})
        assert old["type"] == "fact.asserted"
        both = client.call("memory_append", {"type": "fact.asserted", "event_type": "fact.asserted", "payload": {}})
        assert both.isError and both.structuredContent["error"]["field"] == "type"
        feedback = client.ok("memory_feedback", {"entity": "db", "signal": "used", "note": "old names"})
        assert feedback["entity_name"] == "db" and feedback["feedback"] == "used"
        hits = client.ok("memory_query", {"query": "db", "k": 1, "as_of": old["timestamp"]})["hits"]
        assert len(hits) == 1


def _values(response: Any, path: str) -> list[Any]:
    """Values at a dotted path (``a.b[].c``: every item of the list ``b``); empty when any step is missing."""
    current = [response]
    for part in path.split("."):
        is_list = part.endswith("[]")
        key = part.removesuffix("[]")
        found = []
        for value in current:
            if not isinstance(value, dict) or key not in value:
                return []
            item = value[key]
            if is_list:
                if not isinstance(item, list) or not item:
                    return []
                found.extend(item)
            else:
                found.append(item)
        current = found
    return current
