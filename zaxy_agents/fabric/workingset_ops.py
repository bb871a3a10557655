"""Fabric operations for the working set: "where was I" digests and the packets injected into IDE sessions.

The digest is a pure function of the log: standing state (open tasks, user instructions, decisions, facts,
unknowns) is folded over the whole log incrementally through a small cache tied to the log's head
(:mod:`zaxy_agents.workingset.cache`), recent sections over the last
:data:`~zaxy_agents.workingset.DEFAULT_WINDOW` events. Backend-agnostic: it reads through the ``EventLog``
protocol.
"""

from __future__ import annotations

import threading
from typing import Any

from zaxy_agents.errors import NotFoundError
from zaxy_agents.workingset import DEFAULT_MAX_CHARS, DEFAULT_WINDOW, Packet, WorkingSet, render_packet
from zaxy_agents.workingset.cache import FoldSource, fold_session
from zaxy_agents.workingset.digest import merge
from zaxy_agents.workingset.verified import verified

from .service import FabricCore, FabricService


class WorkingSetService(FabricService):
    """Service: the working-set part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def __init__(self, core: FabricCore) -> None:
        super().__init__(core)
        self._standing_folds: dict[str, Any] = {}  # per-session standing folds, in this process
        self._fold_lock = threading.Lock()

    def forget_folds(self, session: str) -> None:
        """Drop the in-process fold of ``session`` (an erasure: it may hold erased content)."""
        self._standing_folds.pop(session, None)

    def working_set(
        self,
        session: str,
        *,
        window: int = DEFAULT_WINDOW,
        limits: dict[str, int] | None = None,
        sessions: list[str] | None = None,
    ) -> WorkingSet:
        """Open tasks, user instructions, decisions, facts and unknowns over the whole log; files, commands,
        prompts and replies of the last ``window`` events. ``sessions``: other sessions merged in (each item
        cites its own session)."""
        if window < 1:
            from zaxy_agents.errors import InvalidRequestError

            raise InvalidRequestError(
                f"window must be >= 1, got {window}", field="window", remediation="Use a positive event count."
            )
        if not self.log.has_session(session):
            raise NotFoundError(
                f"no session {session!r}", field="session", remediation="List sessions with `zaxy sessions`."
            )
        folds = []
        for name in [session, *[other for other in sessions or () if other != session]]:
            if name != session and not self.log.has_session(name):
                continue
            with self._fold_lock:
                folds.append(
                    fold_session(
                        name,
                        self._fold_source(name),
                        window=window,
                        cache_dir=self._fold_cache_dir(),
                        memo=self._standing_folds,
                    )
                )
        own = folds[0]
        if own.head is None:
            return WorkingSet(session)
        head = self.log.head(session)
        working = merge(
            session,
            [fold.standing for fold in folds],
            [fold.recent for fold in folds],
            limits=limits,
            head_seq=own.head[0],
            head_citation=head.citation if head is not None else None,
            window_from_seq=own.window_from_seq,
        )
        return verified(working, self.log.lines_at)

    def _fold_cache_dir(self) -> str | None:
        """Where the backend shares log-derived caches between processes (files: beside the logs; else memory)."""
        return self.backend.cache_root

    def _fold_source(self, session: str) -> FoldSource:
        log = self.log

        def head() -> tuple[int, str] | None:
            found = log.head(session)
            return None if found is None else (found.seq, found.hash)

        def hash_at(seq: int) -> str | None:
            for envelope in log.replay_envelopes(session, seq, seq):
                return str(envelope["hash"])
            return None

        def envelopes(start: int, end: int) -> Any:
            return (e for e in log.replay_envelopes(session, start, end) if "erased" not in e)

        return FoldSource(head, hash_at, envelopes)

    def recovery_packet(
        self,
        session: str,
        max_chars: int = DEFAULT_MAX_CHARS,
        *,
        window: int = DEFAULT_WINDOW,
        sessions: list[str] | None = None,
    ) -> Packet:
        """The packet injected after a context compaction (every line cited; at most ``max_chars``)."""
        return render_packet(self.working_set(session, window=window, sessions=sessions), "recovery", max_chars)

    def bootstrap_packet(
        self,
        session: str,
        max_chars: int = DEFAULT_MAX_CHARS,
        *,
        window: int = DEFAULT_WINDOW,
        sessions: list[str] | None = None,
    ) -> Packet:
        """The packet injected when a session starts or resumes (every line cited; at most ``max_chars``)."""
        return render_packet(self.working_set(session, window=window, sessions=sessions), "bootstrap", max_chars)
