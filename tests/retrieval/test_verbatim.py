"""The verbatim lane on its own: the conversational cues it uses, incrementality and explanations."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from zaxy_agents.projection.model import SearchDoc
from zaxy_agents.retrieval.derived import StandaloneIndexes, open_standalone
from zaxy_agents.retrieval.verbatim import VerbatimIndex


def doc(
    seq: int,
    text: str,
    speaker: str | None = None,
    segment: str | None = "s1",
    when: str = "2023-05-08T10:00:00Z",
    caption: str | None = None,
    session: str = "conv",
) -> SearchDoc:
    return SearchDoc(session, seq, f"{seq:064x}", "transcript.turn", text, speaker, caption, segment, when)


DIALOGUE = [
    doc(1, "Hey Bob, how often do you work out these days?", "Ann"),
    doc(2, "Three times a week, usually with my brother.", "Bob"),
    doc(3, "I adopted a puppy last month, his name is Pixel.", "Ann"),
    doc(4, "That is lovely. I went hiking in the Alps yesterday.", "Bob", segment="s2", when="2023-06-02T10:00:00Z"),
    doc(5, "Look at this!", "Ann", segment="s2", caption="a dog playing in the snow"),
]


Build = Callable[..., VerbatimIndex]


@pytest.fixture
def build(tmp_path: Path) -> Iterator[Build]:
    """A fresh on-disk index per call, fed one event per transaction (the MCP / hook path)."""
    opened: list[StandaloneIndexes] = []

    def make(order: list[SearchDoc] = DIALOGUE, path: Path | None = None) -> VerbatimIndex:
        index = VerbatimIndex()
        opened.append(open_standalone(path or tmp_path / f"index-{len(opened)}", index))
        for item in order:
            index.add(item)
        return index

    yield make
    for listeners in opened:
        listeners.store.close()


def test_answer_next_to_the_question_borrows_its_words(build: Build) -> None:
    hits = build().search("How often does Bob work out?", k=2)
    assert [h.seq for h in hits][:1] == [2]
    assert hits[0].components.get("neighbour", 0) > 0


def test_speaker_names_become_a_boost_not_a_term(build: Build) -> None:
    hits = build().search("What did Ann adopt?", k=1)
    assert hits[0].seq == 3 and "speaker" in hits[0].components


def test_caption_field_and_temporal_cue(build: Build) -> None:
    assert build().search("dog in the snow", k=1)[0].seq == 5
    hits = build().search("When did Bob go hiking?", k=1)
    assert hits[0].seq == 4 and "temporal" in hits[0].components


def test_components_add_up_to_the_score(build: Build) -> None:
    for hit in build().search("Bob hiking Alps puppy", k=5):
        assert hit.score == pytest.approx(sum(hit.components.values()), rel=1e-6)


def test_sessions_interleaved_in_any_order_give_the_same_ranking(build: Build) -> None:
    """Each session's events arrive in seq order (the projector's guarantee); sessions interleave freely."""
    turns = [("Do you work out?", "Cy"), ("Daily, with my puppy.", "Di"), ("Hiking too?", "Cy")]
    other = [doc(seq, text, speaker, session="other") for seq, (text, speaker) in enumerate(turns, 1)]
    query = "work out puppy hiking"
    reference = [(h.session, h.seq, round(h.score, 9)) for h in build([*DIALOGUE, *other]).search(query, k=6)]
    for seed in range(4):
        rng = random.Random(seed)
        mine, theirs, order = list(DIALOGUE), list(other), []
        while mine or theirs:
            order.append((mine if mine and (not theirs or rng.random() < 0.5) else theirs).pop(0))
        assert [(h.session, h.seq, round(h.score, 9)) for h in build(order).search(query, k=6)] == reference
    already = build([*DIALOGUE, DIALOGUE[0]])  # an event indexed again is ignored
    assert [h.seq for h in already.search(query, k=6)] == [h.seq for h in build().search(query, k=6)]


def test_scope_time_and_type_filters(build: Build) -> None:
    index = build([*DIALOGUE, doc(9, "Bob works out daily now", "Bob", session="other")])
    assert {h.session for h in index.search("Bob work out", k=10)} == {"conv", "other"}
    assert {h.session for h in index.search("Bob work out", k=10, sessions=["other"])} == {"other"}
    assert all(h.seq != 4 for h in index.search("hiking", k=10, as_of="2023-05-30T00:00:00Z"))
    assert index.search("hiking", k=10, exclude_types=frozenset({"transcript.turn"})) == []


def test_reopened_from_disk_answers_the_same(build: Build, tmp_path: Path) -> None:
    first = build(path=tmp_path / "kept")
    before = [(h.seq, h.score, h.components) for h in first.search("puppy work out", k=3)]
    reopened = VerbatimIndex()
    listeners = open_standalone(tmp_path / "kept", reopened)  # nothing is rebuilt: the tables are the index
    assert [(h.seq, h.score, h.components) for h in reopened.search("puppy work out", k=3)] == before
    listeners.store.close()


def test_a_date_named_in_the_query_matches_the_events_of_that_window(build: Build) -> None:
    """No word of the question is in the answer; the month it names is. A wrongly named speaker does not win."""
    index = build(
        [
            doc(1, "I finally finished my first screenplay!", "Joanna", when="2022-01-23T10:00:00Z"),
            doc(2, "Congrats, that is huge.", "Nate", when="2022-01-23T10:01:00Z"),
            doc(3, "Work was busy, nothing major to report.", "Joanna", segment="s2", when="2022-03-02T10:00:00Z"),
            doc(4, "My turtles are doing fine.", "Nate", segment="s2", when="2022-03-02T10:01:00Z"),
        ]
    )
    hits = index.search("What achievement did Joanna accomplish in January 2022?", k=3)
    assert {h.seq for h in hits} == {1, 2}  # the January events, and only those
    assert all(h.components["date_match"] > 0 for h in hits)
    assert index.search("What did Joanna accomplish?", k=2) == []  # no date, no shared word: nothing to cite
    named = index.search("What did Nate do in March 2022?", k=3)
    assert {h.seq for h in named} == {3, 4}  # the window's events, by either speaker
    assert len({h.components["date_match"] for h in named}) == 1  # a named speaker does not scale the date
