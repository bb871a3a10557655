"""Keyword search over the embedded graph's entity versions: which versions to read, and how they rank.

Why a module of its own: the graph keeps no entity text (migration 0006, ``kuzu_schema.ENTITY_TEXT_COLUMNS``),
so a search reads versions' text from the catalog. Reading the text of every version valid at the time asked
cost 0.4-0.7 s per query at 10k events and 6.8 s at 100k; with the catalog's entity keyword index attached
(:class:`~zaxy_agents.projection.protocol.EntityWords`) only the versions it names are read, plus the versions
of the types it does not index (turns, prompts, topics, speakers, review material) and unasserted placeholders,
which are still scanned. Either way the same matching runs over what was read (:func:`rank`), so the answer is
the one the full scan gives (tests/projection/test_entity_search.py; docs/benchmarks.md for the figures).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from zaxy_agents.projection.protocol import EntityWords

WORDS = re.compile(r"\w+")
Candidate = tuple[str, str, int]  # version id, name, source event seq
Rows = Callable[[str, dict[str, Any]], list[list[Any]]]


def query_words(text: str) -> list[str]:
    """The distinct case-folded words of a query, in order."""
    return list(dict.fromkeys(WORDS.findall(text.casefold())))


def candidates(
    rows: Rows, words: list[str], session: str | None, as_of: str | None, source: EntityWords | None
) -> list[Candidate]:
    """(id, name, seq) of the versions valid at ``as_of`` (now when ``None``) that may hold one of ``words``:
    those ``source`` names plus every version of a type it does not index, or every valid version without one."""
    parameters: dict[str, Any] = {}
    validity = "e.valid_from <= $t AND (e.valid_to IS NULL OR e.valid_to > $t)" if as_of else "e.valid_to IS NULL"
    if as_of:
        parameters["t"] = as_of
    if session:
        validity += " AND e.session_id = $s"
        parameters["s"] = session
    named = source.versions_with(words, [session] if session else None) if source is not None else None
    if named is None:
        return [tuple(row) for row in rows(f"MATCH (e:Entity) WHERE {validity} {_RETURN}", parameters)]  # type: ignore[misc]
    found = []
    if named:  # by primary key, one lookup each
        found = rows(
            f"UNWIND $ids AS i MATCH (e:Entity {{id: i}}) WHERE {validity} {_RETURN}",
            {**parameters, "ids": sorted(named)},
        )
    found += rows(
        f"MATCH (e:Entity) WHERE {validity} AND (e.entity_type IN $types OR e.asserted = false) {_RETURN}",
        {**parameters, "types": sorted(source.unindexed_types)},  # type: ignore[union-attr]
    )
    return list({row[0]: tuple(row) for row in found}.values())  # type: ignore[misc]


_RETURN = "RETURN e.id, e.name, e.source_event_seq"


def rank(
    found: Sequence[Candidate],
    texts: Callable[[list[str]], dict[str, tuple[str, str]]],
    words: list[str],
    text: str,
    limit: int,
) -> dict[str, float]:
    """Version id -> score of the best ``limit`` candidates holding a query word, best first: how many distinct
    query words occur as whole words of the name or summary, plus one for an exact name match; ties go to the
    later source event, then to the smaller id.

    Candidates are read newest first, their text a batch at a time: once ``limit`` of them score what no later one
    can beat (every query word, or every word and the exact name), the rest are not read. That is where a search
    for a common word stopped reading every version's text."""
    wanted, name = set(words), " ".join(text.casefold().split())
    exact_name = [" ".join(version_name.casefold().split()) == name for _, version_name, _ in found]
    order = sorted(range(len(found)), key=lambda i: (-found[i][2], found[i][0]))
    best: list[tuple[float, int, str]] = []  # (-score, -seq, id): the smallest ``limit`` keys seen
    for start in range(0, len(order), RANK_BATCH):
        batch = order[start : start + RANK_BATCH]
        if len(best) >= limit:  # what the later candidates could score at most, against the limit-th best
            if best[-1][0] <= -(len(wanted) + 1.0):
                break  # the limit-th best holds every word and is named exactly: nothing after it can beat it
            batch = [i for i in batch if (-(len(wanted) + float(exact_name[i])), -found[i][2], found[i][0]) < best[-1]]
        read = texts([found[i][0] for i in batch]) if batch else {}
        for i in batch:
            version_id, version_name, seq = found[i]
            haystack = f"{version_name} {read[version_id][0]}".casefold()
            if not any(word in haystack for word in words):
                continue
            held = wanted & set(WORDS.findall(haystack))
            if held:
                best.append((-(len(held) + float(exact_name[i])), -seq, version_id))
        best = sorted(best)[:limit]
    return {version_id: -score for score, _seq, version_id in best}


RANK_BATCH = 256  # candidates whose text is read at once
