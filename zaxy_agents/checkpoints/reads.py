"""Reading checkpoints: ``get_tuple``, ``list`` and the DeltaChannel ancestor walk."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple, DeltaChannelHistory, PendingWrite
from langgraph.checkpoint.serde.base import SerializerProtocol

from .state import CheckpointRecord, ThreadState, WriteRecord
from .views import ThreadView, ThreadViews, record_body, record_metadata, record_versions


class CheckpointReads:
    views: ThreadViews

    def get_tuple(self, config: dict[str, Any], serde: SerializerProtocol) -> CheckpointTuple | None:
        configurable = config["configurable"]
        with self.views.lock:
            view = self.views.view(configurable["thread_id"])
            ns = configurable.get("checkpoint_ns", "")
            record = view.state.record(ns, configurable.get("checkpoint_id"))
            if record is None:
                return None
            if not configurable.get("checkpoint_id"):
                view.observed[ns] = record.id  # the latest, as a run starting on this thread sees it
            return build_tuple(view.state, str(configurable["thread_id"]), record, serde)

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
        for session, record_ns, checkpoint_id in candidates:
            with self.views.lock:
                view = self.views.view_of_session(session)
                record = view.state.record(record_ns, checkpoint_id)
                if record is None or (filter and not _metadata_matches(record, filter, serde)):
                    continue  # deleted since the index was read, or filtered out
                built = build_tuple(view.state, _thread_id(view, {}), record, serde)
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
