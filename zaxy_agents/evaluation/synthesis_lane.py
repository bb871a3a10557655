"""Internal synthesis guardrail lane: composed answers are computed from cited rows, checked before they are
recorded, and never become facts or recalled memory.

Deterministic fixture sessions are written through the real engine, checkouts are taken and their synthesis
bundles recorded through the fabric. Metrics (each the pass rate of its checks; the lane passes at 1.0 on all):

- ``composition``: the top answer candidate of each fixture question (sum, count, "how many <unit>", average,
  latest) has the expected value; restated values, other units and off-topic numbers are excluded with their
  reason; a question that asks for no number gets no candidate;
- ``citation_integrity``: every included row cites an event that resolves and states the row's value; a checkout
  whose candidate, row value or row citation was edited is refused and nothing is written;
- ``authority_boundary``: recording artifacts, outcomes and row feedback changes no current fact, none of it is
  recalled by a later checkout, and that checkout composes the same candidates;
- ``ledger``: the artifact is recorded once per bundle, each outcome and row feedback is the seed's event type,
  and reading the artifact back returns its candidates, outcomes and feedback.

This is an internal regression lane, not an external benchmark.
"""

from __future__ import annotations

import copy
import tempfile
import time
from pathlib import Path
from typing import Any

from zaxy_agents.errors import ZaxyError
from zaxy_agents.fabric import MemoryFabric

from .lane_scoring import LaneScore

SESSION = "syn-trip"
NOTES = (
    "I spent $450 on the flight to Lisbon.",
    "The hotel in Lisbon cost $300 for the whole trip.",
    "I spent $450 on the flight to Lisbon, as I told you.",
    "Lisbon museum tickets cost $40; we walked 12 km that day.",
    "Piano practice on Monday: 2 hours.",
    "Piano practice on Thursday: 3 hours.",
    "The office printer was replaced in 2024 with model PX-200.",
)
QUESTIONS = (
    ("How much did I spend on the Lisbon trip in total?", "sum", 790),
    ("How many hours did I practise piano?", "sum", 5),
    ("What was the average piano practice in hours?", "average", 2.5),
)
PLAIN = "Who replaced the office printer?"


def run_synthesis_lane(eventloom_path: str | Path | None = None) -> dict[str, Any]:
    """Build the fixtures in a fresh Eventloom and score every guardrail."""
    score = LaneScore("synthesis")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="zaxy-synthesis-lane-") as scratch:
        root = Path(eventloom_path) if eventloom_path else Path(scratch) / "loom"
        with MemoryFabric.from_path(root) as fabric:
            for text in NOTES:
                fabric.append(SESSION, "note.recorded", {"text": text})
            fabric.append(SESSION, "fact.asserted", {"key": "trip city", "fact": "The trip was to Lisbon"})
            checkouts = _score_composition(fabric, score)
            _score_citation_integrity(fabric, score, checkouts[0])
            _score_authority_and_ledger(fabric, score, checkouts[0])
    return score.report(fixtures=len(NOTES), took_s=round(time.perf_counter() - started, 3))


def _checkout(fabric: MemoryFabric, query: str) -> dict[str, Any]:
    return fabric.checkout(query, session=SESSION).model_dump(mode="json")


def _score_composition(fabric: MemoryFabric, score: LaneScore) -> list[dict[str, Any]]:
    checkouts = []
    for query, kind, expected in QUESTIONS:
        checkout = _checkout(fabric, query)
        checkouts.append(checkout)
        candidates = checkout["diagnostics"]["synthesis"]["answer_candidates"]
        top = candidates[0] if candidates else {}
        score.check(
            "composition",
            (top.get("candidate_type"), top.get("answer_value")) == (kind, expected),
            f"{query!r}: top candidate {kind} {expected} (got {top.get('candidate_type')} {top.get('answer_value')})",
        )
    rows = checkouts[0]["diagnostics"]["synthesis"]["ledger_rows"]
    reasons = {row["reason"].split(":")[0] for row in rows if row["status"] == "excluded"}
    score.check("composition", "duplicate" in reasons, "the restated flight is excluded as a duplicate")
    score.check("composition", "off_topic" in reasons, "the walked kilometres are excluded as off topic")
    years = [row for row in rows if row["raw"] in ("2024", "200")]
    score.check("composition", not years, "a year and a model number are not values")
    plain = _checkout(fabric, PLAIN)["diagnostics"]["synthesis"]
    score.check("composition", plain["answer_candidates"] == [], "a question asking for no number has no candidate")
    return checkouts


def _refused(fabric: MemoryFabric, checkout: dict[str, Any], field: str) -> bool:
    head = fabric.log.head(SESSION)
    try:
        fabric.record_synthesis_artifact(checkout)
    except ZaxyError as exc:
        return exc.field == field and fabric.log.head(SESSION) == head
    return False


