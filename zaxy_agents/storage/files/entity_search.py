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
Candidate = tuple[str, str, int, int]  # version id, name, source event seq, how many query words it may hold
Rows = Callable[[str, dict[str, Any]], list[list[Any]]]


def query_words(text: str) -> list[str]:
    """The distinct case-folded words of a query, in order."""
    return list(dict.fromkeys(WORDS.findall(text.casefold())))


def candidates(
    rows: Rows,
    words: list[str],
    session: str | None,
    as_of: str | None,
    source: EntityWords | None,
    key: tuple[str, Callable[[Sequence[str]], list[Any]]] = ("id", list),
) -> list[Candidate]:
    """The versions valid at ``as_of`` (now when ``None``) that may hold one of ``words``, each with how many of
    them it may hold: those ``source`` names (per word) plus every version of a type it does not index; every
    valid version when a word cannot be looked up (or without ``source``). ``key``: the Entity table's primary-key
    column and the function giving its values for version ids."""
    parameters: dict[str, Any] = {}
    validity = "e.valid_from <= $t AND (e.valid_to IS NULL OR e.valid_to > $t)" if as_of else "e.valid_to IS NULL"
    if as_of:
        parameters["t"] = as_of
    if session:
        validity += " AND e.session_id = $s"
        parameters["s"] = session
    scope = [session] if session else None
    named = {word: source.versions_with([word], scope) for word in words} if source is not None else {}
    found = {word: ids for word, ids in named.items() if ids is not None}
    unknown = len(words) - len(found)  # words any version may hold
    if unknown:
        listed = rows(f"MATCH (e:Entity) WHERE {validity} {_RETURN}", parameters)
    else:
        ids = set().union(*found.values())
        listed = []
        if ids:  # by primary key, one lookup each
            column, keys = key
            listed = rows(
                f"UNWIND $ids AS i MATCH (e:Entity {{{column}: i}}) WHERE {validity} {_RETURN}",
                {**parameters, "ids": keys(sorted(ids))},
            )
            listed = [row for row in listed if row[0] in ids]  # the id each row holds is checked
        listed += rows(
            f"MATCH (e:Entity) WHERE {validity} AND (e.entity_type IN $types OR e.asserted = false) {_RETURN}",
            {**parameters, "types": sorted(source.unindexed_types)},  # type: ignore[union-attr]
        )
    unindexed = source.unindexed_types if source is not None else frozenset()
    out: dict[str, Candidate] = {}
    for version_id, name, seq, entity_type, asserted in listed:
        if source is None or entity_type in unindexed or asserted is False:
            bound = len(words)  # not in the index: it may hold any word
        else:
            bound = unknown + sum(1 for ids in found.values() if version_id in ids)
        if bound:
            out[version_id] = (version_id, name, seq, bound)
    return list(out.values())


_RETURN = "RETURN e.id, e.name, e.source_event_seq, e.entity_type, e.asserted"


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

    Candidates are read newest first, their text a batch at a time; a candidate whose best possible score (the
    words it may hold, plus the exact name) cannot beat the ``limit``-th best found so far is not read. That is
    where a search for a common word, or for words most versions hold only some of, stopped reading every
    version's text."""
    if limit <= 0:
        return {}
    wanted, name = set(words), " ".join(text.casefold().split())
    exact_name = [" ".join(version_name.casefold().split()) == name for _, version_name, _, _ in found]
    newest_first = [(-seq, version_id) for version_id, _, seq, _ in found]
    order = sorted(range(len(found)), key=newest_first.__getitem__)
    best: list[tuple[float, int, str]] = []  # (-score, -seq, id): the smallest ``limit`` keys seen
    for start in range(0, len(order), RANK_BATCH):
        batch = order[start : start + RANK_BATCH]
        if len(best) >= limit:  # what the later candidates could score at most, against the limit-th best
            if best[-1][0] <= -(len(wanted) + 1.0):
                break  # the limit-th best holds every word and is named exactly: nothing after it can beat it
            batch = [i for i in batch if (-(found[i][3] + float(exact_name[i])), -found[i][2], found[i][0]) < best[-1]]
        read = texts([found[i][0] for i in batch]) if batch else {}
        for i in batch:
            version_id, version_name, seq, _bound = found[i]
            haystack = f"{version_name} {read[version_id][0]}".casefold()
            if not any(word in haystack for word in words):
                continue
            held = wanted & set(WORDS.findall(haystack))
            if held:
                best.append((-(len(held) + float(exact_name[i])), -seq, version_id))
        best = sorted(best)[:limit]
    return {version_id: -score for score, _seq, version_id in best}


RANK_BATCH = 256  # candidates whose text is read at once
