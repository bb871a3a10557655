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
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import cast

from zaxy_agents.projection.catalog import EntityCatalog, SessionEpochs, reports_epochs
from zaxy_agents.projection.records import EntityVersion
from zaxy_agents.projection.session_memo import MergedMemo, SessionMemo

from .models import WorkingItem, WorkingSet

PER_KIND = 5
SCAN_PER_TYPE = 60  # newest identities examined per type (failed commands and goals need a little depth)
DONE = {"done", "completed", "cancelled", "closed", "resolved"}
BLOCKED = {"blocked", "failed", "stuck", "waiting"}


WORKING_TYPES = ("task", "decision", "file", "command_run", "session", "fact", "document_chunk", "document")


def build_working_set(catalog: EntityCatalog, sessions: set[str] | None, as_of: str | None = None) -> WorkingSet:
    """Most recently asserted identities of the working types (bounded scans), current versions only.

    Newest first across the scope. Each bucket keeps its first ``PER_KIND`` candidates in that order, so the
    buckets that take every candidate of their kinds (decisions, files, goals, source anchors) are the ``nlargest``
    of their own candidates (the same order as sorting everything: both are stable); only tasks and commands,
    whose blockers depend on which reruns came later, are walked in order. A whole memory has tens of thousands
    of candidates per checkout.

    A catalog that reports per-session change epochs (:class:`SessionEpochs`) is read through per-session partials
    kept until their session changes (:func:`build_memoised`): the same working set, and a whole memory costs the
    sessions that changed since the last checkout plus a merge of a few entries per session. A moment in the past
    (or a catalog without epochs) keeps the per-session reads below, which the catalog caches."""
    if as_of is None and reports_epochs(catalog):
        return build_memoised(catalog, sessions)
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


# What the working set keeps of one candidate version (not the version: its properties can be kilobytes):
# (valid_from, seq, text, citation, kind, status). A plain tuple of strings and ints, not a named tuple: the garbage
# collector stops tracking those (a full collection walked 75,000 named tuples at 1,000 sessions, ~100 ms).
_Entry = tuple[str, int, str, str, str, str | None]
_TEXT, _STATUS = 2, 5


# One session's share of the working set: the first ``PER_KIND`` decisions, artifacts, goals and anchors, and its
# tasks' and commands' ``(valid_from, seq, id)`` newest first. Tuples all the way down, for the garbage collector.
_Partial = tuple[tuple[tuple[str, int, str], ...] | tuple[_Entry, ...], ...]
_GOALS, _WORK = 2, 4


_PARTIALS: SessionMemo[_Partial] = SessionMemo()
_MERGED: MergedMemo[tuple[list[_Entry], ...]] = MergedMemo()
_ENTRY_ORDER = operator.itemgetter(0, 1)  # (valid_from, seq): _NEWEST_FIRST of the version


