"""Synthesis artifacts and the evidence ledger (seed 003) on a real fabric: the checkout's bundle, recording it
(once), candidate outcomes, row feedback, the checks before the append, projection, and that none of it becomes
recalled memory or changes a fact."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from zaxy_agents.errors import ConflictError, InvalidRequestError, NotFoundError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.synthesis.ledger import Source, bundle, candidates_of

SESSION = "trip"
QUESTION = "How much did I spend on the Lisbon trip in total?"


def _source(seq: int, text: str, group: str | None = None) -> Source:
    citation = f"eventloom://s/events/{seq}#{'a' * 12}"
    return Source(citation, "s", seq, "transcript.turn", text, f"f{seq}", group or f"event:s:{seq}", f"2026-01-0{seq}")


def test_ledger_rules() -> None:
    sources = [
        _source(1, "I spent $450 on the flight to Lisbon on 2026-05-01."),
        _source(2, "The Lisbon hotel cost $300; I walked 12 km."),
        _source(3, "I spent $450 on the flight to Lisbon, as I said."),
        _source(4, "Lisbon ticket PROJ-12 moved to v1.2.3 at 10:30"),
    ]
    block = bundle(QUESTION, sources)
    rows = {(row["raw"], row["citation"][-16:-13]): row for row in block["ledger_rows"]}
    assert [row["raw"] for row in block["ledger_rows"]] == ["$450", "$300", "12 km", "$450"]  # no date/id/version
    assert rows[("12 km", "s/2")]["reason"].startswith("off_topic")
    assert rows[("$450", "s/3")]["reason"].startswith("duplicate")
    top, *others = block["answer_candidates"]
    assert (top["candidate_type"], top["answer_value"], top["answer_text"]) == ("sum", 750, "$750")
    assert [c["candidate_type"] for c in others] == ["count", "latest", "average"]
    assert others[1]["answer_value"] == 300  # latest by valid_from
    assert top["confidence"] > others[0]["confidence"]
    assert len(top["supporting_source_ids"]) == 2 and len(top["excluded_source_ids"]) == 2
    hours = bundle(
        "How many hours did I practise piano?", [_source(1, "Piano practice: 2 hours"), _source(2, "piano 3 hours")]
    )
    assert (
        hours["answer_candidates"][0]["candidate_type"] == "sum" and hours["answer_candidates"][0]["answer_value"] == 5
    )
    mixed = bundle(
        "What was the total piano cost?", [_source(1, "piano lessons cost $40"), _source(2, "piano: 3 hours")]
    )
    assert [r["status"] for r in mixed["ledger_rows"]] == ["included", "excluded"]
    assert mixed["ledger_rows"][1]["reason"].startswith("unit_mismatch")
    assert bundle("what colour is the door?", sources)["answer_candidates"] == []


def _trip(memory: MemoryFabric) -> dict[str, Any]:
    memory.append(SESSION, "transcript.turn", {"role": "user", "text": "I spent $450 on the flight to Lisbon."})
    memory.append(SESSION, "transcript.turn", {"role": "user", "text": "The hotel in Lisbon cost $300 for the trip."})
    memory.append(SESSION, "fact.asserted", {"fact": "Lisbon museum tickets cost $40", "key": "museum"})
    return memory.checkout(QUESTION, session=SESSION).model_dump(mode="json")


def test_record_artifact_outcome_and_evidence(memory: MemoryFabric) -> None:
    checkout = _trip(memory)
    synthesis = checkout["diagnostics"]["synthesis"]
    top = synthesis["answer_candidates"][0]
    assert (top["candidate_type"], top["answer_text"]) == ("sum", "$790")
    assert "memory_synthesis_artifact" in checkout["prompt"]  # the guidance line
    recorded = memory.record_synthesis_artifact(checkout, top["candidate_id"], "helpful", reason="answered")
    assert recorded["created"] and recorded["artifact_id"].startswith("syn_")
    assert recorded["outcome"]["event_type"] == "memory.synthesis.used"
    assert recorded["outcome"]["candidate"] == top
    assert memory.record_synthesis_artifact(checkout)["created"] is False  # once per bundle
    corrected = memory.record_synthesis_artifact(checkout, 2, "corrected", corrected_value="3 purchases")
    assert corrected["outcome"]["event_type"] == "memory.synthesis.corrected"
    excluded = memory.record_synthesis_artifact(checkout, {"rank": 4, "candidate_type": "average"}, "excluded")
    assert excluded["outcome"]["event_type"] == "memory.evidence.excluded"
    museum = next(row for row in synthesis["ledger_rows"] if row["raw"] == "$40")
    used = memory.record_synthesis_evidence(checkout, museum, "used", candidate=top, reason="part of the total")
    assert used["event_type"] == "memory.evidence.reinforced" and used["artifact_created"] is False
    assert (used["fact_id"], used["source_group"]) == (museum["fact_id"], museum["source_group"])
    stored = memory.log.resolve(used["citation"]).payload
    assert stored["row"] == museum and stored["candidate"] == top and stored["reason"] == "part of the total"
    assert stored["quality"]["answerability"] == checkout["quality"]["answerability"]
    assert stored["support_source_ids"] == top["supporting_source_ids"]
    artifact = memory.synthesis_artifact(SESSION, recorded["artifact_id"])
    assert artifact["citation"] == recorded["citation"] and artifact["answer_candidates"][0] == top
    assert [item["outcome"] for item in artifact["outcomes"]] == ["used", "corrected", "excluded"]
    assert artifact["outcomes"][1]["corrected_value"] == "3 purchases"
    assert [item["feedback"] for item in artifact["evidence"]] == ["used"]
    # projection: artifact, candidates, rows and source groups, linked
    catalog = memory.projector.catalog
    for entity_type, count in (("synthesis_artifact", 1), ("answer_candidate", 4), ("ledger_row", 3)):
        assert len(catalog.type_keys(SESSION, entity_type)) == count
    assert len(catalog.type_keys(SESSION, "source_group")) == 3
    # the reinforced row is a graph fact: it was reinforced (salience), and no fact changed
    again = memory.checkout(QUESTION, session=SESSION)
    museum_fact = next(fact for fact in again.current_facts if "museum" in fact.summary)
    assert museum_fact.salience.get("reinforcement", 1.0) > 1.0
    assert again.diagnostics.model_dump()["synthesis"]["answer_candidates"][0]["answer_text"] == "$790"
    assert not [item for item in again.evidence if item.event_type.startswith("memory.")]  # never recalled


def test_checks_before_the_append(memory: MemoryFabric) -> None:
    checkout = _trip(memory)
    before = memory.log.head(SESSION).seq
    synthesis = checkout["diagnostics"]["synthesis"]

    def refused(error: type[Exception], field: str, changed: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        with pytest.raises(error) as caught:
            memory.record_synthesis_artifact(changed, *args, **kwargs)
        assert caught.value.field == field, caught.value
        assert memory.log.head(SESSION).seq == before  # nothing written

    edited = copy.deepcopy(checkout)
    edited["diagnostics"]["synthesis"]["answer_candidates"][0]["answer_value"] = 10_000
    refused(ConflictError, "checkout.diagnostics.synthesis.answer_candidates", edited)

    def rebuilt(**row: Any) -> dict[str, Any]:
        """The checkout with its first row changed and candidates recomputed to agree with the rows."""
        changed = copy.deepcopy(checkout)
        block = changed["diagnostics"]["synthesis"]
        block["ledger_rows"][0].update(row)
        block["answer_candidates"] = candidates_of(block["ledger_rows"], {"question_type": "sum"})
        return changed

    refused(ConflictError, "checkout.diagnostics.synthesis.ledger_rows[0].value", rebuilt(value=45, raw="$45"))
    wrong_hash = synthesis["ledger_rows"][0]["citation"][:-12] + "0" * 12
    refused(ConflictError, "checkout.diagnostics.synthesis.ledger_rows[0].citation", rebuilt(citation=wrong_hash))
    refused(InvalidRequestError, "outcome", checkout, synthesis["answer_candidates"][0])
    refused(InvalidRequestError, "candidate", checkout, "ans_0000000000000000", "used")
    refused(InvalidRequestError, "corrected_value", checkout, 1, "corrected")
    different = {**synthesis["answer_candidates"][0], "answer_value": 1}
    refused(ConflictError, "candidate.answer_value", checkout, different, "used")
    plain = memory.checkout("who booked the hotel?", session=SESSION).model_dump(mode="json")
    refused(InvalidRequestError, "checkout.diagnostics.synthesis.answer_candidates", plain)
    with pytest.raises(InvalidRequestError):
        memory.append(SESSION, "memory.synthesis.used", {"artifact_id": "syn_x", "outcome": "used"})
    with pytest.raises(ConflictError) as caught:  # a row the candidate does not rest on cannot be "used" for it
        latest = synthesis["answer_candidates"][2]
        off = next(row for row in synthesis["ledger_rows"] if row["row_id"] not in latest["supporting_source_ids"])
        memory.record_synthesis_evidence(checkout, off["row_id"], "used", candidate=latest["candidate_id"])
    assert caught.value.field == "row"
    with pytest.raises(NotFoundError):
        memory.synthesis_artifact(SESSION, "syn_" + "0" * 24)
    assert memory.log.head(SESSION).seq == before
    json.dumps(checkout)  # the checkout is plain JSON, as a client hands it back
