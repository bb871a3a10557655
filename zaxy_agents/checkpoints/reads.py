"""Reading checkpoints: ``get_tuple``, ``list`` and the DeltaChannel ancestor walk."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple, DeltaChannelHistory, PendingWrite
from langgraph.checkpoint.serde.base import SerializerProtocol

from . import latest as latest_copies
from .latest import LatestCheckpoints
from .state import CheckpointRecord, ThreadState, WriteRecord
from .views import ThreadView, ThreadViews, record_body, record_metadata, record_versions


class CheckpointReads:
    views: ThreadViews
    latest: LatestCheckpoints | None

    def get_tuple(self, config: dict[str, Any], serde: SerializerProtocol) -> CheckpointTuple | None:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        with self.views.lock:
            session = self.views.session(thread_id)
            cold = not self.views.loaded(session)
            if cold and not configurable.get("checkpoint_id") and self.latest is not None:
                self.views.check_open()
                stored = self.latest.read(session, ns, thread_id, serde)
                if stored is not None:  # the thread's head is still the event the copy was built at
                    self.views.served(session, ns, stored.config["configurable"]["checkpoint_id"])
                    return stored
            view = self.views.view(thread_id)
            record = view.state.record(ns, configurable.get("checkpoint_id"))
            if record is None:
                return None
            if not configurable.get("checkpoint_id"):
                view.observed[ns] = record.id  # the latest, as a run starting on this thread sees it
            built = build_tuple(view.state, thread_id, record, serde)
            if cold and self.latest is not None and view.follower.applied_seq >= latest_copies.MIN_EVENTS:
                self.store_latest(session, serde)  # the next cold read of this long thread reads one row
            return built

    def store_latest(self, session: str, serde: SerializerProtocol) -> None:
        """Store the latest checkpoint of every namespace of ``session``'s view (caller holds the lock) when the
        thread is long and the view is exactly at the log's head; a copy already at that head is kept."""
        assert self.latest is not None
        view = self.views.peek(session)
        if view is None or view.follower.applied_seq < latest_copies.MIN_EVENTS:
            return
        head = self.views.log.head(session)
        if head is None or head.seq != view.follower.applied_seq:
            return  # another writer appended meanwhile: the view is not the head's state
        if self.latest.stored_head(session) == (head.seq, head.hash):
            return
        thread_id = _thread_id(view, {})
        latest = [
            build_tuple(view.state, thread_id, space.records[space.ids[-1]], serde)
            for space in view.state.namespaces.values()
            if space.ids
        ]
        if latest:
            self.latest.write(session, (head.seq, head.hash), latest, serde)
        else:
            self.latest.forget(session)

    def list(
        self,
        config: dict[str, Any] | None,
        serde: SerializerProtocol,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Newest first (by checkpoint id). Tuples are built one at a time, so breaking early decodes little."""
        configurable = (config or {}).get("configurable", {})
        ns = configurable.get("checkpoint_ns")
        only_id = configurable.get("checkpoint_id")
        before_id = (before or {}).get("configurable", {}).get("checkpoint_id")
        if not config and self.views.index is not None:
            yield from self._list_indexed(serde, before_id, filter, limit)
            return
        with self.views.lock:
            views = [self.views.view(configurable["thread_id"])] if config else list(self.views.all_views())
            chosen: list[tuple[str, ThreadView, CheckpointRecord]] = []
            for view in views:
                for record in view.state.records(ns):
                    if (only_id and record.id != only_id) or (before_id and record.id >= before_id):
                        continue
                    if filter and not _metadata_matches(record, filter, serde):
                        continue
                    chosen.append((record.id, view, record))
        chosen.sort(key=lambda entry: entry[0], reverse=True)
        if limit is not None:
            chosen = chosen[: max(limit, 0)]
        for _id, view, record in chosen:
            with self.views.lock:
                live = view.state.record(record.ns, record.id) is record
                built = build_tuple(view.state, _thread_id(view, configurable), record, serde) if live else None
            if built is not None:
                yield built

    def _list_indexed(
        self,
        serde: SerializerProtocol,
        before_id: str | None,
        filter: dict[str, Any] | None,
        limit: int | None,
    ) -> Iterator[CheckpointTuple]:
        """``list(None, ...)`` in the index's order (the same as sorting every thread's checkpoints by id): only
        the threads of the checkpoints returned are loaded, and none past ``limit``."""
        assert self.views.index is not None
        if limit is not None and limit <= 0:
            return
        remaining = limit if limit is not None else -1
        with self.views.lock:
            self.views.check_open()
            candidates = self.views.index.newest(before_id=before_id)
        for batch in _batches(candidates, remaining if remaining > 0 else _PRELOAD_BATCH):
            tokens = self.views.index.seen_tokens  # as the refresh (run by the first row) read them
            with self.views.lock:  # the threads of this batch in one read (PostgreSQL: one query)
                preloaded = self.views.preload({session: tokens.get(session) for session, _ns, _id in batch})
                built_batch = []
                try:
                    for session, record_ns, checkpoint_id in batch:
                        view = self.views.view_of_session(session)
                        record = view.state.record(record_ns, checkpoint_id)
                        if record is None or (filter and not _metadata_matches(record, filter, serde)):
                            continue  # deleted since the index was read, or filtered out
                        built_batch.append(build_tuple(view.state, _thread_id(view, {}), record, serde))
                        if len(built_batch) == remaining:
                            break
                finally:
                    self.views.settle(preloaded)
            for built in built_batch:
                yield built
                remaining -= 1
                if remaining == 0:
                    return

    def delta_channel_history(
        self, config: dict[str, Any], channels: Sequence[str], serde: SerializerProtocol
    ) -> dict[str, DeltaChannelHistory]:
        """InMemorySaver's single walk up the parent chain, without decoding channels nobody asked for."""
        if not channels:
            return {}
        configurable = config["configurable"]
        ns = configurable.get("checkpoint_ns", "")
        collected: dict[str, list[PendingWrite]] = {channel: [] for channel in channels}
        seeds: dict[str, Any] = {}
        remaining = set(channels)
        with self.views.lock:
            state = self.views.view(configurable["thread_id"]).state
            target = state.record(ns, configurable.get("checkpoint_id"))
            space = state.namespaces.get(ns)
            cursor = target.parent_id if target is not None else None
            while cursor is not None and remaining and space is not None:
                record = space.records.get(cursor)
                if record is None:
                    break
                versions = record_versions(record, serde)
                terminated = {}
                for channel in remaining:
                    ref = state.blob_for(ns, channel, versions[channel]) if channel in versions else None
                    if ref is not None:
                        terminated[channel] = state.blobs.value(ref, serde)
                for write in reversed(state.pending_writes(ns, record.id)):
                    if write.channel in remaining:
                        collected[write.channel].append(decode_write(state, write, serde))
                for channel, value in terminated.items():
                    seeds[channel] = value
                    remaining.discard(channel)
                cursor = record.parent_id
        result: dict[str, DeltaChannelHistory] = {}
        for channel in channels:
            entry: DeltaChannelHistory = {"writes": list(reversed(collected[channel]))}
            if channel in seeds:
                entry["seed"] = seeds[channel]
            result[channel] = entry
        return result