def build_memoised(catalog: EntityCatalog, sessions: set[str] | None) -> WorkingSet:
    """:func:`build_working_set` from per-session partials (:func:`_partials`), each kept until its session's
    catalog epoch moves, merged newest first; the merged result itself is kept until any session changes, and the
    four buckets chosen by time alone are merged in a tree (:class:`~zaxy_agents.projection.session_memo.MergeTree`:
    a change in one session merges ~log2(sessions) pairs of buckets, not every session's). Exact: a bucket's first
    ``PER_KIND`` across sessions are among each session's first ``PER_KIND`` (ties in session order, as the loop's
    stable sort leaves them), and the tasks-and-commands walk is the loop's own (:func:`_walk`) over every session's
    candidates merged newest first, each read only when the walk reaches it (it stops once its buckets are full:
    tens of versions, where a memory of 1,000 sessions holds 120,000 candidates)."""
    scoped = sorted(sessions if sessions is not None else catalog.sessions)
    key = None if sessions is None else tuple(scoped)

    def merge() -> tuple[list[_Item], ...]:
        partials, root = _PARTIALS.merged(
            catalog, scoped, lambda session: _partials(catalog, [session])[0], _combine, None,
            lambda missing: _partials(catalog, missing), WORKING_TYPES,
        )  # fmt: skip
        walked = WorkingSet()
        _walk(walked, _read_lazily(catalog, _work_heads(partials, root)))
        buckets = [[e[_TEXT : _STATUS + 1] for e in bucket] for bucket in root[:4]] if root else [[], [], [], []]
        return (
            *buckets,
            *([(i.text, i.citation, i.kind, i.status) for i in b] for b in (walked.tasks, walked.blockers)),
        )

    # read only versions of the working types of the scope: an agent's turns (``turn`` versions of its thread)
    # or another session's writes leave it as it was
    merged = _MERGED.get(catalog, key, merge, None if sessions is None else scoped, WORKING_TYPES)
    working = WorkingSet()
    for bucket, items in zip(
        (working.decisions, working.artifacts, working.goals, working.source_anchors, working.tasks, working.blockers),
        merged,
        strict=True,
    ):
        bucket += [
            WorkingItem(text=text, citation=citation, kind=kind, status=status)
            for text, citation, kind, status in items
        ]
    return working


_Item = tuple[str, str, str, str | None]  # (text, citation, kind, status) of a working item
_HEAD = operator.itemgetter(0, 1)  # (valid_from, seq) of a work head
READ_AHEAD = 32  # work candidates read at once by the merged walk
WORK_PREFIX = 256  # work heads kept merged in the tree (the walk stops after tens of them)


def _read_lazily(catalog: EntityCatalog, heads: Iterator[tuple[str, int, str]]) -> Iterator[EntityVersion]:
    """The versions of ``heads`` (``(valid_from, seq, id)``, newest first), read ``READ_AHEAD`` at a time as the
    walk asks for them. The versions a walk read are kept for the next walk (after a change the merged walk runs
    again and reads the same newest candidates): a version's text and properties never change under its id while
    the catalog's base epoch holds (it moves on an erasure, a reset, another process's commit), and a version the
    walk is given is always current (the heads are)."""
    base = cast(SessionEpochs, catalog).epoch[0] if reports_epochs(catalog) else None
    kept = _READ.get(catalog)
    if kept is None or kept[0] != base or len(kept[1]) > READ_KEPT:
        kept = _READ[catalog] = (base, {})
    read = kept[1] if base is not None else {}
    while batch := list(itertools.islice(heads, READ_AHEAD)):
        missing = [head[2] for head in batch if head[2] not in read]
        if missing:
            read.update(catalog.read_versions(missing))
        yield from (read[head[2]] for head in batch if head[2] in read)


READ_KEPT = 2048  # versions kept between walks, per catalog
_READ: weakref.WeakKeyDictionary[EntityCatalog, tuple[object, dict[str, EntityVersion]]] = weakref.WeakKeyDictionary()


