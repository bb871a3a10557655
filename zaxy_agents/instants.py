"""Instants a caller names (``as_of``, ``--as-of``, temporal filters), parsed instead of compared as text.

Event timestamps are UTC ISO-8601 strings with microseconds and a ``Z`` (``2026-03-12T09:30:00.000000Z``), so
an instant in exactly that form compares correctly as text. :func:`parse_instant` turns what a caller may
reasonably write into that form, or refuses with ``invalid_request`` naming the field, so "banana" (which
sorts after every timestamp, and so used to mean "everything") can no longer pass for a date:

* ISO-8601 date-times, with ``Z``, an offset (converted to UTC) or none (taken as UTC); basic and extended forms;
* ISO-8601 dates (``2026-03-12``): the **end** of that day, so everything recorded that day counts;
* ``now`` and ``today`` (the current instant);
* ``N minutes|hours|days|weeks|months|years ago`` (exactly N units before now; months are 30 days, years 365);
* the relative dates the query parser knows (``yesterday``, ``the day before yesterday``, ``last week``,
  ``this month``, ``last Tuesday``...): the end of the last day of the period they name.

Stdlib and the query date parser only: the fabric, the CLI and the tool argument models all call this.
"""

from __future__ import annotations

import datetime as _dt
import re

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.retrieval.dates import relative_period

MAX_INSTANT_CHARS = 64
REMEDIATION = (
    "Use an ISO-8601 instant or date (2026-03-12T09:30:00Z, 2026-03-12), 'now', 'N days ago' or a relative date "
    "('yesterday', 'last week', 'last Tuesday')."
)
_AGO = re.compile(
    r"(\d{1,6}|a|an|one|two|three|four|five|six|seven|eight|nine|ten) (minute|hour|day|week|month|year)s? ago"
)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_NUMBERS |= {"eight": 8, "nine": 9, "ten": 10}
_UNITS = {
    "minute": _dt.timedelta(minutes=1),
    "hour": _dt.timedelta(hours=1),
    "day": _dt.timedelta(days=1),
    "week": _dt.timedelta(days=7),
    "month": _dt.timedelta(days=30),
    "year": _dt.timedelta(days=365),
}
_END_OF_DAY = _dt.time(23, 59, 59, 999999)


def format_instant(moment: _dt.datetime) -> str:
    """``moment`` in the log's timestamp form (UTC, microseconds, ``Z``)."""
    utc = moment.astimezone(_dt.UTC) if moment.tzinfo is not None else moment
    day = f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}"
    return f"{day}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}.{utc.microsecond:06d}Z"


def parse_instant(value: object, *, field: str = "as_of", now: _dt.datetime | None = None) -> str | None:
    """The instant ``value`` names, as a log timestamp string; ``None`` stays ``None``.

    Raises :class:`InvalidRequestError` naming ``field`` for anything that is not a date or time.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidRequestError(
            f"{field} must be a string, not {type(value).__name__}", field=field, remediation=REMEDIATION
        )
    text = " ".join(value.split())
    if not text or len(text) > MAX_INSTANT_CHARS:
        shown = "empty" if not text else f"{len(text)} characters long"
        raise InvalidRequestError(f"{field} is {shown}: not a date or time", field=field, remediation=REMEDIATION)
    moment = _absolute(text)
    if moment is None:
        moment = _relative(text.lower(), now or _dt.datetime.now(_dt.UTC))
    if moment is None:
        raise InvalidRequestError(
            f"{field} {_shown(value)} is not a date or time", field=field, remediation=REMEDIATION
        )
    return format_instant(moment)


def _absolute(text: str) -> _dt.datetime | None:
    if not text[:1].isdigit():
        return None
    candidate = text[:-1] + "+00:00" if text[-1:] in "zZ" else text
    try:
        if len(candidate) in (8, 10) and "T" not in candidate.upper() and ":" not in candidate:
            day = _dt.date.fromisoformat(candidate)
            return _dt.datetime.combine(day, _END_OF_DAY, tzinfo=_dt.UTC)
        moment = _dt.datetime.fromisoformat(candidate)
        return moment.replace(tzinfo=_dt.UTC) if moment.tzinfo is None else moment.astimezone(_dt.UTC)
    except (ValueError, OverflowError):
        return None


def _relative(text: str, now: _dt.datetime) -> _dt.datetime | None:
    now = now.astimezone(_dt.UTC) if now.tzinfo is not None else now.replace(tzinfo=_dt.UTC)
    if text in ("now", "today", "right now"):
        return now
    match = _AGO.fullmatch(text)
    if match is not None:
        count = int(match.group(1)) if match.group(1).isdigit() else _NUMBERS[match.group(1)]
        try:
            return now - count * _UNITS[match.group(2)]
        except OverflowError:
            return None
    period = relative_period(text, now.date())
    if period is None:
        return None
    return min(now, _dt.datetime.combine(period[1], _END_OF_DAY, tzinfo=_dt.UTC))


def _shown(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:37] + "...")
