"""Memory Checkout on a real Kuzu-backed fabric: current facts only, citations, answerability, guidance."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import REPO_ROOT
from zaxy_agents.checkout.models import CheckoutPacket
from zaxy_agents.errors import InvalidRequestError, NotFoundError
from zaxy_agents.fabric import MemoryFabric


def test_superseded_facts_are_excluded_everywhere(project: MemoryFabric) -> None:
    packet = project.checkout("what is the billing db host?", session="proj")
    everything = json.dumps([f.model_dump() for f in packet.current_facts] + [e.model_dump() for e in packet.evidence])
    assert "db-new.internal" in everything and "db-old.internal" not in everything
    assert "db-old.internal" not in packet.prompt
    assert packet.diagnostics.superseded_contexts_excluded >= 1
    assert packet.retention.superseded_excluded >= 1
    assert packet.quality.answerability == "answer_from_memory"


def test_every_citation_resolves_and_is_parsed(project: MemoryFabric) -> None:
    packet = project.checkout("pooling decision for billing", session="proj")
    assert packet.provenance and all(item.resolvable for item in packet.provenance)
    for item in packet.provenance:
        event = project.resolve(item.citation)
        assert (event.session, event.seq, event.hash[:12]) == (item.session, item.seq, item.hash_prefix)
    assert packet.diagnostics.citation_count == packet.diagnostics.current_citation_count == len(packet.provenance)
    for fact in packet.current_facts:
        assert project.resolve(fact.citation)


def test_working_set_holds_live_state_only(project: MemoryFabric) -> None:
    working = project.checkout("status", session="proj").working_set
    assert [item.text for item in working.tasks] == ["Migrate billing to Postgres [open]"]  # T-8 is done
    assert "pgbouncer" in working.decisions[0].text
    assert "alembic upgrade head" in working.blockers[0].text
    assert working.artifacts[0].text.startswith("billing/db.py")
    assert working.goals and "Postgres" in working.goals[0].text


def test_answerability_ask_user_when_memory_is_empty(memory: MemoryFabric) -> None:
    packet = memory.checkout("what is the deploy key rotation policy?", session="empty")
    assert packet.quality.answerability == "ask_user"
    assert packet.quality.required_action.tool == "ask_user"
    assert packet.evidence == [] and packet.current_facts == []


def test_answerability_refresh_when_only_superseded_memory_matches(memory: MemoryFabric) -> None:
    memory.append("s", "fact.asserted", {"subject": "vpn", "predicate": "gateway", "object": "gw1.example.com"})
    memory.append("s", "memory.invalidated", {"entity": "vpn gateway", "entity_type": "fact", "reason": "retired"})
    packet = memory.checkout("vpn gateway gw1.example.com", session="s")
    assert packet.quality.answerability == "refresh_recommended"
    assert "superseded-only" in packet.quality.reasons
    assert packet.retention.invalidated_excluded == 1
    assert packet.quality.required_action.tool == "memory_query"


def test_answerability_refresh_when_coverage_is_partial(project: MemoryFabric) -> None:
    packet = project.checkout("kubernetes ingress certificate renewal for billing", session="proj")
    assert packet.quality.answerability in {"refresh_recommended", "ask_user"}
    assert packet.quality.query_coverage < 0.6
    if packet.quality.answerability == "refresh_recommended":  # seed 003: a broader checkout of the current state
        action = packet.quality.required_action
        assert action.tool == "memory_checkout"
        assert action.query == "current decisions, blockers, and next actions for: " + packet.query


def test_warnings_block_answer_from_memory(project: MemoryFabric, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("lane down")

    monkeypatch.setattr(project.retriever.keyword, "search", broken)
    packet = project.checkout("what is the billing db host?", session="proj")
    assert packet.warnings and packet.quality.answerability == "refresh_recommended"
    assert packet.diagnostics.warning_count == len(packet.warnings)
    assert packet.quality.required_action.tool == "memory_checkout"  # the same checkout, once the lane is back
    assert packet.quality.required_action.query == packet.query


def test_composed_questions_get_a_slot_plan(project: MemoryFabric) -> None:
    packet = project.checkout(
        'which file changed for T-7 and how many retries does "retry_policy" allow?', session="proj"
    )
    slots = {slot.slot: slot for slot in packet.quality.slot_plan}
    assert {"exact", "source", "numeric", "semantic"} <= set(slots)
    assert slots["source"].satisfied  # billing/db.py edit
    assert "exact" in packet.quality.missing_slots  # nothing mentions retry_policy
    assert "retry_policy" in packet.quality.suggested_queries
    assert packet.quality.answerability == "refresh_recommended"
    # seed 003: the required action carries the missing slots and suggested queries (a retried checkout), and
    # the slot plan is in the diagnostics too
    action = packet.quality.required_action
    assert action.tool == "memory_checkout" and action.query == packet.quality.suggested_queries[0]
    assert action.missing_slots == packet.quality.missing_slots
    assert action.suggested_queries == packet.quality.suggested_queries
    assert packet.diagnostics.slot_plan == [slot.model_dump() for slot in packet.quality.slot_plan]


def test_guidance_recommends_a_follow_up_checkout_and_retention_names_the_purpose(project: MemoryFabric) -> None:
    packet = project.checkout("billing db host", session="proj", purpose="security")
    follow_up = packet.guidance.recommended_checkout  # seed 003: "a recommended follow-up memory_checkout call"
    assert follow_up["tool"] == "memory_checkout"
    assert follow_up["arguments"] == {"query": "billing db host", "session_id": "proj"}
    assert "compaction" in follow_up["reason"]
    policy = packet.retention.purpose_policy  # seed 003: excluded rows summarised in retention.purpose_policy too
    assert policy["name"] == "security" and policy["suppressed"] == packet.retention.suppressed_by_purpose
    assert policy["suppressed"] == packet.diagnostics.purpose_policy["suppressed"]
    bootstrap = project.checkout("", session="proj").guidance.recommended_checkout
    assert bootstrap["arguments"]["query"] == "current task, project direction, and recent decisions"


def test_guidance_carries_feedback_payloads(project: MemoryFabric) -> None:
    packet = project.checkout("billing db host", session="proj")
    assert packet.guidance.feedback.tool == "memory_feedback" and packet.diagnostics.feedback_recommended
    payload = packet.guidance.feedback.payloads[0]  # memory_feedback arguments, in the seed's names
    assert payload["feedback"] == "used" and payload["actor"] == "assistant"
    fact = next(fact for fact in packet.current_facts if fact.citation == payload["citation"])
    assert (fact.entity_name, fact.content, fact.source_lane) == (payload["entity_name"], fact.summary, "graph")
    event = project.feedback(
        payload["session_id"],
        payload["entity_name"],
        payload["entity_type"],
        payload["feedback"],
        citation=payload["citation"],
        actor=payload["actor"],
    )
    assert event.type == "memory.reinforced" and event.payload["entity_name"] == payload["entity_name"]


def test_feedback_reinforces_salience_and_negative_is_audit_only(project: MemoryFabric) -> None:
    def salience() -> float:
        packet = project.checkout("pooling", session="proj")
        return next(f.salience for f in packet.current_facts if f.name == "pooling")["reinforcement"]

    before = salience()
    project.feedback("proj", "pooling", "decision", "helpful", weight=2.0)
    after = salience()
    assert after > before
    event = project.feedback("proj", "pooling", "decision", "irrelevant")
    assert event.type == "memory.feedback" and salience() == after
    with pytest.raises(InvalidRequestError):
        project.feedback("proj", "pooling", "decision", "love-it")
    with pytest.raises(NotFoundError):
        project.feedback("proj", "no such thing", "decision", "used")


def test_invalidate_removes_a_fact_from_current_memory(project: MemoryFabric) -> None:
    project.invalidate("proj", "pooling", "decision", reason="we switched to RDS proxy")
    packet = project.checkout("connection pooling decision", session="proj")
    assert all(fact.name != "pooling" for fact in packet.current_facts)
    with pytest.raises(InvalidRequestError):
        project.invalidate("proj", "billing db host", "fact", reason=" ")


def test_checkout_as_of_a_ref(project: MemoryFabric) -> None:
    target = project.log.get("proj", 5)  # the db-old fact
    project.set_ref("proj", "refs/tags/before-move", target.seq)
    packet = project.checkout("billing db host", session="proj", ref="refs/tags/before-move")
    texts = " ".join(f.summary for f in packet.current_facts)
    assert "db-old.internal" in texts and "db-new.internal" not in texts
    assert packet.ref.startswith("refs/tags/before-move@eventloom://proj/events/5#")
    by_seq = project.checkout("billing db host", session="proj", ref=5)
    assert by_seq.as_of == target.timestamp


def test_purpose_suppression_is_reported(project: MemoryFabric) -> None:
    packet = project.checkout("alembic upgrade failed connection", session="proj", purpose="research")
    policy = packet.diagnostics.purpose_policy
    assert policy["name"] == "research" and policy["suppressed"] >= 1
    assert packet.retention.suppressed_by_purpose == policy["suppressed"]
    assert all(item.event_type != "command.completed" for item in packet.evidence)
    custom = project.checkout(
        "alembic", session="proj", purpose={"profile": "precision", "suppress_entity_types": ["command_run"]}
    )
    assert custom.purpose.name == "custom"
    with pytest.raises(InvalidRequestError) as info:
        project.checkout("x", session="proj", purpose="gardening")
    assert info.value.field == "purpose"


def test_bootstrap_packet(project: MemoryFabric) -> None:
    packet = project.bootstrap("proj")
    assert packet.query == "" and packet.evidence == []
    assert packet.working_set.tasks and packet.quality.answerability == "answer_from_memory"
    assert "# Memory Checkout" in packet.prompt


def test_bad_requests_are_structured(memory: MemoryFabric) -> None:
    with pytest.raises(InvalidRequestError) as info:
        memory.checkout("x", session="../etc")
    assert info.value.field == "session"
    with pytest.raises(InvalidRequestError) as info:
        memory.checkout("x", max_tokens=5)
    assert info.value.field == "max_tokens"
    with pytest.raises(InvalidRequestError) as info:
        memory.checkout("x", k=0)
    assert info.value.field == "k"


def test_documented_fixture_matches_the_model(tmp_path) -> None:
    """docs/examples/checkout-packet.json; regenerate with ZAXY_UPDATE_SNAPSHOTS=1 after a deliberate change."""
    fixture = REPO_ROOT / "docs" / "examples" / "checkout-packet.json"
    if os.environ.get("ZAXY_UPDATE_SNAPSHOTS"):
        with MemoryFabric.from_path(tmp_path / "eventloom") as memory:
            for kind, payload in (
                ("task.created", {"task_id": "Migrate billing to Postgres", "status": "open"}),
                ("decision.recorded", {"decision": "Use pgbouncer for connection pooling", "topic": "pooling"}),
                ("fact.asserted", {"subject": "billing db", "predicate": "host", "object": "db-old.internal"}),
                ("command.completed", {"command": "alembic upgrade head", "exit_code": 1, "output": "refused"}),
                ("fact.asserted", {"subject": "billing db", "predicate": "host", "object": "db-new.internal"}),
            ):
                memory.append("proj", kind, payload)
            live = memory.checkout("what is the billing db host?", session="proj", max_tokens=1200)
        fixture.write_text(live.model_dump_json(indent=2) + "\n")
    packet = CheckoutPacket.model_validate_json(fixture.read_text())
    assert json.loads(fixture.read_text())["current_facts"][0]["entity_name"] == packet.current_facts[0].name
    assert packet.current_facts and packet.provenance and packet.prompt.startswith("# Memory Checkout")


def test_inferred_context_reports_counts_trust_and_low_trust_guidance(memory: MemoryFabric) -> None:
    """Seed 002: inferred context and edge counts, labels, methods, average trust, low-trust guidance."""
    source = {"name": "task-7", "entity_type": "task"}
    decision = {"name": "Use Memory Checkout as the model-facing state contract", "entity_type": "decision"}
    memory.append("s", "task.created", {"task_id": "task-7", "title": "task-7 checkout contract"})
    cited = memory.append("s", "decision.recorded", {"decision": decision["name"], "topic": "checkout"})
    memory.append(  # the seed's example edge, with cited evidence
        "s",
        "inference.edge.generated",
        {
            "source": source,
            "target": decision,
            "relation_type": "likely_informed",
            "confidence": 0.82,
            "inference_method": "operator_review_v1",
            "evidence": {"source_event_seq": cited.seq, "source_event_hash": cited.hash, "reason": "confirmed"},
        },
    )
    memory.append(
        "s",
        "inference.edge.generated",
        {
            "source": source,
            "target": {"name": "rewrite the planner", "entity_type": "decision"},
            "relation_type": "maybe_blocked",
            "confidence": 0.4,
            "inference_method": "unknown",
            "evidence": {"source_event_seq": 99, "reason": "a guess"},  # no hash: uncited
        },
    )
    packet = memory.checkout("task-7 checkout contract", session="s")
    inferred = packet.diagnostics.inferred_context
    assert inferred["edge_count"] == 2 and inferred["context_count"] >= 1
    assert inferred["relation_labels"] == ["likely_informed", "maybe_blocked"]
    assert inferred["methods"] == ["operator_review_v1", "unknown"]
    assert inferred["uncited"] == 1 and inferred["low_trust"] == 1
    assert inferred["average_trust"] == round((0.82 * 1.0 + 0.4 * (0.5 + 0.5 / 3)) / 2, 4)
    assert any("low trust" in line for line in packet.guidance.trust)