def _partials(catalog: EntityCatalog, sessions: list[str]) -> list[_Partial]:
    """The loop of :func:`build_working_set` over each of ``sessions``, reduced to what a merge can need: each
    bucket's first ``PER_KIND`` candidates and the walk's entries. Read for all the sessions at once (one query per
    type: the first whole-memory checkout of a process fills every session's share). The kinds chosen by time alone
    (decisions, files, sessions, documents) are read as ``(id, valid_from, seq, source_path)`` and only their first
    ``PER_KIND`` versions in full (at 1M events decoding every candidate's text was a third of filling the memo);
    facts (goals) are chosen by their properties and read whole; tasks and commands are kept as
    ``(valid_from, seq, id)``, newest first (the order the loop walks them), and read by the merged walk.

    Each of the five parts depends on its own entity types only (:data:`_PARTS`): a part whose types did not change
    in its session since this session's last partial is taken from it (:class:`_Parts`), so a decision appended to
    a session reads that session's decisions again, not its facts, tasks and documents as well (~70 % of the
    working set's cost after such an append at 1,000 sessions)."""
    kept = _Parts.of(catalog)
    epochs = [kept.epochs(catalog, session) for session in sessions]  # read before any part (a racing commit)
    previous = [kept.get(session, epoch) for session, epoch in zip(sessions, epochs, strict=True)]
    due = {part: [s for s, old in zip(sessions, previous, strict=True) if old[part] is None] for part in _PART_NUMBERS}
    heads = {
        kind: catalog.recent_heads_many(due[_PART_OF[kind]], kind, SCAN_PER_TYPE) if due[_PART_OF[kind]] else {}
        for kind in (*_BY_TIME, *_WORK_TYPES)
    }
    whole = {
        kind: catalog.recent_versions_many(due[_PART_OF[kind]], kind, SCAN_PER_TYPE, _GOAL_WORDS)
        if due[_PART_OF[kind]]
        else {}
        for kind in _BY_PROPERTIES
    }
    chosen = {
        session: (
            *(_newest_heads(heads[kind][session]) if session in heads[kind] else [] for kind in ("decision", "file")),
            _newest_heads(heads["session"][session]) if session in heads["session"] else [],
            _newest_heads([h for h in heads["document_chunk"][session] + heads["document"][session] if h[3]])
            if session in heads["document_chunk"]
            else [],
        )
        for session in sessions
    }
    found = catalog.read_versions([version_id for ids in chosen.values() for kind in ids for version_id in kind])

    def read(ids: list[str]) -> list[EntityVersion]:
        return [found[version_id] for version_id in ids if version_id in found]

    partials = []
    for session, epoch, old in zip(sessions, epochs, previous, strict=True):
        partial = tuple(
            part if part is not None else _part(number, session, chosen[session], heads, whole, read)
            for number, part in enumerate(old)
        )
        kept.put(session, epoch, partial)
        partials.append(partial)
    return partials


def _part(
    number: int, session: str, chosen: tuple[list[str], ...], heads: dict[str, dict[str, list]],
    whole: dict[str, dict[str, list[EntityVersion]]], read: Callable[[list[str]], list[EntityVersion]],
) -> tuple:  # fmt: skip
    """Part ``number`` (:data:`_PARTS`) of ``session``'s partial from what :func:`_partials` read."""
    if number == _GOALS:
        return _top(read(chosen[number]) + [v for v in whole["fact"][session] if _is_goal(v.properties_json)])
    if number == _WORK:
        work = sorted(heads["task"][session] + heads["command_run"][session], key=_HEAD_ORDER, reverse=True)
        return tuple(h[1:3] + h[:1] for h in work)
    return _top(read(chosen[number]))


# The entity types each part of a partial reads: decisions, files, goals, source anchors, the work heads.
_PARTS = (("decision",), ("file",), ("session", "fact"), ("document_chunk", "document"), ("task", "command_run"))
_PART_OF = {kind: part for part, types in enumerate(_PARTS) for kind in types}
_PART_NUMBERS = range(len(_PARTS))


class _Parts:
    """Each session's last partial with the epochs of its parts' types (``SessionEpochs.session_epoch`` over each
    :data:`_PARTS` entry) it was read under, per catalog; a catalog without epochs keeps nothing. The partials are
    those the block's memo holds (shared tuples): the epochs are all this adds."""

    LIMIT = 50_000  # sessions (a whole memory of 1M events has ~1,000)

    def __init__(self, catalog: EntityCatalog) -> None:
        self.epochs_of = cast(SessionEpochs, catalog).session_epoch if reports_epochs(catalog) else None
        self.entries: dict[str, tuple[tuple[tuple[int, int], ...], _Partial]] = {}

    @classmethod
    def of(cls, catalog: EntityCatalog) -> _Parts:
        found = _KEPT_PARTS.get(catalog)
        if found is None:
            found = _KEPT_PARTS[catalog] = cls(catalog)
        return found

    def epochs(self, catalog: EntityCatalog, session: str) -> tuple[tuple[int, int], ...] | None:
        epoch_of = self.epochs_of
        return None if epoch_of is None else tuple(epoch_of(session, types) for types in _PARTS)

    def get(self, session: str, epochs: tuple[tuple[int, int], ...] | None) -> tuple[object | None, ...]:
        """The parts of ``session``'s last partial still valid under ``epochs`` (``None``: to read)."""
        entry = self.entries.get(session) if epochs is not None else None
        if entry is None:
            return (None,) * len(_PARTS)
        return tuple(part if old == new else None for old, new, part in zip(entry[0], epochs, entry[1], strict=True))

    def put(self, session: str, epochs: tuple[tuple[int, int], ...] | None, partial: _Partial) -> None:
        if epochs is None:
            return
        if session not in self.entries and len(self.entries) >= self.LIMIT:
            self.entries.pop(next(iter(self.entries)))
        self.entries[session] = (epochs, partial)


