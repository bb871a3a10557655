"""The synthesis bundle of a numeric or aggregation question (seed 003): ledger rows and answer candidates.

A checkout retrieves cited items; for a question such as "how much did I spend on flights in total?" the values
those items state become *ledger rows* (one per number: its fact id, source group, citation, value, unit, label
and why it is included or excluded) and the included rows compose *answer candidates* (sum, count, latest,
average), ranked by what the question asks. Everything here is deterministic and read-only: the bundle is a
diagnostic the model may use and must record (memory_synthesis_artifact), never a fact.

Rules (docs/cognitive.md):
- a number is a value when it is not part of a date, a time, a version or an identifier;
- an event stating several numbers yields one row per number in one source group; a row whose clause shares no
  term with the question is excluded (``off_topic``) when the event states several numbers;
- a sum or an average only adds rows of one unit: the unit most included rows share (others: ``unit_mismatch``);
- the same value restated under the same label in another event counts once (``duplicate``);
- candidates cite the rows they rest on (``supporting_source_ids``) and the rows they leave out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zaxy_agents.projection.model import stable_id
from zaxy_agents.retrieval.text import STOPWORDS, Analyzer

CANDIDATE_TYPES = ("sum", "count", "latest", "average")
QUESTION_TYPES = (*CANDIDATE_TYPES, "value")
MAX_ROWS = 60
MAX_LABEL = 160
DUPLICATE_OVERLAP = 0.6  # share of label words two rows of the same value must have in common
_ANALYZER = Analyzer()
_COUNT = re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b", re.I)
_SUM = re.compile(r"\bhow much\b|\btotal\b|\bsum\b|\baltogether\b|\bin all\b|\bcombined\b", re.I)
_AVERAGE = re.compile(r"\baverage\b|\bmean\b|\bper (day|week|month|year|session)\b", re.I)
_LATEST = re.compile(r"\b(latest|current|currently|now|most recent|last)\b", re.I)
_VALUE = re.compile(r"\b(what number|how long|how old|how far|percent|percentage|rate|price|cost|size)\b", re.I)
_HOW_MANY_UNIT = re.compile(r"\bhow many ([a-z]+)", re.I)
# Masked before numbers are read: dates, times, versions, identifiers, hashes, citations.
_NOT_VALUES = re.compile(
    r"eventloom://\S+|\b\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?|\b\d{1,2}:\d{2}(?::\d{2})?\b|\bv?\d+\.\d+\.\d+\S*"
    r"|\b[0-9a-f]{12,}\b|\b[A-Za-z]+[-_]?\d+[A-Za-z0-9_-]*\b|\b\d+[-_/][A-Za-z0-9]+\b|\b(?:19|20)\d\d\b"
)
_NUMBER = re.compile(
    r"(?<![\w.\-/#:])(?P<cur>[$€£])?\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d])"
    r"(?:\s?(?P<unit>%|[A-Za-z]{1,16}))?"
)
_CLAUSE = re.compile(r"[^.;!?\n]+")
_CURRENCIES = {"$": "$", "€": "€", "£": "£"}
AUTHORITY_STATUS = "non_authoritative"


@dataclass(frozen=True)
class Source:
    """A cited item of the checkout the ledger may draw values from."""

    citation: str
    session: str
    seq: int
    event_type: str
    text: str
    fact_id: str
    source_group: str
    valid_from: str = ""
    entity: tuple[str, str] | None = None  # (name, entity_type) when the item is a fact of the graph


def question(query: str) -> dict[str, Any] | None:
    """What the question asks to compose (``question_type``) and the unit a "how many <unit>" names; ``None``
    when it asks for no number at all."""
    unit_cue = None
    if _COUNT.search(query):
        kind = "count"
        match = _HOW_MANY_UNIT.search(query)
        unit_cue = _singular(match.group(1)) if match else None
    elif _AVERAGE.search(query):
        kind = "average"
    elif _SUM.search(query):
        kind = "sum"
    elif _LATEST.search(query) and (_VALUE.search(query) or re.search(r"\d", query)):
        kind = "latest"
    elif _VALUE.search(query):
        kind = "value"
    else:
        return None
    return {"question_type": kind, "unit_cue": unit_cue}


def _singular(word: str) -> str:
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _unit(currency: str | None, word: str | None) -> tuple[str, int]:
    """The unit of a number and how many characters of the text after it belong to it."""
    if currency:
        return _CURRENCIES[currency], 0
    if not word:
        return "", 0
    if word == "%":
        return "%", 1
    lowered = word.lower()
    if lowered in STOPWORDS or not lowered.isalpha():
        return "", 0
    return _singular(lowered), len(word)


def number(raw: str) -> float | int:
    """``"1,200"`` -> 1200, ``"2.5"`` -> 2.5."""
    value = float(raw.replace(",", ""))
    return int(value) if value.is_integer() else value


def stated_values(text: str) -> list[tuple[str, float | int, str, str]]:
    """``(raw, value, unit, clause)`` for each number the text states as a value, in order."""
    masked = _NOT_VALUES.sub(lambda m: " " * len(m.group(0)), text)
    found = []
    for clause_match in _CLAUSE.finditer(masked):
        clause = text[clause_match.start() : clause_match.end()].strip()
        for match in _NUMBER.finditer(clause_match.group(0)):
            unit, unit_length = _unit(match.group("cur"), match.group("unit"))
            raw = match.group(0).strip() if unit_length else (match.group("cur") or "") + match.group("num")
            found.append((raw, number(match.group("num")), unit, clause))
    return found


def _terms(text: str) -> set[str]:
    return set(_ANALYZER(text))


def _label(clause: str) -> str:
    return " ".join(clause.split())[:MAX_LABEL]


def rows_of(query: str, sources: Sequence[Source]) -> list[dict[str, Any]]:
    """The ledger rows of ``sources`` for ``query`` (see the module's rules), most relevant source first."""
    asked = question(query)
    if asked is None:
        return []
    cue_words = {"how", "mani", "much", "total", "sum", "averag", "mean", "number", "count", "latest", "current"}
    query_terms = _terms(query) - cue_words
    rows: list[dict[str, Any]] = []
    for source in sources:
        values = stated_values(source.text)
        event_terms = _terms(source.text)
        for index, (raw, value, unit, clause) in enumerate(values):
            related = not query_terms or bool(query_terms & (_terms(clause) if len(values) > 1 else event_terms))
            rows.append(
                {
                    "row_id": "row_" + stable_id(source.session, source.seq, index, raw, length=16),
                    "fact_id": source.fact_id,
                    "source_group": source.source_group,
                    "citation": source.citation,
                    "event_type": source.event_type,
                    "value": value,
                    "raw": raw,
                    "unit": unit,
                    "label": _label(clause),
                    "valid_from": source.valid_from,
                    "entity": {"name": source.entity[0], "entity_type": source.entity[1]} if source.entity else None,
                    "status": "included" if related else "excluded",
                    "reason": "states a value for the question"
                    if related
                    else "off_topic: its clause shares no term with the question",
                }
            )
            if len(rows) >= MAX_ROWS:
                return _decide(rows, asked)
    return _decide(rows, asked)


def _exclude(row: dict[str, Any], reason: str) -> None:
    row["status"], row["reason"] = "excluded", reason


def _decide(rows: list[dict[str, Any]], asked: dict[str, Any]) -> list[dict[str, Any]]:
    """Duplicates and unit mismatches (only for compositions that add values)."""
    kept: list[dict[str, Any]] = []
    for row in rows:
        if row["status"] != "included":
            continue
        words = _words(row["label"])
        same = next(
            (
                other
                for other in kept
                if (other["value"], other["unit"]) == (row["value"], row["unit"])
                and other["citation"] != row["citation"]
                and _overlap(words, _words(other["label"])) >= DUPLICATE_OVERLAP
            ),
            None,
        )
        if same is not None:
            _exclude(row, f"duplicate: restates {same['row_id']}")
            continue
        kept.append(row)
    unit = dominant_unit(rows, asked)
    if asked["question_type"] in ("sum", "average", "latest", "value") or asked.get("unit_cue"):
        for row in rows:
            if row["status"] == "included" and row["unit"] != unit:
                _exclude(row, f"unit_mismatch: {row['unit'] or 'no unit'}, the composed unit is {unit or 'none'}")
    return rows


def _words(label: str) -> set[str]:
    return {term for term in _terms(label) if term.isalpha()}


def _overlap(left: set[str], right: set[str]) -> float:
    return len(left & right) / len(left | right) if left | right else 1.0


def dominant_unit(rows: Sequence[dict[str, Any]], asked: dict[str, Any]) -> str:
    """The unit the question names ("how many hours"), else the one most included rows share (ties: first)."""
    included = [row["unit"] for row in rows if row["status"] == "included"]
    cue = asked.get("unit_cue")
    if cue and cue in included:
        return cue
    counts: dict[str, int] = {}
    for unit in included:
        counts[unit] = counts.get(unit, 0) + 1
    return max(counts, key=lambda unit: (counts[unit], -included.index(unit))) if counts else ""


def candidates_of(rows: Sequence[dict[str, Any]], asked: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer candidates the included rows compose, ranked: what the question asks first."""
    included = [row for row in rows if row["status"] == "included"]
    if not included:
        return []
    excluded_ids = [row["row_id"] for row in rows if row["status"] != "included"]
    contested = sum(1 for row in rows if row["status"] != "included" and not row["reason"].startswith("off_topic"))
    share = len(included) / (len(included) + contested)
    unit = dominant_unit(rows, asked)
    kind = asked["question_type"]
    primary = "latest" if kind == "value" else kind
    if kind == "count" and asked.get("unit_cue") and asked["unit_cue"] == unit:
        primary = "sum"  # "how many hours": the hours add up
    values = [row["value"] for row in included]
    groups = sorted({row["source_group"] for row in included})
    newest = max(included, key=lambda row: (row["valid_from"], row["citation"]))
    composed: dict[str, tuple[float | int, list[dict[str, Any]], str]] = {
        "sum": (_tidy(sum(values)), included, unit),
        "count": (len(groups), included, ""),
        "latest": (newest["value"], [newest], unit),
    }
    if len(included) >= 2:
        composed["average"] = (_tidy(sum(values) / len(values)), included, unit)
    order = [primary] + [name for name in CANDIDATE_TYPES if name != primary]
    out = []
    for rank, name in enumerate([name for name in order if name in composed], start=1):
        value, support, candidate_unit = composed[name]
        support_ids = [row["row_id"] for row in support]
        left_out = excluded_ids + [row["row_id"] for row in included if row not in support]
        out.append(
            {
                "candidate_id": "ans_" + stable_id(name, value, candidate_unit, *sorted(support_ids), length=16),
                "rank": rank,
                "candidate_type": name,
                "answer_value": value,
                "unit": candidate_unit,
                "answer_text": _text(value, candidate_unit),
                "confidence": round((0.8 if rank == 1 else 0.5) * share, 3),
                "supporting_source_ids": support_ids,
                "excluded_source_ids": left_out,
                "citations": sorted({row["citation"] for row in support}),
                "authority_status": AUTHORITY_STATUS,
            }
        )
    return out


def _tidy(value: float) -> float | int:
    value = round(value, 2)
    return int(value) if float(value).is_integer() else value


def _text(value: float | int, unit: str) -> str:
    if unit in _CURRENCIES.values():
        return f"{unit}{value:,}"
    if unit == "%":
        return f"{value}%"
    return f"{value} {unit}".strip()


def source_groups(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows per source group (a fact with its versions, or one event), with their citations."""
    groups: dict[str, dict[str, Any]] = {}
    for row in rows:
        group = groups.setdefault(
            row["source_group"], {"source_group": row["source_group"], "row_ids": [], "citations": []}
        )
        group["row_ids"].append(row["row_id"])
        if row["citation"] not in group["citations"]:
            group["citations"].append(row["citation"])
    return list(groups.values())


def bundle(query: str, sources: Sequence[Source]) -> dict[str, Any]:
    """``diagnostics.synthesis``: the question, ledger rows, answer candidates and source groups."""
    asked = question(query)
    rows = rows_of(query, sources) if asked is not None else []
    return {
        "question_type": asked["question_type"] if asked else None,
        "unit_cue": asked["unit_cue"] if asked else None,
        "answer_candidates": candidates_of(rows, asked) if asked else [],
        "ledger_rows": rows,
        "source_groups": source_groups(rows),
        "authority_status": AUTHORITY_STATUS,
    }
