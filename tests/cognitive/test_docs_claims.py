"""docs/cognitive.md, claim by claim, where the other cognitive tests do not already hold it (a real embedded
memory, the page's Python surface). Each test names the sentences it keeps true."""

from __future__ import annotations

import pytest

from zaxy_agents.fabric import MemoryFabric


def test_the_producer_writes_the_seeds_edge_and_a_review_writes_status(memory: MemoryFabric) -> None:
    """'the fabric appends one causal.edge.generated event (actor zaxy-causal, method
    explicit_outcome_explanation_v1, evidence recorded with the full hash as {source_event_seq, source_event_hash,
    reason})' and the review payload '{..., status, rationale, ...}'."""
    failed = memory.append("ops", "command.completed", {"command": "make deploy", "exit_code": 1})
    result = memory.explain_outcome(
        "ops",
        cause={"name": "ci token expired", "entity_type": "fact"},
        effect={"name": "make deploy #1", "entity_type": "command_run"},
        relation="caused",
        confidence=0.9,
        evidence=failed.citation,
    )
    edge = memory.resolve(result["causal_edge"])
    assert (edge.type, edge.actor) == ("causal.edge.generated", "zaxy-causal")
    assert edge.payload["causal_method"] == "explicit_outcome_explanation_v1"
    assert set(edge.payload["evidence"]) == {"source_event_seq", "source_event_hash", "reason"}
    assert edge.payload["evidence"]["source_event_hash"] == failed.hash  # the full 64-hex hash

    candidate = memory.consolidation_candidate(
        "ops",
        candidate_type="procedure",
        title="Rotate the token, then redeploy",
        summary="vault rotate, then make deploy",
        source_events=[failed.citation],
        confidence=0.6,
    )
    reviewed = memory.consolidation_review("ops", candidate["candidate_id"], decision="deferred", rationale="later")
    payload = memory.resolve(reviewed["citation"]).payload
    assert payload["status"] == "deferred" and "decision" not in payload


def test_a_known_unknown_is_relevant_at_60_percent_of_its_terms_or_its_claims_name(memory: MemoryFabric) -> None:
    """'relevant_known_unknowns (the open ones this question asks: 60% of a known unknown's question terms are in
    the query, or all of its claim name's terms)' and the guardrail: never answer_from_memory over one."""
    note = memory.append("ops", "fact.asserted", {"key": "db engine", "fact": "the db engine is postgres"})
    memory.append("ops", "fact.asserted", {"key": "prod replica", "fact": "the prod replica runs postgres"})
    memory.record_known_unknown(
        "ops",
        question="Which region hosts the prod replica?",  # four terms: region, host, prod, replica
        reason="nobody said where",
        source_events=[note.citation],
        claim_key="fact:db engine",
    )

    def relevant(question: str) -> int:
        packet = memory.checkout(question, session="ops")
        if packet.diagnostics.model_dump()["metacognition"]["relevant_known_unknowns"]:
            assert packet.quality.answerability != "answer_from_memory", question
            return 1
        return 0

    assert relevant("which region hosts the prod replica?") == 1  # 4 of 4
    assert relevant("prod replica region?") == 1  # 3 of 4 >= 60%
    assert relevant("what runs the prod replica?") == 0  # 2 of 4 < 60%
    assert relevant("what is the db engine?") == 1  # the claim's name, whatever the question's words


def test_synthesis_confidence_is_discounted_by_contested_rows_only(memory: MemoryFabric) -> None:
    """'a confidence (0.8 for rank 1, 0.5 for the others, times included rows / (included + rows excluded as
    duplicate or unit_mismatch); off_topic rows do not lower it)'."""
    memory.append("trip", "note.recorded", {"text": "I spent $450 on the flight to Lisbon."})
    memory.append("trip", "note.recorded", {"text": "The hotel in Lisbon cost $300 for the trip."})
    question = "How much did I spend on the Lisbon trip in total?"

    def confidences() -> tuple[list[float], list[str]]:
        synthesis = memory.checkout(question, session="trip").diagnostics.model_dump()["synthesis"]
        reasons = [row["reason"].split(":")[0] for row in synthesis["ledger_rows"] if row["status"] != "included"]
        return [candidate["confidence"] for candidate in synthesis["answer_candidates"]], reasons

    clean, excluded = confidences()
    assert excluded == [] and clean[0] == 0.8 and set(clean[1:]) == {0.5}
    memory.append("trip", "note.recorded", {"text": "The Lisbon museum cost $40; I walked 12 km."})  # 12 km: off topic
    with_off_topic, excluded = confidences()
    assert excluded == ["off_topic"] and with_off_topic == clean  # off-topic rows do not lower it
    memory.append("trip", "note.recorded", {"text": "I spent $450 on the flight to Lisbon, as I said."})
    discounted, excluded = confidences()
    assert sorted(excluded) == ["duplicate", "off_topic"]
    share = 3 / (3 + 1)  # three included rows, one duplicate
    assert discounted[0] == round(0.8 * share, 3) and set(discounted[1:]) == {round(0.5 * share, 3)}