_KEPT_PARTS: weakref.WeakKeyDictionary[EntityCatalog, _Parts] = weakref.WeakKeyDictionary()


_BY_TIME = ("decision", "file", "session", "document_chunk", "document")
_BY_PROPERTIES = ("fact",)
_GOAL_WORDS = ('"goal"', '"objective"')  # what _is_goal looks for first: facts without them are not built
_WORK_TYPES = ("task", "command_run")


_HEAD_ORDER = operator.itemgetter(1, 2)  # (valid_from, seq) of a recent head


def _newest_heads(candidates: list[tuple[str, str, int, str | None]]) -> list[str]:
    """Ids of the first ``PER_KIND`` candidates newest first (a stable choice: ties keep the list's order). Goals
    choose among session entities and facts together: a session entity outside its kind's first ``PER_KIND`` is
    behind five others in any merge, so the goal bucket is unchanged."""
    return [head[0] for head in heapq.nlargest(PER_KIND, candidates, key=_HEAD_ORDER)]


def _top(candidates: list[EntityVersion]) -> tuple[_Entry, ...]:
    return tuple(_entry(version) for version in heapq.nlargest(PER_KIND, candidates, key=_NEWEST_FIRST))


def _entry(version: EntityVersion) -> _Entry:
    text = version.summary or version.name
    return version.valid_from, version.source_event_seq, text, version.citation, version.entity_type, None


def _combine(earlier: _Partial, later: _Partial) -> _Partial:
    """The four buckets of two runs of sessions (``earlier`` first) merged: each one's first ``PER_KIND``, ties
    in session order (a stable ``nlargest`` of the concatenation); and their work heads' first ``WORK_PREFIX``
    newest first, ties in session order (a stable sort of two sorted runs: what ``heapq.merge`` of every session
    gives, cut where the walk rarely reaches)."""
    buckets = zip(earlier[:4], later[:4], strict=True)
    work = sorted(earlier[_WORK] + later[_WORK], key=_HEAD, reverse=True)[:WORK_PREFIX]
    tops = (tuple(heapq.nlargest(PER_KIND, first + second, key=_ENTRY_ORDER)) for first, second in buckets)
    return (*tops, tuple(work))


def _work_heads(partials: list[_Partial], root: _Partial | None) -> Iterator[tuple[str, int, str]]:
    """Every session's work heads, newest first (ties in session order): the merge tree's root holds the first
    ``WORK_PREFIX`` of them (after a change only ~log2(sessions) merges of that prefix run again, where merging the
    heads of 1,000 sessions for every walk cost ~7 % of a whole-memory checkout); a walk that goes past them goes on
    in a merge of every session's heads, from the same position."""
    prefix = root[_WORK] if root else ()
    yield from prefix  # type: ignore[misc]
    if len(prefix) >= WORK_PREFIX:  # cut: the rest, if any, from the full merge
        merged = heapq.merge(*(p[_WORK] for p in partials), key=_HEAD, reverse=True)
        yield from itertools.islice(merged, len(prefix), None)  # type: ignore[misc]


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
