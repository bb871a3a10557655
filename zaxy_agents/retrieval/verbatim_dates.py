"""Dates a verbatim query names, as day-ordinal windows over the indexed events.

:func:`affinity` is the scorer's date term (1 inside the named day's following week or the named month and the
next, 0.5 up to a month after a named day, 1 inside a relative period); :func:`windows` turns the same dates into
disjoint day ranges so the events inside them are found with an SQL range on the day index (:func:`dated`) and
counted over the whole index for the date term's IDF (:func:`count_in`), the tail's events included.
"""

from __future__ import annotations

import datetime as _dt
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from . import sorted_sets as sets
from .dates import QueryDate
from .verbatim import PREFIX, Stats

if TYPE_CHECKING:
    from .verbatim_tail import TailSnapshot

DATE_LIMIT = 2000  # events of a named date window taken per session


def affinity(dates: list[QueryDate], day: np.ndarray, month: np.ndarray) -> np.ndarray:
    """1 for events dated from the named day to 8 days after it (or in the named month or the next one),
    0.5 up to a month after the named day, else 0: events are usually logged shortly after the date a
    question refers to. A relative period ("yesterday", resolved against the reference day) is the time
    its events were logged: 1 inside it, else 0."""
    known = day >= 0
    result = np.zeros(len(day))
    for kind, year, mo, d in dates:
        if kind == "range":
            value = ((day >= mo) & (day <= d)).astype(float)
        elif kind == "day":
            try:
                start = _dt.date(year, mo, d).toordinal()  # type: ignore[arg-type]
            except (TypeError, ValueError):
                continue
            delta = day - start
            value = np.where((delta >= -1) & (delta <= 8), 1.0, np.where((delta > 8) & (delta <= 31), 0.5, 0.0))
        elif year is None:
            month_of_year = month % 12
            value = ((month_of_year == mo - 1) | (month_of_year == mo % 12)).astype(float)
        else:
            start = year * 12 + mo - 1
            value = ((month == start) | (month == start + 1)).astype(float)
        result = np.maximum(result, np.where(known, value, 0.0))
    return result


def month_days(month_index: int) -> tuple[int, int]:
    """First and last day (ordinals) of month ``year * 12 + month - 1``."""
    first = _dt.date(month_index // 12, month_index % 12 + 1, 1).toordinal()
    following = month_index + 1
    return first, _dt.date(following // 12, following % 12 + 1, 1).toordinal() - 1


def windows(dates: list[QueryDate], stats: Stats) -> list[tuple[int, int]]:
    """Disjoint day-ordinal intervals where :func:`_affinity` is positive."""
    spans: list[tuple[int, int]] = []
    for kind, year, mo, d in dates:
        try:
            if kind == "range":
                spans.append((mo, d))
            elif kind == "day":
                start = _dt.date(year, mo, d).toordinal()  # type: ignore[arg-type]
                spans.append((start - 1, start + 31))
            elif year is not None:
                first, _ = month_days(year * 12 + mo - 1)
                _, last = month_days(year * 12 + mo)
                spans.append((first, last))
            elif stats.min_day > 0:
                low = _dt.date.fromordinal(int(stats.min_day)).year - 1
                high = _dt.date.fromordinal(int(stats.max_day)).year
                for y in range(low, high + 1):
                    first, _ = month_days(y * 12 + mo - 1)
                    _, last = month_days(y * 12 + mo)
                    spans.append((first, last))
        except (TypeError, ValueError, OverflowError):
            continue
    merged: list[tuple[int, int]] = []
    for low, high in sorted(spans):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def in_windows(days: np.ndarray, windows: Sequence[tuple[int, int]]) -> np.ndarray:
    inside = np.zeros(days.size, dtype=bool)
    for low, high in windows:
        inside |= (days >= low) & (days <= high)
    return inside


def count_in(db: sqlite3.Connection, windows: Sequence[tuple[int, int]], tail: TailSnapshot) -> int:
    """Events dated inside ``windows`` in the whole index (the N of the date term's IDF)."""
    indexed = sum(
        db.execute(f"SELECT count(*) FROM {PREFIX}_doc WHERE day BETWEEN ? AND ?", window).fetchone()[0]
        for window in windows
    )
    return indexed + int(in_windows(tail.records["day"].astype(np.int64), windows).sum())


def dated(
    db: sqlite3.Connection, windows: Sequence[tuple[int, int]], scope: Sequence[int] | None, tail: TailSnapshot
) -> tuple[np.ndarray, bool]:
    """Docs dated inside ``windows`` in the searched sessions (the earliest ``DATE_LIMIT`` per window and
    session), and whether some window held more."""
    found: list[int] = []
    cut = False
    for low, high in windows:
        if scope is None:
            rows = db.execute(
                f"SELECT id FROM {PREFIX}_doc WHERE day BETWEEN ? AND ? ORDER BY id LIMIT ?", (low, high, DATE_LIMIT)
            )
            ids = [row[0] for row in rows]
            cut |= len(ids) == DATE_LIMIT
            found += ids
            continue
        for session in scope:
            rows = db.execute(
                f"SELECT id FROM {PREFIX}_doc WHERE session = ? AND day BETWEEN ? AND ? ORDER BY id LIMIT ?",
                (session, low, high, DATE_LIMIT),
            )
            ids = [row[0] for row in rows]
            cut |= len(ids) == DATE_LIMIT
            found += ids
    inside = in_windows(tail.records["day"].astype(np.int64), windows)
    if scope is not None:
        inside &= sets.isin(tail.records["session"], np.asarray(scope))
    found += (np.flatnonzero(inside) + tail.first).tolist()
    return sets.unique(np.array(found, dtype=np.int64)), cut