def _score_citation_integrity(fabric: MemoryFabric, score: LaneScore, checkout: dict[str, Any]) -> None:
    from zaxy_agents.synthesis.ledger import candidates_of

    synthesis = checkout["diagnostics"]["synthesis"]
    for row in synthesis["ledger_rows"]:
        if row["status"] != "included":
            continue
        try:
            event = fabric.log.resolve(row["citation"])
            states = row["raw"].replace("$", "") in str(event.payload)
        except ZaxyError:
            states = False
        score.check("citation_integrity", states, f"row {row['raw']} cites an event that states it")
    edited = copy.deepcopy(checkout)
    edited["diagnostics"]["synthesis"]["answer_candidates"][0]["answer_value"] = 9999
    score.check(
        "citation_integrity",
        _refused(fabric, edited, "checkout.diagnostics.synthesis.answer_candidates"),
        "an edited candidate is refused, nothing written",
    )
    for change, field in (({"value": 45, "raw": "$45"}, "value"), ({"citation": None}, "citation")):
        forged = copy.deepcopy(checkout)
        block = forged["diagnostics"]["synthesis"]
        row = block["ledger_rows"][0]
        if change.get("citation", 1) is None:
            change = {"citation": row["citation"][:-12] + "0" * 12}
        row.update(change)
        block["answer_candidates"] = candidates_of(block["ledger_rows"], {"question_type": block["question_type"]})
        score.check(
            "citation_integrity",
            _refused(fabric, forged, f"checkout.diagnostics.synthesis.ledger_rows[0].{field}"),
            f"a row with an edited {field} (candidates recomputed to match) is refused, nothing written",
        )


def _score_authority_and_ledger(fabric: MemoryFabric, score: LaneScore, checkout: dict[str, Any]) -> None:
    query = checkout["query"]
    facts = [fact["summary"] for fact in checkout["current_facts"]]
    synthesis = checkout["diagnostics"]["synthesis"]
    top = synthesis["answer_candidates"][0]
    first = fabric.record_synthesis_artifact(checkout, top["candidate_id"], "used")
    again = fabric.record_synthesis_artifact(checkout)
    score.check("ledger", first["created"] and not again["created"], "the artifact is recorded once per bundle")
    score.check("ledger", again["artifact_id"] == first["artifact_id"], "the same bundle has the same artifact id")
    expected = {
        "used": "memory.synthesis.used",
        "rejected": "memory.synthesis.rejected",
        "excluded": "memory.evidence.excluded",
    }
    for outcome, event_type in expected.items():
        recorded = fabric.record_synthesis_artifact(checkout, top, outcome)
        score.check("ledger", recorded["outcome"]["event_type"] == event_type, f"outcome {outcome} -> {event_type}")
    corrected = fabric.record_synthesis_artifact(checkout, 1, "corrected", corrected_value="$750")
    score.check("ledger", corrected["outcome"]["event_type"] == "memory.synthesis.corrected", "a correction")
    support = next(row for row in synthesis["ledger_rows"] if row["row_id"] == top["supporting_source_ids"][0])
    used = fabric.record_synthesis_evidence(checkout, support, "used", candidate=top)
    excluded_row = next(row for row in synthesis["ledger_rows"] if row["status"] == "excluded")
    left_out = fabric.record_synthesis_evidence(checkout, excluded_row["row_id"], "excluded", reason="restated")
    score.check("ledger", used["event_type"] == "memory.evidence.reinforced", "a used row is reinforced")
    score.check("ledger", left_out["event_type"] == "memory.evidence.excluded", "an excluded row is recorded")
    back = fabric.synthesis_artifact(SESSION, first["artifact_id"])
    score.check(
        "ledger",
        back["answer_candidates"] == synthesis["answer_candidates"] and len(back["outcomes"]) == 5,
        "the artifact reads back with its candidates and five outcomes",
    )
    score.check("ledger", len(back["evidence"]) == 2, "the artifact reads back with its two row feedbacks")
    after = _checkout(fabric, query)
    score.check(
        "authority_boundary",
        [fact["summary"] for fact in after["current_facts"]] == facts,
        "current facts are unchanged by artifacts and feedback",
    )
    recalled = [item for item in after["evidence"] if item["event_type"].startswith(("memory.synthesis", "memory.ev"))]
    score.check("authority_boundary", not recalled, "no synthesis event is recalled as evidence")
    score.check(
        "authority_boundary",
        after["diagnostics"]["synthesis"]["answer_candidates"] == synthesis["answer_candidates"],
        "a later checkout composes the same candidates",
    )
