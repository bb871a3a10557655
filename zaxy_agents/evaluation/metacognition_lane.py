"""Internal metacognition guardrail lane: uncertainty is recorded, cited and honoured, never served as a fact.

Deterministic fixture sessions are written through the real engine; known unknowns, confidence assessments and
re-verification requests are recorded through the fabric; checkouts are taken before and after. Metrics (each
the pass rate of its checks; the lane passes at 1.0 on all):

- ``unknown_guardrail``: a question memory could answer is answered from memory until a matching known unknown
  is recorded; then checkout refuses to (``refresh_recommended`` with the known unknown under
  ``diagnostics.metacognition``), an unrelated question is unaffected, and an ``answered`` resolution lifts it;
- ``recall_boundary``: known unknowns, assessments and requests are never recalled as evidence or facts;
- ``conflict_clusters``: contradicting current claims of two sessions form one unresolved cluster (and a
  checkout warning), agreeing ones do not, and superseding one side dissolves it;
- ``trajectory``: assessments are append-only points in log order; the claim itself never changes; ``as_of``
  reads the trajectory as it was;
- ``reverification``: explicit requests stay open until a resolution event closes them; weak and contradicted
  claims are listed with their reasons;
- ``contract_gate``: uncited, forged, authoritative and dangling records and double resolutions are refused
  with a structured error naming the field, and nothing is written;
- ``belief_review_gate``: a belief-update proposal is pending, non-authoritative and never recalled; neither it nor
  its acceptance changes a current fact (no promotion without a separate authority path); uncited proposals,
  unknown dispositions, double acceptances and reviews of unknown proposals are refused with nothing written.

This is an internal regression lane, not an external benchmark.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zaxy_agents.errors import ZaxyError
from zaxy_agents.fabric import MemoryFabric

from .lane_scoring import LaneScore

SESSION = "mc-research"
OTHER = "mc-source-b"
OWNER_QUESTION = "Who owns the marketing budget now?"


def run_metacognition_lane(eventloom_path: str | Path | None = None) -> dict[str, Any]:
    """Build the fixtures in a fresh Eventloom and score every guardrail."""
    score = LaneScore("metacognition")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="zaxy-metacognition-lane-") as scratch:
        root = Path(eventloom_path) if eventloom_path else Path(scratch) / "loom"
        with MemoryFabric.from_path(root) as fabric:
            cites = _fixtures(fabric)
            _score_unknown_guardrail(fabric, score, cites)
            _score_recall_boundary(fabric, score)
            _score_conflicts(fabric, score, cites)
            _score_trajectory(fabric, score, cites)
            _score_reverification(fabric, score, cites)
            _score_contract_gate(fabric, score, cites)
            _score_belief_review_gate(fabric, score, cites)
    return score.report(fixtures=2, took_s=round(time.perf_counter() - started, 3))


def _fixtures(fabric: MemoryFabric) -> dict[str, str]:
    events = {
        "owner": fabric.append(
            SESSION, "fact.asserted", {"key": "budget owner", "fact": "Alice owns the marketing budget"}
        ),
        "runner": fabric.append(SESSION, "fact.asserted", {"key": "ci runner", "fact": "CI runs on m5 instances"}),
        "launch": fabric.append(SESSION, "fact.asserted", {"key": "launch date", "fact": "Launch is on March 3"}),
        "note": fabric.append(SESSION, "note.recorded", {"text": "Alice moved teams; nobody confirmed the budget"}),
        "other_launch": fabric.append(OTHER, "fact.asserted", {"key": "launch date", "fact": "Launch is on April 9"}),
        "other_runner": fabric.append(OTHER, "fact.asserted", {"key": "ci runner", "fact": "CI runs on m5 instances"}),
    }
    return {name: event.citation for name, event in events.items()}


def _answerability(fabric: MemoryFabric, query: str, scope: list[str] | None = None) -> tuple[str, Any]:
    packet = fabric.checkout(query, session=SESSION, scope=scope)
    return packet.quality.answerability, packet


def _score_unknown_guardrail(fabric: MemoryFabric, score: LaneScore, cites: dict[str, str]) -> None:
    metric = "unknown_guardrail"
    before, _ = _answerability(fabric, OWNER_QUESTION)
    score.check(metric, before == "answer_from_memory", f"control: memory answers {OWNER_QUESTION!r} ({before})")
    recorded = fabric.record_known_unknown(
        SESSION,
        question=OWNER_QUESTION,
        reason="Alice moved teams and nobody confirmed the new owner",
        source_events=[cites["note"]],
        claim_key="fact:budget owner",
        priority="high",
    )
    after, packet = _answerability(fabric, OWNER_QUESTION)
    score.check(metric, after != "answer_from_memory", f"an open known unknown is not answered from memory ({after})")
    relevant = packet.diagnostics.model_dump().get("metacognition", {}).get("relevant_known_unknowns", [])
    score.check(
        metric,
        [item["citation"] for item in relevant] == [recorded["citation"]],
        "diagnostics.metacognition names the matching known unknown with its citation",
    )
    reworded, _ = _answerability(fabric, "who is the budget owner")
    score.check(metric, reworded != "answer_from_memory", f"the claim's question in other words is held ({reworded})")
    unrelated, _ = _answerability(fabric, "Which instances does CI run on?")
    score.check(metric, unrelated == "answer_from_memory", f"an unrelated question is unaffected ({unrelated})")
    confirmed = fabric.append(
        SESSION, "fact.asserted", {"key": "budget owner", "fact": "Bob owns the marketing budget"}
    )
    fabric.resolve_known_unknown(
        SESSION,
        recorded["unknown_id"],
        resolution="answered",
        rationale="finance confirmed Bob",
        source_events=[confirmed.citation],
    )
    lifted, _ = _answerability(fabric, OWNER_QUESTION)
    score.check(metric, lifted == "answer_from_memory", f"an answered known unknown lifts the guardrail ({lifted})")


def _score_recall_boundary(fabric: MemoryFabric, score: LaneScore) -> None:
    metric = "recall_boundary"
    for query in (OWNER_QUESTION, "nobody confirmed the new owner", "launch date two sources disagree"):
        packet = fabric.checkout(query, session=SESSION)
        kinds = {item.event_type for item in packet.evidence} | {fact.entity_type for fact in packet.current_facts}
        leaked = sorted(k for k in kinds if k.startswith("metacognition.") or k in _METACOGNITION_TYPES)
        score.check(metric, not leaked, f"{query!r}: no metacognitive record recalled as memory ({leaked})")


_METACOGNITION_TYPES = frozenset({"known_unknown", "confidence_assessment", "reverification_request"})


def _score_conflicts(fabric: MemoryFabric, score: LaneScore, cites: dict[str, str]) -> None:
    metric = "conflict_clusters"
    needs = fabric.reverification_needs(SESSION, scope=[OTHER])
    clusters = {c["claim_key"]: c for c in needs["conflict_clusters"]}
    score.check(metric, set(clusters) == {"fact:launch date"}, f"one cluster, for the launch date ({sorted(clusters)})")
    members = {m["citation"] for m in clusters.get("fact:launch date", {}).get("members", [])}
    score.check(metric, members == {cites["launch"], cites["other_launch"]}, "the cluster cites both current claims")
    score.check(
        metric,
        all(c["status"] == "unresolved" and c["authority_status"] == "non_authoritative" for c in clusters.values()),
        "clusters are unresolved and non-authoritative",
    )
    answer, packet = _answerability(fabric, "When is the launch date?", scope=[OTHER])
    score.check(metric, answer != "answer_from_memory", f"checkout does not answer across a contradiction ({answer})")
    block = packet.diagnostics.model_dump().get("metacognition", {})
    score.check(metric, block.get("conflict_cluster_count") == 1, "checkout reports the cluster")
    unrelated, _ = _answerability(fabric, "Which instances does CI run on?", scope=[OTHER])
    score.check(metric, unrelated == "answer_from_memory", f"an unrelated question is unaffected ({unrelated})")
    fabric.append(OTHER, "fact.asserted", {"key": "launch date", "fact": "Launch is on March 3"})
    after = fabric.reverification_needs(SESSION, scope=[OTHER])
    score.check(metric, after["conflict_cluster_count"] == 0, "superseding one side to agree dissolves the cluster")


def _score_trajectory(fabric: MemoryFabric, score: LaneScore, cites: dict[str, str]) -> None:
    metric = "trajectory"
    claim_before = fabric.claim_confidence(SESSION, "fact:ci runner")
    first = fabric.claim_confidence(
        SESSION,
        "fact:ci runner",
        confidence=0.4,
        rationale="one old source",
        source_events=[cites["runner"]],
    )
    second = fabric.claim_confidence(
        SESSION,
        "fact:ci runner",
        confidence=0.9,
        rationale="a second session agrees",
        source_events=[cites["runner"], cites["other_runner"]],
    )
    points = fabric.confidence_trajectory(SESSION, "fact:ci runner")
    score.check(metric, [p["confidence"] for p in points["points"]] == [0.4, 0.9], "both points, in log order")
    score.check(
        metric,
        [p["citation"] for p in points["points"]] == [first["recorded"], second["recorded"]],
        "each point cites its own event",
    )
    score.check(metric, points["trend"] == "rising", f"the trend is rising ({points['trend']})")
    score.check(
        metric,
        second["current_facts"] == claim_before["current_facts"],
        "assessments never change the claim's current facts",
    )
    earlier = fabric.confidence_trajectory(SESSION, "fact:ci runner", as_of=points["points"][0]["assessed_at"])
    score.check(metric, earlier["point_count"] == 1, "as_of reads the trajectory as it was")


def _score_reverification(fabric: MemoryFabric, score: LaneScore, cites: dict[str, str]) -> None:
    metric = "reverification"
    fabric.claim_confidence(
        SESSION, "fact:launch date", confidence=0.3, rationale="unconfirmed", source_events=[cites["launch"]]
    )
    request = fabric.request_reverification(
        SESSION, "fact:launch date", reason="press release pending", source_events=[cites["launch"]], priority="high"
    )
    needs = fabric.reverification_needs(SESSION)
    score.check(
        metric,
        [r["request_id"] for r in needs["requests"]] == [request["request_id"]],
        "the explicit request is open",
    )
    derived = {n["claim_key"]: n["reasons"] for n in needs["derived"]}
    score.check(metric, derived.get("fact:launch date") == ["weak"], f"a weakly assessed claim is listed ({derived})")
    score.check(metric, "fact:ci runner" not in derived, "a strongly assessed claim is not listed")
    fabric.resolve_reverification(
        SESSION, request["request_id"], resolution="verified", rationale="release out", source_events=[cites["launch"]]
    )
    closed = fabric.reverification_needs(SESSION)
    score.check(metric, closed["open_request_count"] == 0, "a resolution closes the request")
    history = fabric.reverification_needs(SESSION, include_resolved=True)["requests"]
    score.check(metric, [r["status"] for r in history] == ["resolved"], "the resolved request stays auditable")


def _score_contract_gate(fabric: MemoryFabric, score: LaneScore, cites: dict[str, str]) -> None:
    metric = "contract_gate"
    note = fabric.resolve(cites["note"])
    source = {"seq": note.seq, "hash": note.hash}

    def refused(field: str, description: str, action: Callable[[], Any]) -> None:
        _refused(fabric, score, metric, field, description, action)

    refused(
        "source_events",
        "an uncited known unknown",
        lambda: fabric.record_known_unknown(SESSION, question="q?", reason="r", source_events=[]),
    )
    refused(
        "source_events[0]",
        "a known unknown citing a missing event",
        lambda: fabric.record_known_unknown(
            SESSION, question="q?", reason="r", source_events=[cites["note"].replace("/4#", "/99#")]
        ),
    )
    forged = {
        "unknown_id": "unk_" + "0" * 24,
        "question": "q?",
        "reason": "r",
        "source_events": [source],
        "status": "open",
        "authority_status": "non_authoritative",
    }
    refused(
        "payload",
        "a known unknown with a forged id",
        lambda: fabric.append(SESSION, "metacognition.known_unknown.recorded", forged),
    )
    authoritative = {
        "claim_key": "fact:launch date",
        "confidence": 1.0,
        "rationale": "certain",
        "source_events": [source],
        "authority_status": "authoritative",
    }
    refused(
        "payload.authority_status",
        "an authoritative assessment",
        lambda: fabric.append(SESSION, "metacognition.confidence.assessed", authoritative),
    )
    unanswered = {
        "unknown_id": "unk_" + "1" * 24,
        "resolution": "answered",
        "rationale": "trust me",
        "authority_status": "non_authoritative",
    }
    refused(
        "payload",
        "an answered resolution without citations",
        lambda: fabric.append(SESSION, "metacognition.known_unknown.resolved", unanswered),
    )
    resolved = fabric.known_unknowns(SESSION, status="resolved")["items"][0]["unknown_id"]
    refused(
        "unknown_id",
        "resolving a resolved known unknown again",
        lambda: fabric.resolve_known_unknown(SESSION, resolved, resolution="dismissed", rationale="again"),
    )
    refused(
        "confidence",
        "an assessment out of [0, 1]",
        lambda: fabric.claim_confidence(
            SESSION, "fact:x", confidence=1.5, rationale="r", source_events=[cites["note"]]
        ),
    )


def _score_belief_review_gate(fabric: MemoryFabric, score: LaneScore, cites: dict[str, str]) -> None:
    metric = "belief_review_gate"
    question = "Which instances does CI run on?"

    def facts() -> list[str]:
        return sorted(
            f"{fact.name}: {fact.summary}" for fact in fabric.checkout(question, session=SESSION).current_facts
        )

    before = facts()
    proposal = fabric.propose_belief_update(
        SESSION,
        claim="CI runs on c7 instances",
        rationale="the infra note mentions a migration",
        confidence=0.6,
        citations=[cites["note"]],
        phase="reflection",
        claim_key="fact:ci runner",
    )
    score.check(
        metric,
        (proposal["review_status"], proposal["authority_status"]) == ("pending", "non_authoritative"),
        "a proposal is pending and non-authoritative",
    )
    packet = fabric.checkout("c7 instances migration", session=SESSION)
    recalled = [item.citation for item in packet.evidence if item.citation == proposal["citation"]]
    score.check(metric, not recalled, "the proposal text is never recalled as evidence")
    score.check(metric, facts() == before, "a proposal changes no current fact")
    block = packet.diagnostics.model_dump().get("belief_update_proposals", {})
    score.check(metric, (block.get("proposal_count"), block.get("pending_count")) == (1, 1), "checkout counts it")
    reviewed = fabric.review_belief_update(SESSION, proposal["proposal_id"], status="accepted", rationale="confirmed")
    score.check(metric, reviewed["promoted"] is False, "an accepted review reports no promotion")
    score.check(metric, facts() == before, "an accepted proposal still changes no current fact")

    def refused(field: str, description: str, action: Callable[[], Any]) -> None:
        _refused(fabric, score, metric, field, description, action)

    refused(
        "citations",
        "an uncited proposal",
        lambda: fabric.propose_belief_update(SESSION, claim="x", rationale="y", confidence=0.5, citations=[]),
    )
    refused(
        "status",
        "a review that tries to promote",
        lambda: fabric.review_belief_update(SESSION, proposal["proposal_id"], status="promoted", rationale="r"),
    )
    refused(
        "proposal_id",
        "accepting twice",
        lambda: fabric.review_belief_update(SESSION, proposal["proposal_id"], status="accepted", rationale="r"),
    )
    refused(
        "proposal_id",
        "reviewing an unknown proposal",
        lambda: fabric.review_belief_update(SESSION, "bel_" + "0" * 24, status="rejected", rationale="r"),
    )


def _refused(
    fabric: MemoryFabric, score: LaneScore, metric: str, field: str, description: str, action: Callable[[], Any]
) -> None:
    """The action must fail with a structured error naming ``field`` and leave the session's log untouched."""
    head = fabric.log.head(SESSION)
    try:
        action()
    except ZaxyError as exc:
        ok = (exc.field or "").startswith(field) and fabric.log.head(SESSION) == head
        score.check(metric, ok, f"{description}: refused naming {field} ({exc.field}), nothing written")
    else:
        score.check(metric, False, f"{description}: accepted")
