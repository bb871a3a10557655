"""Dates named in a query: absolute ones from the question, relative ones resolved against a reference day."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval.dates import query_dates, relative_periods

THURSDAY = dt.date(2026, 3, 12)


@pytest.mark.parametrize(
    ("question", "dates"),
    [
        ("What did Audrey eat on October 24, 2023?", [("day", 2023, 10, 24)]),
        ("Where was John between August 11 and August 15 2023?", [("day", 2023, 8, 15), ("day", 2023, 8, 11)]),
        ("What happened from 3 May to 9th May, 2023?", [("day", 2023, 5, 9), ("day", 2023, 5, 3)]),
        ("Where did Joanna travel in July 2022?", [("month", 2022, 7, 0)]),
        ("When did Melanie go camping in June?", [("month", None, 6, 0)]),
        ("What did he do on May 5?", []),  # no year anywhere: not an absolute date
        ("What did we decide yesterday?", []),  # relative: needs a reference day
    ],
)
def test_absolute_dates(question: str, dates: list[tuple[str, int | None, int, int]]) -> None:
    assert query_dates(question) == dates


@pytest.mark.parametrize(
    ("question", "first", "last"),
    [
        ("what did we decide yesterday?", "2026-03-11", "2026-03-11"),
        ("what broke last night", "2026-03-11", "2026-03-12"),
        ("anything from the day before yesterday", "2026-03-10", "2026-03-10"),
        ("what did I do today", "2026-03-12", "2026-03-12"),
        ("what did we ship this week", "2026-03-09", "2026-03-12"),
        ("what did we ship last week", "2026-03-02", "2026-03-08"),
        ("errors in the past week", "2026-03-05", "2026-03-12"),
        ("decisions last month", "2026-02-01", "2026-02-28"),
        ("this month's incidents", "2026-03-01", "2026-03-12"),
        ("what happened last year", "2025-01-01", "2025-12-31"),
        ("the deploy three days ago", "2026-03-08", "2026-03-10"),
        ("the outage 2 weeks ago", "2026-02-23", "2026-03-01"),
        ("what did we agree on Tuesday", "2026-03-10", "2026-03-10"),
        ("what did we agree last Thursday", "2026-03-05", "2026-03-05"),
    ],
)
def test_relative_periods(question: str, first: str, last: str) -> None:
    assert relative_periods(question, THURSDAY) == [(dt.date.fromisoformat(first), dt.date.fromisoformat(last))]
    assert query_dates(question, THURSDAY) == [
        ("range", None, dt.date.fromisoformat(first).toordinal(), dt.date.fromisoformat(last).toordinal())
    ]


def test_an_absolute_date_wins_over_relative_words() -> None:
    assert query_dates("what did we do last week of May 2025?", THURSDAY) == [("month", 2025, 5, 0)]


def test_what_happened_yesterday_finds_yesterdays_events(tmp_path: Path) -> None:
    """Through the fabric: no word is shared with the question; the day it names is. ``as_of`` is the reference."""
    turns = [
        ("2026-03-02T10:00:00Z", "We picked Redis for the session cache."),
        ("2026-03-11T09:30:00Z", "Billing moves to Postgres 16, agreed with Dana."),
        ("2026-03-11T16:00:00Z", "Rollout window set for Friday night."),
        ("2026-03-12T08:00:00Z", "Coffee machine on floor 3 is broken again."),
    ]
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        for occurred_at, text in turns:
            memory.append("team", "transcript.turn", {"role": "user", "text": text, "occurred_at": occurred_at})
        reference = "2026-03-12T12:00:00Z"
        yesterday = memory.query("What did we decide yesterday?", sessions=["team"], k=5, as_of=reference)
        assert {hit.text for hit in yesterday.hits} == {turns[1][1], turns[2][1]}
        last_week = memory.query("What did we settle on last week?", sessions=["team"], k=5, as_of=reference)
        assert [hit.text for hit in last_week.hits] == [turns[0][1]]
        assert memory.query("What did we decide?", sessions=["team"], k=5, as_of=reference).hits == []