def test_the_primitive_table_is_the_routing_table() -> None:
    """The reasoning-primitive table (phase, primitive, tool), 'up to 20 of those citations' and 'the latest 500
    per session'."""
    import re

    from tests.conftest import REPO_ROOT
    from zaxy_agents.reasoning import context, primitives

    text = (REPO_ROOT / "docs" / "cognitive.md").read_text()
    table = text.split("## Reasoning-loop primitives", 1)[1].split("\n\n", 3)[2]
    documented: dict[str, str] = {}
    for phase, cell in re.findall(r"^\| (\w+) \| (.+) \|$", table, re.MULTILINE):
        for primitive, tool in re.findall(r"`(\w+)`(?: \((\w+)[) ]?)?", cell):
            documented[primitive] = phase
            if tool.startswith("memory_"):
                assert primitives.PRIMITIVE_TOOLS[tool] == (primitive, phase), tool
    assert documented == primitives.PRIMITIVES
    assert "with up to 20 of\nthose `citations`" in text and primitives.MAX_CITATIONS == 20
    assert "the latest\n500 per session" in text and context.SCAN == 500


def test_the_listed_agent_tools_exist_on_both_surfaces(memory: MemoryFabric) -> None:
    """The Agents section: 'The same seven operations are agent tools on both surfaces: ...', 'The six
    metacognition tools are agent tools on both surfaces too: ...' and 'The issue-20 tools ... (`belief_tools`) ...
    (`synthesis_tools` ...) ... (`procedure_tools`)': each name the page lists is an MCP tool and a tool of the
    LangGraph opt-in set it names, and the counts the page spells out are right."""
    import re

    from tests.conftest import REPO_ROOT
    from zaxy_agents.langgraph import beliefs, cognitive, metacognition, procedures, synthesis
    from zaxy_agents.mcp import registry

    section = (REPO_ROOT / "docs" / "cognitive.md").read_text().split("## Agents (MCP and LangGraph)", 1)[1]
    paragraphs = [" ".join(p.split()) for p in section.split("\n\n")]

    def listed(opening: str) -> list[str]:
        paragraph = next(p for p in paragraphs if p.startswith(opening))
        names = re.findall(r"`(memory_\w+)(?:\(|`)", paragraph.split(":", 1)[1].split(". ", 1)[0])
        return list(dict.fromkeys(names))

    served = {spec.name for spec in registry.all_tools()}
    seven, six, issue_20 = (listed(p) for p in ("The same seven", "The six metacognition", "The issue-20 tools"))
    assert (len(seven), len(six)) == (7, 6)
    offered = {t.name for make in (cognitive.cognitive_tools, metacognition.metacognition_tools) for t in make(memory)}
    offered |= {
        t.name
        for make in (beliefs.belief_tools, synthesis.synthesis_tools, procedures.procedure_tools)
        for t in make(memory)
    }
    for name in (*seven, *six, *issue_20):
        assert name in served and name in offered, name
    assert {t.name for t in cognitive.cognitive_tools(memory)} >= set(seven)
    assert {t.name for t in metacognition.metacognition_tools(memory)} >= set(six)
    assert len(issue_20) == 7


