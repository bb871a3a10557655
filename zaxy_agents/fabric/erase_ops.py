"""Real forgetting: erase events so their content is unrecoverable from every file and table Zaxy writes.

``erase_events`` (and ``erase_session`` / ``erase_range`` / ``erase_citation`` on top of it; the CLI's
``zaxy memory erase``, the MCP admin tool ``memory_erase``, LangGraph's ``delete_thread`` and the LangGraph store's
deletes through ``erase_store_items``) does, in order:

1. reads the target events as they are (their pre-erasure envelopes, which derived stores use to remove their
   rows precisely);
2. appends an ``eventloom.erased`` record to the same session: which ranges, with the hashes around them, who
   (``actor``) and when (its timestamp), an optional ``reason`` -- never the content. Every other process learns
   of the erasure from it (their derived state erases itself when catch-up meets it);
3. scrubs the log (:mod:`zaxy_agents.eventloom.erasure`: the chain still verifies);
4. erases derived state here: the projection's catalog, indexes and graph (``Projector.erase``, which rewrites
   its files so no freed page keeps the bytes), the working-set fold cache, and the embedding cache; then every
   derived store open in this process that registered with :meth:`EraseService.on_erase` (the LangGraph item
   store's SQLite file, checkpoint thread views) drops what it holds. Stores in other processes do the same when
   their catch-up meets the record.

A crash after step 2 leaves a record whose events still hold content: ``zaxy repair`` (or the same erase again)
finishes it. Erasure records, repair records and torn-tail records hold no content and are never erased.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from zaxy_agents.errors import IntegrityError, InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.erasure import (
    ERASURE_TYPE,
    MAX_REASON_CHARS,
    RESERVED_TYPES,
    erasure_payload,
    erasure_ranges,
    is_erased,
    pending_erasures,
)
from zaxy_agents.eventloom.integrity import decode_line, repair_hint
from zaxy_agents.eventloom.validation import validate_actor, validate_session_id
from zaxy_agents.workingset.cache import cache_path

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from .projection_ops import ProjectionService
    from .workingset_ops import WorkingSetService

# locator(session, keys) -> (seqs, through) or None (see EraseService.on_locate)
Locator = Callable[[str, list[tuple[tuple[str, ...], str]]], tuple[list[int], int] | None]


class EraseService(FabricService):
    """Service: erasure for :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def __init__(self, core: FabricCore, projection: ProjectionService, working_sets: WorkingSetService) -> None:
        """``working_sets``: its in-process fold memo holds content of the session and must forget it."""
        super().__init__(core)
        self.projection = projection
        self.working_sets = working_sets

    def erase_events(
        self,
        session: str,
        seqs: list[int],
        *,
        actor: str = "zaxy",
        reason: str | None = None,
        whole_session: bool = False,
    ) -> dict[str, Any]:
        """Erase the content of events ``seqs`` of ``session`` (see the module docstring); returns a report:
        ``erased`` (how many), ``ranges``, ``record`` (the erasure record's citation), ``already_erased`` and
        ``kept`` (records, which hold no content). ``whole_session`` also deletes the session's torn-tail and
        repair sidecars (bytes that never became events but may hold content)."""
        validate_session_id(session)
        validate_actor(actor)
        if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_REASON_CHARS):
            raise InvalidRequestError(
                f"reason must be a string of at most {MAX_REASON_CHARS} characters",
                field="reason",
                remediation="Say why without repeating the erased content (it is recorded).",
            )
        head = self.log.head(session)
        if head is None:
            raise NotFoundError(f"no session {session!r}", field="session", remediation="See `zaxy sessions`.")
        wanted = sorted(set(seqs))
        if not wanted or wanted[0] < 1 or wanted[-1] > head.seq:
            raise InvalidRequestError(
                f"seqs must lie between 1 and {head.seq} (the session's last event)",
                field="seqs",
                remediation="Pick events from `zaxy replay --session-id <session>`.",
            )
        found = self.log.lines_at(
            [(session, seq) for seq in wanted] + [(session, seq - 1) for seq in wanted if seq > 1]
        )
        targets, already, kept, unreadable = {}, [], [], []
        for seq in wanted:
            envelope = None if (session, seq) not in found else decode_line(found[(session, seq)])
            if envelope is None:
                unreadable.append(seq)
            elif is_erased(envelope):
                already.append(seq)
            elif envelope.get("type") in RESERVED_TYPES:
                kept.append(seq)
            else:
                targets[seq] = envelope
        report: dict[str, Any] = {
            "session": session,
            "erased": 0,
            "ranges": [],
            "already_erased": already,
            "kept": kept,
            "unreadable": unreadable,
        }
        if targets:
            before = {}
            for seq in targets:
                previous = decode_line(found.get((session, seq - 1), b"")) if seq > 1 else None
                before[seq] = str((previous or {}).get("hash") or "")
            sizes = {seq: len(found[(session, seq)]) for seq in targets}  # forms that fit in place (log scrub)
            ranges = erasure_ranges(targets, before, sizes, head.seq + 1)
            record = self.log.append(session, ERASURE_TYPE, erasure_payload(ranges, reason), actor=actor)
            report["erased"] = self.log.scrub(session, sorted(targets), record.seq, whole_session=whole_session)
            report["ranges"] = _contiguous(ranges)
            report["record"] = record.citation
        self._erase_derived(session, sorted(targets), targets)
        return report

    def erase_session(self, session: str, *, actor: str = "zaxy", reason: str | None = None) -> dict[str, Any]:
        """Erase every event of ``session`` (what LangGraph's ``delete_thread`` calls): the log keeps only seqs,
        hashes, types and times, plus the erasure record; later appends continue the same chain."""
        validate_session_id(session)
        head = self.log.head(session)
        if head is None:
            raise NotFoundError(f"no session {session!r}", field="session", remediation="See `zaxy sessions`.")
        return self.erase_events(session, list(range(1, head.seq + 1)), actor=actor, reason=reason, whole_session=True)

    def erase_range(
        self, session: str, from_seq: int, to_seq: int, *, actor: str = "zaxy", reason: str | None = None
    ) -> dict[str, Any]:
        """Erase events ``from_seq..to_seq`` (inclusive) of ``session``."""
        if not isinstance(from_seq, int) or not isinstance(to_seq, int) or not 1 <= from_seq <= to_seq:
            raise InvalidRequestError(
                f"need 1 <= from_seq <= to_seq, got {from_seq!r}..{to_seq!r}",
                field="from_seq",
                remediation="Pass the first and last seq to erase.",
            )
        return self.erase_events(session, list(range(from_seq, to_seq + 1)), actor=actor, reason=reason)

    def erase_citation(self, citation: str, *, actor: str = "zaxy", reason: str | None = None) -> dict[str, Any]:
        """Erase the event a citation names (refused when the log holds another event at that seq)."""
        parsed = parse_citation(citation)
        line = self.log.lines_at([(parsed.session, parsed.seq)]).get((parsed.session, parsed.seq))
        envelope = decode_line(line) if line is not None else None
        if envelope is None or not str(envelope.get("hash") or "").startswith(parsed.hash_prefix):
            raise NotFoundError(
                f"citation {citation} does not name an event of this log",
                field="citation",
                remediation="Use a citation exactly as a checkout or query returned it.",
            )
        return self.erase_events(parsed.session, [parsed.seq], actor=actor, reason=reason)

    def erase_store_items(
        self,
        session: str,
        keys: Iterable[tuple[Iterable[str], str]],
        *,
        actor: str = "langgraph",
        reason: str | None = "store.delete",
        through_seq: int | None = None,
    ) -> dict[str, Any] | None:
        """Erase every ``store.item.*`` event (all versions: puts, chunks, TTL touches, the delete itself) that
        names one of ``keys`` (``(namespace, key)``) in the item-store ``session``, up to ``through_seq`` (default:
        its current head; a TTL sweep passes its last delete, so a put of the same key made since survives); what
        the LangGraph store's ``delete`` and TTL sweep call. None when no live event names them."""
        try:
            wanted = {(tuple(namespace), str(key)) for namespace, key in keys}
        except (TypeError, ValueError):  # not (namespace, key) pairs: a structured error, not a traceback
            raise InvalidRequestError(
                "keys must be (namespace, key) pairs",
                field="keys",
                remediation="Pass e.g. [(('users', 'u1'), 'prefs')].",
            ) from None
        head = self.log.head(session)
        if not wanted or head is None:
            return None
        last = head.seq if through_seq is None else min(through_seq, head.seq)
        seqs = self._store_item_seqs(session, wanted, last)
        if not seqs:
            return None
        return self.erase_events(session, seqs, actor=actor, reason=reason)

    def on_locate(self, locator: Locator) -> None:
        """Register ``locator(session, keys)``: an item store open in this process that indexes which events name
        a key answers ``(seqs, through)`` (or ``None``), so :meth:`erase_store_items` reads those events and the
        log after ``through`` instead of the whole session (see :mod:`zaxy_agents.itemstore.versions`)."""
        self.core.erase_locators.append(locator)

    def on_erase(self, hook: Callable[[str], None]) -> None:
        """Register ``hook(session)``, called after an erasure in ``session`` scrubbed the log: a derived store
        open in this process drops what it holds at once (see the module docstring)."""
        self.core.erase_hooks.append(hook)

    def finish_erasures(self, session: str) -> int:
        """Finish erasures a crash interrupted (a record whose events still hold content); returns how many events
        were scrubbed. ``zaxy repair`` calls it for every session."""
        records, live = [], set()
        for envelope in self.log.replay_envelopes(session):
            if envelope.get("type") == ERASURE_TYPE:
                records.append(envelope)
            elif not is_erased(envelope):
                live.add(envelope["seq"])
        pending = pending_erasures(records, live)
        if not pending:
            return 0
        scrubbed = 0
        for record_seq in sorted(set(pending.values())):
            seqs = [seq for seq, record in pending.items() if record == record_seq]
            found = self.log.lines_at([(session, seq) for seq in seqs])
            envelopes = {seq: decode_line(found[(session, seq)]) for seq in seqs if (session, seq) in found}
            scrubbed += self.log.scrub(session, seqs, record_seq)
            self._erase_derived(session, seqs, envelopes)
        return scrubbed

    # ------------------------------------------------------------------ internals
    def _store_item_seqs(self, session: str, wanted: set[tuple[tuple[str, ...], str]], last: int) -> list[int]:
        """The seqs up to ``last`` of the live ``store.item.*`` events naming one of ``wanted``.

        With a locator's answer: its seqs up to ``last``, each re-read and kept only when its line really names a
        wanted key (an edited line naming it too: its content goes; a line that is not an event there raises, as the
        replay did), plus a replay of the events after the locator's position (appended since, by any process).
        Without one, or when the log lacks a listed seq: a replay of the whole session."""
        located = None
        for locator in list(self.core.erase_locators):
            located = locator(session, sorted(wanted))
            if located is not None:
                break
        if located is None:
            return self._scan_store_items(session, wanted, 1, last)
        candidates, through = located
        listed = [seq for seq in candidates if seq <= last]
        found = self.log.lines_at([(session, seq) for seq in listed])
        if len(found) < len(listed):  # the index names events the log does not have: trust only the log
            return self._scan_store_items(session, wanted, 1, last)
        seqs = []
        for seq in listed:
            envelope = decode_line(found[(session, seq)])
            if envelope is None or envelope.get("seq") != seq:  # what the replay it replaces raised on
                raise IntegrityError(
                    f"session {session!r} is damaged at event {seq}: the line there is not an event envelope",
                    field="session",
                    remediation=repair_hint(session),
                    details={"session": session, "seq": seq},
                )
            if _names_wanted(envelope, wanted):  # kept even when its bytes no longer match its hash: its content goes
                seqs.append(seq)
        if through < last:
            seqs.extend(self._scan_store_items(session, wanted, max(through, 0) + 1, last))
        return sorted(set(seqs))

    def _scan_store_items(
        self, session: str, wanted: set[tuple[tuple[str, ...], str]], first: int, last: int
    ) -> list[int]:
        return [
            envelope["seq"]
            for envelope in self.log.replay_envelopes(session, first, last)
            if _names_wanted(envelope, wanted)
        ]

    def _erase_derived(self, session: str, seqs: list[int], envelopes: dict[int, Any]) -> None:
        """Every local derived file that may hold content of the erased events loses it now (other processes'
        derived state erases itself when its catch-up meets the record)."""
        self.working_sets.forget_folds(session)
        self.evidence_check.forget(session, seqs)  # evidence citing an erased event no longer resolves
        eventloom_dir = self.settings.eventloom_dir
        for path in (cache_path(eventloom_dir, session),):
            if os.path.exists(path):
                os.unlink(path)
        if seqs:
            # The embedding cache holds vectors of item-store texts only: dropped when item events are erased (or
            # when the erased events' types are unknown), so other erasures do not cost a re-embedding.
            if len(envelopes) < len(seqs) or any(
                str((envelopes[seq] or {}).get("type", "")).startswith(_STORE_ITEM_PREFIX) for seq in envelopes
            ):
                shutil.rmtree(self.settings.derived_path / "embeddings", ignore_errors=True)
            self.projection.projector.erase(session, seqs, envelopes)
            # Stored latest checkpoints of the thread (any saver of this deployment wrote them): gone now.
            checkpoints = self.backend.derived_path / "checkpoints"
            if checkpoints.is_dir() and any(checkpoints.glob("*.latest.sqlite3")):  # (checkpoints.latest.SUFFIX)
                from zaxy_agents.checkpoints.latest import forget_everywhere  # imports langgraph: only when used

                forget_everywhere(checkpoints, session)
            for hook in list(self.core.erase_hooks):
                hook(session)