_PRELOAD_BATCH = 16  # candidates whose threads are read together when the listing has no limit


def _batches(rows: Iterator[tuple[str, str, str]], size: int) -> Iterator[list[tuple[str, str, str]]]:
    """``rows`` in lists of ``size`` (the last may be shorter)."""
    batch: list[tuple[str, str, str]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def build_tuple(
    state: ThreadState, thread_id: str, record: CheckpointRecord, serde: SerializerProtocol
) -> CheckpointTuple:
    body = record_body(record, serde)
    values = {}
    for channel, version in body.get("channel_versions", {}).items():
        ref = state.blob_for(record.ns, channel, version)
        if ref is not None:
            values[channel] = state.blobs.value(ref, serde)
    body["channel_values"] = values
    ids = {"thread_id": thread_id, "checkpoint_ns": record.ns}
    return CheckpointTuple(
        config={"configurable": {**ids, "checkpoint_id": record.id}},
        checkpoint=body,  # type: ignore[arg-type]
        metadata=record_metadata(record, serde),  # type: ignore[arg-type]
        parent_config={"configurable": {**ids, "checkpoint_id": record.parent_id}} if record.parent_id else None,
        pending_writes=[decode_write(state, write, serde) for write in state.pending_writes(record.ns, record.id)],
    )


def decode_write(state: ThreadState, write: WriteRecord, serde: SerializerProtocol) -> PendingWrite:
    if write.blob is not None:
        return (write.task_id, write.channel, state.blobs.value(write.blob, serde))
    return (write.task_id, write.channel, serde.loads_typed((write.kind, write.data)))


def _metadata_matches(record: CheckpointRecord, filter: dict[str, Any], serde: SerializerProtocol) -> bool:
    metadata = record.metadata if record.metadata is not None else record_metadata(record, serde)
    return all(metadata.get(key) == value for key, value in filter.items())


def _thread_id(view: ThreadView, configurable: dict[str, Any]) -> str:
    if "thread_id" in configurable:
        return str(configurable["thread_id"])
    return view.state.thread_id if view.state.thread_id is not None else view.state.session
