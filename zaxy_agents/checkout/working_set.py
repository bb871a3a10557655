"""The working set from the catalog: open tasks, live decisions, recent artifacts, blockers, goals, sources.

Bounded (a few items per kind, most recent first) and cited. Built from current entity versions only, so a
completed task or a reverted decision never shows up as live state.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import json
import operator
from collections.abc import Iterable
from typing import TypeGuard

from zaxy_agents.projection.catalog import CrossSessionRecency, EntityCatalog
from zaxy_agents.projection.records import EntityVersion

from .models import WorkingItem, WorkingSet

PER_KIND = 5
SCAN_PER_TYPE = 60  # newest identities examined per type (failed commands and goals need a little depth)
DONE = {"done", "completed", "cancelled", "closed", "resolved"}
BLOCKED = {"blocked", "failed", "stuck", "waiting"}


WORKING_TYPES = ("task", "decision", "file", "command_run", "session", "fact", "document_chunk", "document")
# Sessions in scope from which the catalog's cross-session stream replaces the per-session reads. Below it those
# reads are served from the catalog's recent-versions cache (2,000 (session, type) lists: 250 sessions x 8 types),
# which costs less than the stream's uncached query (measured: 100 sessions of 200 events, 10 vs 76 ms per
# checkout); above it that cache is refilled at every checkout and the stream wins (1,000 sessions: 1.5x less CPU).
STREAM_FROM = 250


def build_working_set(catalog: EntityCatalog, sessions: set[str] | None, as_of: str | None = None) -> WorkingSet:
    """Most recently asserted identities of the working types (bounded scans), current versions only.

    Newest first across the scope. Each bucket keeps its first ``PER_KIND`` candidates in that order, so the
    buckets that take every candidate of their kinds (decisions, files, goals, source anchors) are the ``nlargest``
    of their own candidates (the same order as sorting everything: both are stable); only tasks and commands,
    whose blockers depend on which reruns came later, are walked in order. A whole memory has tens of thousands
    of candidates per checkout.

    Many sessions (a whole memory) are read through the catalog's cross-session stream when it has one
    (:func:`build_streamed`: the same working set, O(what it shows) in Python); a few sessions, or a moment in the
    past, keep the per-session reads, which the catalog caches."""
    if as_of is None and streams(catalog, sessions):
        return build_streamed(catalog, sessions)
    scoped = sorted(sessions if sessions is not None else catalog.sessions)
    work: list[EntityVersion] = []  # tasks and commands: open tasks, blockers
    decisions: list[EntityVersion] = []
    files: list[EntityVersion] = []
    goals: list[EntityVersion] = []
    anchors: list[EntityVersion] = []
    for session in scoped:
        for entity_type in WORKING_TYPES:
            found = catalog.recent_versions(session, entity_type, SCAN_PER_TYPE, as_of)
            if entity_type in {"task", "command_run"}:
                work += found
            elif entity_type == "decision":
                decisions += found
            elif entity_type == "file":
                files += found
            elif entity_type == "session":
                goals += found
            elif entity_type == "fact":
                goals += [version for version in found if _is_goal(version.properties_json)]
            else:
                anchors += [version for version in found if version.source_path]
    working = WorkingSet()
    for bucket, candidates in (
        (working.decisions, decisions),
        (working.artifacts, files),
        (working.goals, goals),
        (working.source_anchors, anchors),
    ):
        for version in heapq.nlargest(PER_KIND, candidates, key=_NEWEST_FIRST):
            _push(bucket, version, {})
    work.sort(key=_NEWEST_FIRST, reverse=True)
    _walk(working, work)
    return working


def streams(catalog: EntityCatalog, sessions: set[str] | None) -> TypeGuard[CrossSessionRecency]:
    """Whether a scope (``None``: the whole memory) is read through the catalog's cross-session stream: the
    catalog has one and the scope holds at least ``STREAM_FROM`` sessions."""
    wide = len(sessions if sessions is not None else catalog.sessions) >= STREAM_FROM
    return wide and isinstance(catalog, CrossSessionRecency)


def build_streamed(catalog: CrossSessionRecency, sessions: set[str] | None) -> WorkingSet:
    """:func:`build_working_set` from the catalog's cross-session stream: each bucket reads its kinds' current
    versions newest first (the order the per-session loop sorts its candidates into, ties included) and stops
    when it is full, so a whole memory costs the versions it shows plus those skipped on the way (non-goal facts,
    documents without a source, done tasks), not 8 reads and up to 480 versions per session."""
    scope = None if sessions is None else sorted(sessions)

    def newest(*types: str) -> Iterable:  # type: ignore[type-arg]
        return catalog.recent_versions_across(types, SCAN_PER_TYPE, scope)

    working = WorkingSet()
    for bucket, found in (
        (working.decisions, newest("decision")),
        (working.artifacts, newest("file")),
        (
            working.goals,
            (v for v in newest("session", "fact") if v.entity_type == "session" or _is_goal(v.properties_json)),
        ),
        (working.source_anchors, (v for v in newest("document_chunk", "document") if v.source_path)),
    ):
        for version in itertools.islice(found, PER_KIND):
            _push(bucket, version, {})
        _close(found)
    work = newest("task", "command_run")
    _walk(working, work)
    _close(work)
    return working


def _close(found: Iterable) -> None:  # type: ignore[type-arg]
    """Stop a stream the caller did not read to its end (its statement is released now, not at collection)."""
    close = getattr(found, "close", None)
    if close is not None:
        close()


def _walk(working: WorkingSet, work: Iterable[EntityVersion]) -> None:
    """Tasks and commands, newest first: open tasks, blocked tasks and failed commands not fixed by a later
    successful rerun; stops once both buckets they fill are full."""
    succeeded: set[str] = set()  # a failure later fixed by a successful rerun is not a blocker
    for version in work:
        kind = version.entity_type
        if len(working.tasks) >= PER_KIND and len(working.blockers) >= PER_KIND:
            break  # nothing later can enter a bucket
        if _settled(kind, working):
            continue
        properties = _properties(version.properties_json)
        if kind == "task":
            status = str(properties.get("status") or "").lower()
            if status in BLOCKED:
                _push(working.blockers, version, properties)
            elif status not in DONE:
                _push(working.tasks, version, properties)
        else:  # command_run
            command = str(properties.get("command", ""))
            if properties.get("exit_code") == 0:
                succeeded.add(command)
            elif properties.get("exit_code") is not None and command not in succeeded:
                _push(working.blockers, version, properties)


def _is_goal(properties_json: str) -> bool:
    """A fact is a goal when its predicate is ``goal`` or ``objective`` (the JSON is parsed only when it may be)."""
    return _read_properties("fact", properties_json) and _properties(properties_json).get("predicate") in {
        "goal",
        "objective",
    }


_NEWEST_FIRST = operator.attrgetter("valid_from", "source_event_seq")


def _settled(kind: str, working: WorkingSet) -> bool:
    """Whether a task or command can no longer change the working set: every bucket it could enter is full (a
    command's success only ever hides a later blocker). Skipping those keeps the result and spares parsing the
    properties of most of a whole memory's candidates (thousands per checkout, newest first)."""
    if kind == "task":
        return len(working.tasks) >= PER_KIND and len(working.blockers) >= PER_KIND
    return len(working.blockers) >= PER_KIND  # command_run


def _read_properties(kind: str, properties_json: str) -> bool:
    """Whether the kind's choice needs its properties: a task's or a command's always; a fact's only when it may
    be a goal (a predicate of ``goal`` or ``objective`` appears in the JSON as that string): a checkout scans
    tens of recent facts per session, and parsing each one's JSON cost more than the rest of the working set."""
    if kind == "fact":
        return '"goal"' in properties_json or '"objective"' in properties_json
    return kind in {"task", "command_run"}


@functools.lru_cache(maxsize=4096)
def _properties(properties_json: str) -> dict:
    """Parsed properties (read only here), remembered: the same recent tasks are read at every checkout."""
    return json.loads(properties_json) if properties_json else {}


def _push(target: list[WorkingItem], version: EntityVersion, properties: dict) -> None:
    if len(target) < PER_KIND:
        status = properties.get("status") if version.entity_type == "task" else None
        target.append(
            WorkingItem(
                text=version.summary or version.name, citation=version.citation, kind=version.entity_type, status=status
            )
        )
