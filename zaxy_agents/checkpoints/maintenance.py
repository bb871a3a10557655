"""Deleting, pruning and copying threads. The log is append-only: each of these is a new event, and the
materialised view hides what it deletes (the history stays replayable and citable)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from zaxy_agents.errors import InvalidRequestError

from . import events as ev
from .codec import to_json
from .state import ThreadState
from .views import ThreadViews, record_metadata, record_versions

PRUNE_STRATEGIES = ("keep_latest", "delete")


class PruneStrategyError(InvalidRequestError, ValueError):
    """An unknown ``prune`` strategy (also a ``ValueError``)."""


class CheckpointMaintenance:
    views: ThreadViews
    actor: str
    chunk_chars: int

    def delete_thread(self, thread_id: str) -> None:
        with self.views.lock:
            view = self.views.view(thread_id)
            if view.state.empty and not view.state.writes:
                return
            self._append(view, [ev.draft(ev.THREAD_DELETED, {"thread_id": str(thread_id)}, self.actor)])

    def delete_for_runs(self, run_ids: Sequence[str], serde: SerializerProtocol) -> None:
        wanted = {str(run_id) for run_id in run_ids}
        if not wanted:
            return
        with self.views.lock:
            for view in list(self.views.all_views()):
                hits: dict[str, list[str]] = {}
                matched: set[str] = set()
                for record in view.state.records():
                    run_id = record.run_id
                    if run_id is None and record.metadata_serialized is not None:
                        run_id = record_metadata(record, serde).get("run_id")
                    if run_id is not None and str(run_id) in wanted:
                        hits.setdefault(record.ns, []).append(record.id)
                        matched.add(str(run_id))
                if hits:
                    payload = {
                        "thread_id": view.state.thread_id,
                        "run_ids": sorted(matched),
                        "checkpoints": _groups(hits),
                    }
                    self._append(view, [ev.draft(ev.RUNS_DELETED, payload, self.actor)])

    def prune(self, thread_ids: Sequence[str], strategy: str, serde: SerializerProtocol) -> None:
        if strategy not in PRUNE_STRATEGIES:
            raise PruneStrategyError(
                f"unknown prune strategy {strategy!r}",
                field="strategy",
                remediation=f"Use one of {', '.join(PRUNE_STRATEGIES)}.",
            )
        with self.views.lock:
            for thread_id in thread_ids:
                view = self.views.view(thread_id)
                state = view.state
                if state.empty:
                    continue
                if strategy == "delete":
                    removed = {ns: list(space.ids) for ns, space in state.namespaces.items() if space.ids}
                    kept: dict[str, list[str]] = {}
                else:
                    removed, kept = keep_latest_plan(state, serde)
                if any(removed.values()):
                    payload = {
                        "thread_id": str(thread_id),
                        "strategy": strategy,
                        "checkpoints": _groups(removed),
                        "kept": _groups(kept),
                    }
                    self._append(view, [ev.draft(ev.PRUNED, payload, self.actor)])

    def copy_thread(self, source_thread_id: str, target_thread_id: str, serde: SerializerProtocol) -> None:
        """Copy every live checkpoint (the complete parent chains), their writes and the blobs they need."""
        with self.views.lock:
            source = self.views.view(source_thread_id)
            if source.state.empty:
                return
            target = self.views.view(target_thread_id)
            drafts = copy_drafts(
                source.state, target.state, str(source_thread_id), str(target_thread_id), serde, self.chunk_chars,
                self.actor,
            )  # fmt: skip
            self._append(target, drafts)

    def _append(self, view: Any, drafts: list[dict[str, Any]]) -> None:
        events = self.views.log.append_many(view.state.session, drafts)
        view.follower.absorb(events)


def _groups(by_namespace: dict[str, list[str]]) -> list[dict[str, Any]]:
    """Checkpoint ids per namespace as a list (namespaces never sit in key position; see codec)."""
    return [{"checkpoint_ns": ns, "ids": sorted(ids)} for ns, ids in by_namespace.items() if ids]


def keep_latest_plan(
    state: ThreadState, serde: SerializerProtocol
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """``(removed, kept)`` per namespace for ``keep_latest``, DeltaChannel-aware.

    The latest checkpoint stores only a sentinel for a DeltaChannel between snapshots (its metadata's
    ``counters_since_delta_snapshot`` names those channels); its value is rebuilt by replaying ancestors' writes
    back to the nearest ancestor holding a snapshot. Those ancestors (and their writes) are kept, so pruning
    never silently empties a delta channel. Graphs without DeltaChannel keep exactly one checkpoint.
    """
    removed: dict[str, list[str]] = {}
    kept: dict[str, list[str]] = {}
    for ns, space in state.namespaces.items():
        if not space.ids:
            continue
        latest = space.records[space.ids[-1]]
        keep = [latest.id]
        versions = record_versions(latest, serde)
        counters = record_metadata(latest, serde).get("counters_since_delta_snapshot") or {}
        needed = {ch for ch in counters if ch in versions and state.blob_for(ns, ch, versions[ch]) is None}
        cursor = latest.parent_id
        while needed and cursor is not None and cursor in space.records:
            ancestor = space.records[cursor]
            keep.append(ancestor.id)
            ancestor_versions = record_versions(ancestor, serde)
            needed = {
                ch
                for ch in needed
                if ch not in ancestor_versions or state.blob_for(ns, ch, ancestor_versions[ch]) is None
            }
            cursor = ancestor.parent_id
        kept[ns] = sorted(keep)
        removed[ns] = [checkpoint_id for checkpoint_id in space.ids if checkpoint_id not in set(keep)]
    return removed, kept


def copy_drafts(
    source: ThreadState,
    target: ThreadState,
    source_thread_id: str,
    target_thread_id: str,
    serde: SerializerProtocol,
    chunk_chars: int,
    actor: str,
) -> list[dict[str, Any]]:
    records = sorted(source.records(), key=lambda r: (r.ns, r.id))
    refs: set[str] = set()
    saved = []
    for record in records:
        versions = record_versions(record, serde)
        channels = []
        for channel, version in versions.items():
            key = (record.ns, channel, version)
            if key in source.blob_index:
                ref = source.blob_index[key]
                channels.append({"channel": channel, "version": version, "blob": ref})
                if ref:
                    refs.add(ref)
        payload: dict[str, Any] = {
            "thread_id": target_thread_id,
            "checkpoint_ns": record.ns,
            "checkpoint_id": record.id,
            "parent_checkpoint_id": record.parent_id,
            "channels": channels,
            "copied_from": {"thread_id": source_thread_id, "session": source.session, "seq": record.seq},
        }
        for key, plain, serialized in (
            ("checkpoint", record.body, record.body_serialized),
            ("metadata", record.metadata, record.metadata_serialized),
        ):
            if plain is not None:
                payload[key] = to_json(plain)
            else:
                payload[f"{key}_serialized"] = serialized
        if record.run_id is not None:
            payload["run_id"] = record.run_id
        saved.append(ev.draft(ev.SAVED, payload, actor))
    writes = []
    for record in records:
        by_task: dict[str, list[Any]] = {}
        for write in source.pending_writes(record.ns, record.id):
            by_task.setdefault(write.task_id, []).append(write)
        for task_id, task_writes in by_task.items():
            entries = []
            for write in task_writes:
                if write.blob is not None:
                    refs.add(write.blob)
                    entries.append({"idx": write.idx, "channel": write.channel, "blob": write.blob})
                else:
                    entries.append({"idx": write.idx, "channel": write.channel, "type": write.kind, "data": write.text})
            payload = {
                "thread_id": target_thread_id,
                "checkpoint_ns": record.ns,
                "checkpoint_id": record.id,
                "task_id": task_id,
                "task_path": task_writes[0].task_path,
                "writes": entries,
            }
            writes.append(ev.draft(ev.WRITES, payload, actor))
    blobs = []
    for blob in source.blobs.closure(refs):
        if blob.ref in target.blobs:
            continue
        for payload in ev.blob_payloads(
            target_thread_id, blob.ref, encoding=blob.encoding, kind=blob.kind, data=blob.text,
            base=blob.base, container=blob.container, chunk_chars=chunk_chars,
        ):  # fmt: skip
            blobs.append(ev.draft(ev.BLOB, payload, actor))
    marker = {
        "thread_id": target_thread_id,
        "source_thread_id": source_thread_id,
        "source_session": source.session,
        "checkpoints": len(records),
    }
    return [ev.draft(ev.THREAD_COPIED, marker, actor), *blobs, *saved, *writes]
