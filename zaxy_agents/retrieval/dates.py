"""Dates a query names, as periods that event timestamps can be matched against.

Absolute dates ("on 9 November, 2022", "in July 2022", "in June") come from the question itself. Relative ones
("yesterday", "last week", "three days ago", "on Tuesday") are what people ask an agent's memory ("what did we
decide yesterday?"); they are resolved against a reference day: the query's ``as_of``, else today (UTC). Only
general English expressions are recognised, never words taken from any dataset.
"""

from __future__ import annotations

import datetime as _dt
import re

from .text import _MON, _MONTHS

# (kind, year, month, day) for absolute dates; ("range", None, first ordinal, last ordinal) for relative ones.
QueryDate = tuple[str, int | None, int, int]

_DATE_DMY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)? (" + _MON + r"),? ((?:19|20)\d\d)\b")
_DATE_MDY = re.compile(r"\b(" + _MON + r") (\d{1,2})(?:st|nd|rd|th)?,? ((?:19|20)\d\d)\b")
_DATE_MY = re.compile(r"\b(" + _MON + r"),? ((?:19|20)\d\d)\b")
_DATE_M = re.compile(r"\b(?:in|during|of|early|late|mid) (" + _MON + r")\b")
# A day without a year ("between August 11 and August 15 2023"): it takes the year of the query's dated days.
_DAY_DM = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)? (" + _MON + r")\b(?!,? (?:19|20)\d\d)")
_DAY_MD = re.compile(r"\b(" + _MON + r") (\d{1,2})(?:st|nd|rd|th)?\b(?!,? (?:19|20)\d\d)")

_WEEKDAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_TODAY = re.compile(r"\b(today|tonight|this (?:morning|afternoon|evening))\b")
_YESTERDAY = re.compile(r"\b(?:the )?day before yesterday\b|\b(yesterday|last night)\b")
_CALENDAR = re.compile(r"\b(this|last|past|previous) (week|month|year)\b")
_AGO = re.compile(r"\b(\d{1,3}|a|an|one|two|three|four|five|six|seven) (day|week|month|year)s? ago\b")
_WEEKDAY = re.compile(r"\b(last|on|this|past) (" + "|".join(_WEEKDAY_NAMES) + r")\b")


def query_dates(query: str, today: _dt.date | None = None) -> list[QueryDate]:
    """Dates named in ``query``: absolute ones first ('day' items, else 'month' items); if there are none and a
    reference day is given, the periods its relative expressions name ('range' items of day ordinals)."""
    q = query.lower()
    out: list[QueryDate] = []
    for m in _DATE_DMY.finditer(q):
        out.append(("day", int(m.group(3)), _MONTHS.index(m.group(2)) + 1, int(m.group(1))))
    for m in _DATE_MDY.finditer(q):
        out.append(("day", int(m.group(3)), _MONTHS.index(m.group(1)) + 1, int(m.group(2))))
    if out:
        year = out[0][1]
        out += [("day", year, _MONTHS.index(m.group(2)) + 1, int(m.group(1))) for m in _DAY_DM.finditer(q)]
        out += [("day", year, _MONTHS.index(m.group(1)) + 1, int(m.group(2))) for m in _DAY_MD.finditer(q)]
    if not out:
        out = [("month", int(m.group(2)), _MONTHS.index(m.group(1)) + 1, 0) for m in _DATE_MY.finditer(q)]
    if not out:
        out = [("month", None, _MONTHS.index(m.group(1)) + 1, 0) for m in _DATE_M.finditer(q)]
    if not out and today is not None:
        out = [("range", None, first.toordinal(), last.toordinal()) for first, last in relative_periods(q, today)]
    return out


def relative_periods(query: str, today: _dt.date) -> list[tuple[_dt.date, _dt.date]]:
    """The day ranges (first, last; inclusive) that the relative time expressions of ``query`` name."""
    q = query.lower()
    day = _dt.timedelta(days=1)
    out: list[tuple[_dt.date, _dt.date]] = []
    if _TODAY.search(q):
        out.append((today, today))
    for m in _YESTERDAY.finditer(q):
        if m.group(1) is None:  # the day before yesterday
            out.append((today - 2 * day, today - 2 * day))
        elif m.group(1) == "last night":  # logged late yesterday or after midnight
            out.append((today - day, today))
        else:
            out.append((today - day, today - day))
    for m in _CALENDAR.finditer(q):
        which, unit = m.groups()
        out.append(_calendar_period(which, unit, today))
    for m in _AGO.finditer(q):
        count = int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)]
        span = _UNIT_DAYS[m.group(2)]
        centre = today - count * span * day
        slack = max(1, span // 2) * day  # "three weeks ago" is about a week wide, "two days ago" about three days
        out.append((centre - slack, centre + slack))
    for m in _WEEKDAY.finditer(q):
        wanted = _WEEKDAY_NAMES.index(m.group(2))
        back = (today.weekday() - wanted) % 7
        if m.group(1) in {"last", "past"} and back == 0:
            back = 7  # "last Tuesday", asked on a Tuesday, is a week ago
        out.append((today - back * day, today - back * day))
    return out


def relative_period(expression: str, today: _dt.date) -> tuple[_dt.date, _dt.date] | None:
    """The day range (first, last; inclusive) when the whole of ``expression`` is one relative date ("yesterday",
    "last week", "three days ago", "last Tuesday"), else ``None`` (no words around it are tolerated)."""
    text = " ".join(expression.lower().split())
    for pattern in (_TODAY, _YESTERDAY, _CALENDAR, _AGO, _WEEKDAY):
        if pattern.fullmatch(text):
            periods = relative_periods(text, today)
            return periods[0] if len(periods) == 1 else None
    return None


def _calendar_period(which: str, unit: str, today: _dt.date) -> tuple[_dt.date, _dt.date]:
    day = _dt.timedelta(days=1)
    if which == "past":  # "the past week": the last 7 (30, 365) days up to today
        return today - _UNIT_DAYS[unit] * day, today
    if unit == "week":
        monday = today - today.weekday() * day
        return (monday, today) if which == "this" else (monday - 7 * day, monday - day)
    if unit == "month":
        first = today.replace(day=1)
        if which == "this":
            return first, today
        previous_last = first - day
        return previous_last.replace(day=1), previous_last
    first = today.replace(month=1, day=1)
    if which == "this":
        return first, today
    return first.replace(year=first.year - 1), first - day
