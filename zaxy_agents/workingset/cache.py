"""Fold a session's whole log into its standing state incrementally, through a small derived-state cache.

A session start must show the open tasks, decisions and facts of the session however long its log is (a
decision followed by 20,000 ``Read`` calls is still a standing decision), without reading 20,000 events on
every start. :func:`fold_session` keeps the :class:`~.digest.StandingFold` of each session in
``<eventloom>/.zaxy/workingset/<session>.json``: plain JSON (never code), versioned, and tied to the log by
the ``(seq, hash)`` of the last event it covers. A cache whose version, session or covered event does not
match the log is ignored and the fold restarts from seq 1, so a replaced, truncated or edited log can never
be served from stale state. Then only events after the covered one are read (and only the event types the
fold uses are decoded). The recent sections (files, commands, prompts, replies) are always read from the last
``window`` events.

Cost: the first fold of a session reads its log once; afterwards each fold reads only what was appended
since the previous one. Stdlib only (the SessionStart hook runs it).
"""

from __future__ import annotations

import json
import os

from zaxy_agents.config import DERIVED_DIR_NAME

from .digest import DEFAULT_WINDOW, RecentFold, StandingFold

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

CACHE_DIR_NAME = "workingset"


def cache_path(eventloom_dir: str, session: str) -> str:
    return os.path.join(eventloom_dir, DERIVED_DIR_NAME, CACHE_DIR_NAME, f"{session}.json")


def load_fold(eventloom_dir: str | None, session: str) -> StandingFold | None:
    """The cached fold of ``session``, or ``None`` (absent, unreadable, another version: all mean rebuild)."""
    if not eventloom_dir:
        return None
    try:
        with open(cache_path(eventloom_dir, session), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return StandingFold.from_json(data, session)


def save_fold(eventloom_dir: str, fold: StandingFold) -> None:
    """Write the cache atomically (temporary file + rename); best effort: a failure only costs a refold."""
    path = cache_path(eventloom_dir, fold.session)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(fold.to_json(), handle, ensure_ascii=False, separators=(",", ":"))
        os.replace(temporary, path)
    except OSError:
        pass


class FoldSource:
    """How :func:`fold_session` reads one session (implemented over a JSONL file, PostgreSQL or an EventLog).

    ``head()``: ``(seq, hash)`` of the last event or ``None``; ``hash_at(seq)``: the hash of event ``seq`` or
    ``None``; ``envelopes(from_seq, to_seq)``: the events in that range in order (a reader may leave out
    events whose type the folds do not read and that carry no ``supersedes``).
    """

    def __init__(
        self,
        head: Callable[[], tuple[int, str] | None],
        hash_at: Callable[[int], str | None],
        envelopes: Callable[[int, int], Iterable[dict[str, Any]]],
    ) -> None:
        self.head, self.hash_at, self.envelopes = head, hash_at, envelopes


class SessionFold:
    """The folds of one session and where they stand."""

    __slots__ = ("head", "recent", "session", "standing", "window_from_seq")

    def __init__(
        self, session: str, standing: StandingFold, recent: RecentFold, head: tuple[int, str] | None, window_from: int
    ) -> None:
        self.session, self.standing, self.recent, self.head, self.window_from_seq = (
            session,
            standing,
            recent,
            head,
            window_from,
        )


def fold_session(
    session: str,
    source: FoldSource,
    *,
    window: int = DEFAULT_WINDOW,
    cache_dir: str | None = None,
    persist: bool = True,
    memo: dict[str, StandingFold] | None = None,
) -> SessionFold:
    """Standing state over the whole log (from the cache when it still matches) plus the recent window.

    ``memo``: an in-process cache (session -> fold) checked before the file, and updated; long-lived
    processes (the MCP server) then read only new events, whatever the backend.
    """
    head = source.head()
    if head is None:
        return SessionFold(session, StandingFold(session), RecentFold(), None, 1)
    head_seq = head[0]
    standing = memo.get(session) if memo is not None else None
    if standing is None:
        standing = load_fold(cache_dir, session)
    if standing is not None and (
        standing.covered_seq > head_seq
        or (standing.covered_seq and source.hash_at(standing.covered_seq) != standing.covered_hash)
    ):
        standing = None  # the log no longer holds what the cache was derived from: refold from the start
    standing = standing or StandingFold(session)
    covered = standing.covered_seq
    window_from = max(1, head_seq - max(1, window) + 1)
    recent = RecentFold()
    start = min(covered + 1, window_from)
    for envelope in source.envelopes(start, head_seq):
        envelope = envelope if envelope.get("session") else {**envelope, "session": session}
        seq = int(envelope["seq"])
        if covered and seq > covered and _erases_before(envelope, covered + 1):
            # Events this cached state was folded from were erased: fold the (scrubbed) log again from the
            # start, so no erased content survives in the cache or in what is served from it.
            if memo is not None:
                memo.pop(session, None)
            return fold_session(session, _Uncached(source), window=window, cache_dir=cache_dir, persist=persist)
        if seq > covered:
            standing.feed(envelope)
        if seq >= window_from:
            recent.feed(envelope)
    recent.first_seq = window_from
    if standing.covered_seq != head_seq:  # the last event was not one the reader decoded
        standing.covered_seq, standing.covered_hash = head
    if persist and cache_dir and standing.covered_seq != covered:
        save_fold(cache_dir, standing)
    if memo is not None:
        memo[session] = standing
    return SessionFold(session, standing, recent, head, window_from)


ERASURE_TYPE = "eventloom.erased"


def _erases_before(envelope: dict[str, Any], seq: int) -> bool:
    """Whether ``envelope`` is an erasure record covering an event before ``seq``."""
    if envelope.get("type") != ERASURE_TYPE:
        return False
    ranges = (envelope.get("payload") or {}).get("ranges")
    return any(isinstance(r, dict) and isinstance(r.get("from_seq"), int) and r["from_seq"] < seq for r in ranges or ())


class _Uncached(FoldSource):
    """``source`` for a refold from seq 1: a head that makes any cached fold look stale."""

    def __init__(self, source: FoldSource) -> None:
        super().__init__(source.head, lambda _seq: None, source.envelopes)