def test_accepting_a_belief_update_whose_citation_no_longer_resolves_is_a_conflict(tmp_path) -> None:
    """'Accepting twice, or accepting a proposal whose citations no longer resolve, is a conflict' (the second half;
    tests/mcp/test_belief_tools.py holds the first): the cited event was edited by hand after the proposal."""
    from zaxy_agents.errors import ConflictError

    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        memory.append("ops", "fact.asserted", {"key": "db", "fact": "db is MySQL"})
        note = memory.append("ops", "note.recorded", {"text": "ops moved the database to Postgres last night"})
        proposal = memory.propose_belief_update(
            "ops", claim="db is Postgres", rationale="the note says so", confidence=0.7, citations=[note.citation]
        )
    log = tmp_path / "loom" / "ops.jsonl"
    log.write_bytes(log.read_bytes().replace(note.hash.encode(), b"f" * 64, 1))  # the cited hash is gone
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        with pytest.raises(ConflictError) as refused:
            memory.review_belief_update("ops", proposal["proposal_id"], status="accepted", rationale="confirmed")
        assert "no longer resolve" in refused.value.message


def test_a_confidence_trajectory_names_its_trend(memory: MemoryFabric) -> None:
    """'every assessment, oldest first, the latest value (current_confidence) and trend (single, rising, falling,
    flat; unassessed when none)', the latest against the first; and the unk_ / rvq_ ids of the events table."""
    import re

    note = memory.append("s", "note.recorded", {"text": "two vendors disagree on the launch date"})
    assert memory.confidence_trajectory("s", "fact:launch")["trend"] == "unassessed"
    trends = []
    for value in (0.5, 0.7, 0.4, 0.5):
        memory.claim_confidence("s", "fact:launch", confidence=value, rationale="r", source_events=[note.citation])
        trajectory = memory.confidence_trajectory("s", "fact:launch")
        trends.append((trajectory["trend"], trajectory["current_confidence"]))
    assert trends == [("single", 0.5), ("rising", 0.7), ("falling", 0.4), ("flat", 0.5)]
    assert [point["confidence"] for point in trajectory["points"]] == [0.5, 0.7, 0.4, 0.5]  # oldest first
    unknown = memory.record_known_unknown(
        "s", question="When is the launch?", reason="r", source_events=[note.citation]
    )
    assert re.fullmatch(r"unk_[0-9a-f]{24}", unknown["unknown_id"])
    request = memory.request_reverification(
        "s", "fact:launch", reason="vendors disagree", source_events=[note.citation]
    )
    assert re.fullmatch(r"rvq_[0-9a-f]{24}", request["request_id"])


def test_promotion_and_rollback_candidates_at_their_thresholds(memory: MemoryFabric) -> None:
    """'promotion_candidates — a proposed skill whose two or more outcomes average 0.7 or more — and
    rollback_candidates — an applicable revision whose outcomes average below 0.5 while an earlier version
    exists'."""
    run = memory.append("dev", "command.completed", {"command": "pytest -x", "exit_code": 0})
    proposed = {"once": [1.0], "edge": [0.6, 0.8], "below": [0.69, 0.69]}
    for skill, scores in proposed.items():
        summary = f"fix a failing python test ({skill})"
        memory.record_skill("dev", "proposed", skill, summary=summary, procedure=["a"], citations=[run.citation])
        for score in scores:
            memory.record_skill("dev", "outcome_recorded", skill, success_score=score)
    revised = {"half": [0.5, 0.5], "worse": [0.5, 0.48]}
    for skill, scores in revised.items():
        summary = f"fix a failing python test ({skill})"
        memory.record_skill("dev", "proposed", skill, summary=summary, procedure=["a"], citations=[run.citation])
        memory.record_skill("dev", "validated", skill, reason="ok")
        memory.record_skill("dev", "revised", skill, version="2", procedure=["b"], reason="faster")
        for score in scores:
            memory.record_skill("dev", "outcome_recorded", skill, success_score=score)
    analytics = memory.checkout("how do I fix a failing python test?", session="dev").diagnostics.model_dump()[
        "skill_analytics"
    ]
    assert [c["skill_id"] for c in analytics["promotion_candidates"]] == ["edge"]
    assert [c["skill_id"] for c in analytics["rollback_candidates"]] == ["worse"]


