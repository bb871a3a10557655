"""Bring one session of a shared graph store up to a cursor, starting from the store's own cursor.

Used when a worker's batch does not line up with what the store holds (another worker wrote part of it, or
this worker's memory started ahead of the store): the rows for the missing events are planned afresh by a
planner restored from the store's state for that session (its identities and sources) and written behind
the same per-session guard as every batch. The planner is deterministic and every row of a session depends
only on that session's state, so these rows are exactly the ones any other worker would write.
"""

from __future__ import annotations

from zaxy_agents.eventloom.protocol import EventLog

from .planner import ProjectionPlanner
from .protocol import ProjectionStore
from .registry import ExtractorTable

WRITTEN = "written"
MAX_ROUNDS = 50  # each round starts from a cursor another worker moved; they only ever move forward


def catch_up_session(
    store: ProjectionStore, log: EventLog, extractors: ExtractorTable, session: str, target_seq: int, batch_events: int
) -> str | None:
    """Make the store hold ``session`` at least up to ``target_seq``; returns a mismatch reason, or ``None``."""
    for _ in range(MAX_ROUNDS):
        state = store.session_state(session)
        cursor = state.cursor
        if cursor is not None and cursor[0] >= target_seq:
            return None
        if cursor is not None:
            found = next(iter(log.replay_envelopes(session, cursor[0], cursor[0])), None)
            if found is None or found["hash"] != cursor[1]:
                return f"the graph store's cursor for {session!r} (seq {cursor[0]}) does not match the log"
        planner = ProjectionPlanner()
        planner.restore(state.keys, set(), {session} if cursor is not None else set(), state.sources)
        if _plan_and_write(
            store, log, extractors, planner, session, (cursor[0] if cursor else 0) + 1, target_seq, batch_events
        ):
            return None
    return f"the graph store's cursor for {session!r} kept moving; it will be caught up on a later batch"


def _plan_and_write(
    store: ProjectionStore,
    log: EventLog,
    extractors: ExtractorTable,
    planner: ProjectionPlanner,
    session: str,
    from_seq: int,
    to_seq: int,
    batch_events: int,
) -> bool:
    """Plan and write ``from_seq..to_seq``; False as soon as another worker moved the cursor first."""
    for envelope in log.replay_envelopes(session, from_seq, to_seq):
        planner.add(envelope, extractors.extract(envelope))
        if (
            planner.pending_events() >= batch_events
            and (store.apply(planner.take_batch()) or {}).get(session) != WRITTEN
        ):
            return False
    batch = planner.take_batch()
    return not batch.event_count or (store.apply(batch) or {}).get(session) == WRITTEN
