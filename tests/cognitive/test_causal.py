"""Causal memory on a real Kuzu-backed fabric: contract, producer, reverse traversal, as-of, staleness, graph
tables, checkout context, rebuild."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cognitive.conftest import edge_payload
from zaxy_agents.errors import InvalidRequestError, NotFoundError
from zaxy_agents.fabric import MemoryFabric


def _explain(memory: MemoryFabric, session: str, cause: str, effect: str, relation: str, evidence, **extra) -> dict:
    return memory.explain_outcome(
        session,
        cause={"name": cause, "entity_type": "fact"},
        effect={"name": effect, "entity_type": "fact"},
        relation=relation,
        confidence=extra.pop("confidence", 0.8),
        evidence=evidence.citation,
        **extra,
    )


def _chain(memory: MemoryFabric) -> dict:
    """expired token -caused-> failed deploy -blocked-> release; rotation -fixed-> failed deploy."""
    events = {
        name: memory.append("s", "fact.asserted", {"key": name, "fact": text})
        for name, text in (
            ("expired token", "the CI token expired"),
            ("failed deploy", "deploy 41 failed with 401"),
            ("release", "release 1.4 is blocked"),
            ("rotation", "the token was rotated"),
        )
    }
    _explain(memory, "s", "expired token", "failed deploy", "caused", events["failed deploy"])
    _explain(memory, "s", "failed deploy", "release", "blocked", events["release"], confidence=0.6)
    _explain(memory, "s", "rotation", "failed deploy", "fixed", events["rotation"])
    return events


def test_uncited_or_malformed_causal_edges_are_rejected_and_nothing_is_written(memory: MemoryFabric) -> None:
    anchor = memory.append("s", "note.added", {"text": "x"})
    cases = [
        ({}, "payload.evidence"),
        ({"evidence": {"seq": 1, "hash": "abc"}}, "payload.evidence.source_event_hash"),
        ({"evidence": {"source_event_seq": 1, "reason": "no hash"}}, "payload.evidence.source_event_hash"),
        ({"evidence": {"seq": 1, "hash": anchor.hash}, "relation_type": "correlated"}, "payload.relation_type"),
        ({"evidence": {"seq": 1, "hash": anchor.hash}, "graph_relation_type": "causal_fixed"}, "payload"),
        (
            {"evidence": {"seq": 1, "hash": anchor.hash}, "authority_status": "authoritative"},
            "payload.authority_status",
        ),
        ({"evidence": {"seq": 1, "hash": anchor.hash}, "review_status": "accepted"}, "payload.review_status"),
        ({"evidence": {"seq": 1, "hash": anchor.hash}, "confidence": 1.5}, "payload.confidence"),
    ]
    for overrides, field in cases:
        with pytest.raises(InvalidRequestError) as info:
            memory.append("s", "causal.edge.generated", edge_payload(**overrides))
        assert info.value.field == field, overrides
        assert "causal" in info.value.remediation
    with pytest.raises(InvalidRequestError):
        memory.append_many("s", [{"type": "causal.edge.generated", "payload": edge_payload()}])
    assert memory.head("s").seq == 1  # nothing was written


def test_outcome_explained_produces_one_cited_edge_only_with_everything(memory: MemoryFabric) -> None:
    failure = memory.append("s", "command.completed", {"command": "make deploy", "exit_code": 1})
    complete = {
        "cause": {"name": "expired token", "entity_type": "fact"},
        "effect": {"name": "make deploy #1", "entity_type": "command_run"},
        "relation": "caused",
        "confidence": 0.9,
        "evidence": {"seq": failure.seq, "hash": failure.hash},
    }
    incomplete = [
        {k: v for k, v in complete.items() if k != "evidence"},
        {k: v for k, v in complete.items() if k != "confidence"},
        {**complete, "relation": "correlated"},
        {**complete, "confidence": True},
        {**complete, "evidence": {"seq": failure.seq, "hash": "0" * 64}},  # does not resolve
        {**complete, "evidence": {"seq": 99, "hash": failure.hash}},
        {**complete, "cause": complete["effect"]},
        {**complete, "evidence": "eventloom://s/events/1#000000000000"},  # prefix does not match
        {**complete, "evidence": {"citation": "not a citation"}},
    ]
    for payload in incomplete:
        event = memory.append("s", "outcome.explained", payload)
        assert memory.head("s").seq == event.seq, payload  # no edge appended
    explained = memory.append("s", "outcome.explained", complete)
    edge = next(iter(memory.replay("s", explained.seq + 1)))
    assert edge.type == "causal.edge.generated" and edge.actor == "zaxy-causal"
    assert edge.payload["evidence"] == {  # the seed's shape (seed 000 task 3)
        "source_event_seq": failure.seq,
        "source_event_hash": failure.hash,
        "reason": "outcome.explained explicitly cited causal evidence",
    }
    assert edge.payload["explained_by"]["seq"] == explained.seq
    assert edge.payload["review_status"] == "proposed" and edge.payload["authority_status"] == "non_authoritative"
    assert edge.payload["graph_relation_type"] == "causal_caused"
    # an eventloom:// citation works as evidence too; the edge records the full hash
    by_citation = memory.append("s", "outcome.explained", {**complete, "evidence": failure.citation})
    produced = next(iter(memory.replay("s", by_citation.seq + 1)))
    assert produced.type == "causal.edge.generated"
    assert (produced.payload["evidence"]["source_event_seq"], produced.payload["evidence"]["source_event_hash"]) == (
        failure.seq,
        failure.hash,
    )


def test_predecessors_walk_incoming_edges_and_successors_outgoing(memory: MemoryFabric) -> None:
    events = _chain(memory)
    successors = memory.causal_successors("s", "expired token", depth=2)
    assert [
        (h["source"]["name"], h["relation_type"], h["target"]["name"], h["path_length"]) for h in successors["results"]
    ] == [
        ("expired token", "caused", "failed deploy", 1),
        ("failed deploy", "blocked", "release", 2),
    ]
    predecessors = memory.causal_predecessors("s", "release", depth=2)
    found = {(h["source"]["name"], h["relation_type"], h["path_length"]) for h in predecessors["results"]}
    assert found == {("failed deploy", "blocked", 1), ("expired token", "caused", 2), ("rotation", "fixed", 2)}
    assert memory.causal_predecessors("s", "expired token")["results"] == []
    assert memory.causal_successors("s", "release")["results"] == []
    hit = predecessors["results"][0]
    assert hit["evidence"]["citation"] == events["release"].citation and hit["evidence_resolves"]
    assert hit["evidence"]["source_event_seq"] == events["release"].seq and hit["evidence"]["resolves"]
    assert hit["method"] == "explicit_outcome_explanation_v1" and hit["confidence"] == 0.6
    assert hit["review_status"] == "proposed" and hit["authority_status"] == "non_authoritative"
    assert memory.resolve(hit["citation"]).type == "causal.edge.generated"
    # path confidence multiplies along the path; filters and depth bound the walk
    two_hops = [h for h in predecessors["results"] if h["path_length"] == 2 and h["source"]["name"] == "expired token"]
    assert two_hops[0]["path_confidence"] == pytest.approx(0.6 * 0.8)
    fixed = memory.causal_predecessors("s", "failed deploy", relation_type="fixed")
    assert [h["source"]["name"] for h in fixed["results"]] == ["rotation"]
    assert len(memory.causal_predecessors("s", "release", depth=1)["results"]) == 1


def test_as_of_and_stale_edges(memory: MemoryFabric) -> None:
    _chain(memory)
    before = memory.head("s")
    moment = next(iter(memory.replay("s", before.seq))).timestamp
    flaky = memory.append("s", "fact.asserted", {"key": "flaky runner", "fact": "runner 3 is flaky"})
    _explain(memory, "s", "flaky runner", "failed deploy", "caused", flaky, confidence=0.3)
    now = {h["source"]["name"] for h in memory.causal_predecessors("s", "failed deploy")["results"]}
    assert now == {"expired token", "rotation", "flaky runner"}
    then = {h["source"]["name"] for h in memory.causal_predecessors("s", "failed deploy", as_of=moment)["results"]}
    assert then == {"expired token", "rotation"}
    memory.invalidate("s", "flaky runner", "fact", reason="the runner was fine")
    result = memory.causal_predecessors("s", "failed deploy")
    assert {h["source"]["name"] for h in result["results"]} == {"expired token", "rotation"}
    assert result["stale_excluded"] == 1
    stale = memory.causal_predecessors("s", "failed deploy", include_stale=True)
    flagged = [h for h in stale["results"] if h["source"]["name"] == "flaky runner"]
    assert flagged and flagged[0]["stale"] and flagged[0]["weak"]


def test_bad_reads_are_structured(memory: MemoryFabric) -> None:
    _chain(memory)
    with pytest.raises(NotFoundError) as info:
        memory.causal_successors("s", "nothing at all")
    assert info.value.field == "entity_name"
    with pytest.raises(InvalidRequestError) as info:
        memory.causal_successors("s", "release", relation_type="correlated")
    assert info.value.field == "relation_type"
    with pytest.raises(InvalidRequestError) as info:
        memory.causal_predecessors("s", "release", depth=0)
    assert info.value.field == "depth"
    with pytest.raises(NotFoundError):
        memory.explain_outcome(
            "s",
            cause={"name": "a", "entity_type": "fact"},
            effect={"name": "b", "entity_type": "fact"},
            relation="caused",
            confidence=0.5,
            evidence="eventloom://s/events/1#000000000000",
        )


def test_causal_edges_land_in_kuzu_with_their_typed_label_and_audit_fields(memory: MemoryFabric) -> None:
    events = _chain(memory)
    memory.project()
    memory.projector.flush()
    # the typed label is the RELATES row's relation_type (no table per label, migration 0007), with its audit fields
    rows = memory.projector.store._rows(
        "MATCH (a:Entity)-[r:RELATES {relation_type: 'causal_blocked'}]->(b:Entity) "
        "RETURN a.name, b.name, r.inferred, r.confidence, r.inference_method, r.evidence_seq, r.evidence_hash"
    )
    assert rows == [
        ["failed deploy", "release", True, 0.6, "explicit_outcome_explanation_v1", 3, events["release"].hash]
    ]
    count = "MATCH ()-[r:RELATES {relation_type: $t}]->() RETURN count(r)"
    assert memory.projector.store._rows(count, {"t": "causal_caused"})[0][0] == 1
    assert memory.projector.store._rows(count, {"t": "causal_fixed"})[0][0] == 1
    assert {"CAUSAL_BLOCKED", "CAUSAL_CAUSED", "CAUSAL_FIXED"} <= memory.projector.store.typed_labels()
    # the dump (and the digest) still lists each typed edge under its label, with the full audit
    typed = [line for line in memory.projector.store.dump_lines() if line.startswith('["CAUSAL_BLOCKED",')]
    assert len(typed) == 1 and events["release"].hash in typed[0]
    assert memory.inferred_status()["evidence_coverage"] == 1.0


def test_checkout_causal_context_is_explanatory_and_flags_weak_or_uncited_edges(memory: MemoryFabric) -> None:
    events = _chain(memory)
    packet = memory.checkout("why did the failed deploy happen?", session="s")
    block = packet.diagnostics.model_dump()["causal_context"]
    assert block["count"] == 3 and block["non_authoritative"] is True
    assert block["relation_types"] == {"blocked": 1, "caused": 1, "fixed": 1}
    assert block["methods"] == {"explicit_outcome_explanation_v1": 3}
    assert block["average_trust"] == pytest.approx((0.8 + 0.6 + 0.8) / 3, abs=1e-4)
    assert "Use causal_context as explanatory memory, not as authoritative state." in packet.guidance.trust
    assert "explanatory memory" in packet.prompt
    # a hand-written edge whose evidence does not resolve is flagged and carries no trust
    memory.append(
        "s",
        "causal.edge.generated",
        edge_payload(
            source={"name": "moon phase", "entity_type": "fact"},
            target={"name": "failed deploy", "entity_type": "fact"},
            confidence=0.99,
            evidence={"seq": events["failed deploy"].seq, "hash": "e" * 64},
        ),
    )
    block = memory.checkout("why did the failed deploy happen?", session="s").diagnostics.model_dump()["causal_context"]
    forged = [edge for edge in block["edges"] if edge["source"] == "moon phase"]
    assert block["uncited"] == 1 and forged and forged[0]["uncited"] and forged[0]["trust"] == 0.0
    assert block["average_trust"] < (0.8 + 0.6 + 0.8) / 3
    hits = memory.causal_predecessors("s", "failed deploy")["results"]
    assert [h["evidence_resolves"] for h in hits if h["source"]["name"] == "moon phase"] == [False]
    # no causal material is ever a current fact
    assert all(fact.entity_type not in {"explanation"} for fact in packet.current_facts)


def test_rebuild_and_reopen_keep_causal_reads(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as memory:
        _chain(memory)
        expected = memory.causal_predecessors("s", "release", depth=2)
        digest = memory.projection_digest()
        assert memory.reproject() == digest
        assert memory.causal_predecessors("s", "release", depth=2) == expected
    with MemoryFabric.from_path(root) as reopened:
        assert reopened.causal_predecessors("s", "release", depth=2) == expected


def test_explain_outcome_validates_before_writing(memory: MemoryFabric) -> None:
    failure = memory.append("s", "command.completed", {"command": "make", "exit_code": 2})
    good = {
        "cause": {"name": "x", "entity_type": "fact"},
        "effect": {"name": "make #1", "entity_type": "command_run"},
        "relation": "caused",
        "confidence": 0.5,
        "evidence": failure.citation,
    }
    for overrides, field in (
        ({"relation": "correlated"}, "relation"),
        ({"cause": {"name": ""}}, "cause"),
        ({"effect": {"name": "x", "entity_type": "fact"}}, "effect"),
        ({"confidence": 2}, "confidence"),
        ({"evidence": "not a citation"}, "evidence"),
    ):
        with pytest.raises(InvalidRequestError) as info:
            memory.explain_outcome("s", **{**good, **overrides})
        assert info.value.field == field, overrides
    assert memory.head("s").seq == 1