def test_weak_edges_are_halved_in_trust_and_add_their_guidance_line(memory: MemoryFabric) -> None:
    """'Trust per edge is its confidence, halved when weak ... When edges are present the guidance says "Use
    causal_context as explanatory memory, not as authoritative state." (plus a line about weak or uncited edges
    when there are any)'."""
    failed = memory.append("s", "fact.asserted", {"key": "failed deploy", "fact": "deploy 41 failed with 401"})
    memory.append("s", "fact.asserted", {"key": "expired token", "fact": "the CI token expired"})
    memory.append("s", "fact.asserted", {"key": "flaky runner", "fact": "runner 3 is flaky"})

    def explain(cause: str, confidence: float) -> None:
        memory.explain_outcome(
            "s",
            cause={"name": cause, "entity_type": "fact"},
            effect={"name": "failed deploy", "entity_type": "fact"},
            relation="caused",
            confidence=confidence,
            evidence=failed.citation,
        )

    question = "why did the failed deploy happen?"
    explain("expired token", 0.8)
    packet = memory.checkout(question, session="s")
    trust = "\n".join(packet.guidance.trust)
    assert "Use causal_context as explanatory memory, not as authoritative state." in trust
    assert "weak or uncited" not in trust
    explain("flaky runner", 0.3)
    packet = memory.checkout(question, session="s")
    block = packet.diagnostics.model_dump()["causal_context"]
    weak = next(edge for edge in block["edges"] if edge["source"] == "flaky runner")
    assert weak["weak"] and weak["trust"] == 0.15 and block["weak"] == 1
    assert "weak or uncited causal edges" in "\n".join(packet.guidance.trust)


def test_a_mined_procedure_cites_one_trace_per_session_up_to_ten(memory: MemoryFabric) -> None:
    """'proposes each as a review-pending procedure candidate ... citing one trace per supporting session (up to
    ten sessions)'."""
    sessions = [f"repo{n:02d}" for n in range(11)]
    for session in sessions:
        steps = [
            ("tool.call.completed", {"tool": "read_file"}),
            ("command.completed", {"command": "pytest", "exit_code": 0}),
        ]
        memory.append_many(session, [{"type": kind, "payload": payload} for kind, payload in steps])
    assert memory.mine_procedures(min_support=11)["created"] == 1
    [candidate] = memory.consolidation_status("procedures")["candidates"]
    cited = {memory.resolve(citation).session for citation in candidate["source_events"]}
    assert len(cited) == 10 and cited <= set(sessions)
    assert len(candidate["source_events"]) == 20  # the two steps of each cited session's trace
    assert "Succeeded in 11 sessions" in candidate["summary"] and "1 more" in candidate["summary"]


def test_evidence_that_was_erased_no_longer_resolves(tmp_path) -> None:
    """'whether the evidence still resolves is checked on every read (evidence_resolves)', 'zero when its evidence
    does not resolve (uncited)' and 'accepting a proposal whose citations no longer resolve, is a conflict': an
    erased event keeps its hash in the chain but not its content, so it vouches for nothing any more, in this
    process and after a reopen."""
    from zaxy_agents.errors import ConflictError

    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as memory:
        memory.append("s", "fact.asserted", {"key": "a", "fact": "the pool is exhausted"})
        memory.append("s", "fact.asserted", {"key": "b", "fact": "checkout returns 500"})
        note = memory.append("s", "note.recorded", {"text": "pool timeout in app.log"})
        memory.explain_outcome(
            "s",
            cause={"name": "a", "entity_type": "fact"},
            effect={"name": "b", "entity_type": "fact"},
            relation="caused",
            confidence=0.9,
            evidence=note.citation,
        )
        proposal = memory.propose_belief_update(
            "s", claim="the pool is fine", rationale="the log says so", confidence=0.6, citations=[note.citation]
        )
        assert memory.causal_predecessors("s", "b")["results"][0]["evidence_resolves"] is True  # cached now
        memory.erase_range("s", note.seq, note.seq, actor="admin", reason="the log line held a secret")
        assert memory.causal_predecessors("s", "b")["results"][0]["evidence_resolves"] is False
        with pytest.raises(ConflictError):
            memory.review_belief_update("s", proposal["proposal_id"], status="accepted", rationale="ok")
    with MemoryFabric.from_path(root) as reopened:
        assert reopened.causal_predecessors("s", "b")["results"][0]["evidence_resolves"] is False
        block = reopened.checkout("why does checkout return 500?", session="s").diagnostics.model_dump()
        assert block["causal_context"]["uncited"] == 1 and block["causal_context"]["average_trust"] == 0.0