def _contiguous(ranges: list[dict[str, Any]]) -> list[dict[str, int]]:
    """The record's ranges as the report shows them: contiguous runs of erased seqs (the record splits a run where
    the erased form changes, which the verifier needs and a reader of the report does not)."""
    runs: list[dict[str, int]] = []
    for item in ranges:
        if runs and runs[-1]["to_seq"] == item["from_seq"] - 1:
            runs[-1]["to_seq"] = item["to_seq"]
        else:
            runs.append({"from_seq": item["from_seq"], "to_seq": item["to_seq"]})
    return runs


def _names_wanted(envelope: dict[str, Any], wanted: set[tuple[tuple[str, ...], str]]) -> bool:
    """A live ``store.item.*`` event whose payload names one of ``wanted`` (``(namespace, key)``)."""
    if not str(envelope.get("type", "")).startswith(_STORE_ITEM_PREFIX) or is_erased(envelope):
        return False
    payload = envelope.get("payload") or {}
    namespace, key = payload.get("namespace"), payload.get("key")
    return isinstance(namespace, list) and (tuple(namespace), str(key)) in wanted


# store.item.put / .chunk / .touched / .deleted (zaxy_agents.itemstore.events; not imported: numpy + langgraph)
_STORE_ITEM_PREFIX = "store.item."
