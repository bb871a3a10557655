"""The fabric reads behind the inspector, on a real embedded memory: paging and filters stay bounded, a proof
or a chain status catches a changed byte, entity histories say what closed each version."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.memory import SHOP, seed_memory
from zaxy_agents.errors import InvalidRequestError, NotFoundError
from zaxy_agents.fabric import MemoryFabric


@pytest.fixture
def fabric(tmp_path: Path):
    seed_memory(tmp_path / "eventloom")
    with MemoryFabric.from_path(tmp_path / "eventloom") as opened:
        yield opened


def test_timeline_pages_newest_first_with_filters_and_a_scan_budget(fabric: MemoryFabric) -> None:
    head = fabric.head(SHOP).seq
    first = fabric.timeline_page(SHOP, limit=5)
    assert [e["seq"] for e in first["events"]] == list(range(head, head - 5, -1))
    second = fabric.timeline_page(SHOP, limit=5, before_seq=first["next_before_seq"])
    assert [e["seq"] for e in second["events"]] == list(range(head - 5, head - 10, -1))
    tasks = fabric.timeline_page(SHOP, types=["task.*"])["events"]
    assert {e["type"] for e in tasks} == {"task.created", "task.updated"}
    assert [e["seq"] for e in fabric.timeline_page(SHOP, text="POSTGRES 15")["events"]] == [3]
    actors = [event.actor for event in fabric.replay(SHOP)]
    produced = next(actor for actor in actors if actor != "agent")  # the causal producer's events
    by_actor = fabric.timeline_page(SHOP, actor=produced)["events"]
    assert len(by_actor) == actors.count(produced) and {e["actor"] for e in by_actor} == {produced}
    assert fabric.timeline_page(SHOP, since="2999-01-01")["events"] == []
    budget = fabric.timeline_page(SHOP, types=["fact.asserted"], scan=3)
    assert budget["scanned"] == 3 and budget["next_before_seq"] == head - 2  # where to go on from
    newer = fabric.timeline_page(SHOP, after_seq=head - 2)
    assert [e["seq"] for e in newer["events"]] == [head, head - 1]
    with pytest.raises(InvalidRequestError) as bad:
        fabric.timeline_page(SHOP, since="banana")
    assert bad.value.field == "since"
    with pytest.raises(NotFoundError):
        fabric.timeline_page("no-such-session")


def test_a_changed_byte_fails_the_proof_and_the_chain_status(fabric: MemoryFabric, tmp_path: Path) -> None:
    assert fabric.chain_status(SHOP)["status"] == "verified"
    proof = fabric.prove_event(SHOP, 2)["proof"]
    assert proof["hash_ok"] and proof["prev_link_ok"] and proof["next_link_ok"]
    assert proof["previous"]["seq"] == 1 and proof["recomputed_hash"] == proof["stored_hash"]
    log = tmp_path / "eventloom" / f"{SHOP}.jsonl"
    log.write_bytes(log.read_bytes().replace(b"staging", b"stoging", 1))  # someone edits event 1 by hand
    status = fabric.chain_status(SHOP, refresh=True)
    assert status["status"] == "damaged" and status["first_broken_seq"] == 1
    assert fabric.prove_event(SHOP, 1)["proof"]["hash_ok"] is False


def test_entities_and_what_closed_each_version(fabric: MemoryFabric) -> None:
    listed = fabric.session_entities(SHOP)
    assert listed["types"]["fact"] == 2 and listed["types"]["task"] == 1
    names = [e["name"] for e in fabric.session_entities(SHOP, entity_type="fact")["entities"]]
    assert names == ["db engine", "deploy target"]  # most recently asserted first
    assert [e["name"] for e in fabric.session_entities(SHOP, text="DEPLOY")["entities"]] == ["deploy target", "deploy"]
    page = fabric.session_entities(SHOP, limit=1)
    assert len(page["entities"]) == 1 and page["next_offset"] == 1
    deploy = fabric.entity_detail(SHOP, "fact", "deploy target")
    superseded, current = deploy["versions"]
    assert superseded["closed_by"]["kind"] == "superseded"
    assert superseded["closed_by"]["citation"] == current["citation"]
    assert current["current"] and "closed_by" not in current
    engine = fabric.entity_detail(SHOP, "fact", "db engine")["versions"][0]
    assert engine["closed_by"]["kind"] == "invalidated"
    assert engine["closed_by"]["reason"] == "we moved to postgres 16"
    assert engine["closed_by"]["event_type"] == "memory.invalidated"
    with pytest.raises(NotFoundError):
        fabric.entity_detail(SHOP, "fact", "never said")


def test_erase_preview_lists_events_and_what_they_asserted(fabric: MemoryFabric) -> None:
    preview = fabric.erase_preview(SHOP, 1, 2)
    assert [e["seq"] for e in preview["events"]] == [1, 2] and "payload" not in preview["events"][0]
    assert {v["summary"] for v in preview["entity_versions"]} >= {"the deploy target is staging"}
    with pytest.raises(InvalidRequestError):
        fabric.erase_preview(SHOP, 3, 2)
    with pytest.raises(NotFoundError):
        fabric.erase_preview(SHOP, 1, 10_000)
    with pytest.raises(InvalidRequestError, match="at most 10000 events") as too_many:  # docs/ui.md: the cap
        fabric.erase_preview(SHOP, 1, 10_001)
    assert too_many.value.field == "to_seq"
