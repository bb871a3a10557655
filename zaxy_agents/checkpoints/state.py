"""One thread's checkpoints, pending writes and blobs, materialised from its session's events.

Deleting (a thread, runs, pruned checkpoints) is an event too: the log keeps everything, this view hides
what was deleted. Checkpoint ids are uuid6 strings, so sorting them orders checkpoints oldest to newest.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from . import events as ev
from .blobs import BlobTable, ElementCache
from .codec import from_json, unb64

logger = logging.getLogger(__name__)


class CheckpointRecord:
    """One live checkpoint. Its body and metadata stay in their stored (``__map__``) form until first read:
    a thread replayed to answer for its latest checkpoint decodes one body, not every body of its history."""

    __slots__ = (
        "_body",
        "_body_stored",
        "_metadata",
        "_metadata_stored",
        "_versions",
        "body_serialized",
        "id",
        "metadata_serialized",
        "ns",
        "parent_id",
        "run_id",
        "seq",
    )

    def __init__(
        self,
        *,
        ns: str,
        id: str,
        parent_id: str | None,
        body_stored: Any,
        body_serialized: dict[str, str] | None,
        metadata_stored: Any,
        metadata_serialized: dict[str, str] | None,
        run_id: str | None,
        seq: int,
    ) -> None:
        self.ns, self.id, self.parent_id, self.run_id, self.seq = ns, id, parent_id, run_id, seq
        self._body_stored, self._metadata_stored = body_stored, metadata_stored
        self.body_serialized, self.metadata_serialized = body_serialized, metadata_serialized
        self._body: dict[str, Any] | None = None
        self._metadata: dict[str, Any] | None = None
        self._versions: dict[str, Any] | None = None

    @property
    def body(self) -> dict[str, Any] | None:
        """The decoded JSON body without channel_values (``None``: see ``body_serialized``)."""
        if self._body is None and self._body_stored is not None:
            self._body = from_json(self._body_stored)
        return self._body

    @property
    def metadata(self) -> dict[str, Any] | None:
        if self._metadata is None and self._metadata_stored is not None:
            self._metadata = from_json(self._metadata_stored)
        return self._metadata

    @property
    def versions(self) -> dict[str, Any]:
        """channel -> version, from the body (empty when the body is serialized)."""
        if self._versions is None:
            body = self.body
            self._versions = dict(body.get("channel_versions", {})) if body is not None else {}
        return self._versions


@dataclass(slots=True)
class WriteRecord:
    task_id: str
    idx: int
    channel: str
    kind: str
    text: str  # base64, as stored (decoded when the write is read)
    task_path: str
    blob: str | None = None  # large values are stored as a checkpoint.blob and referenced

    @property
    def data(self) -> bytes:
        return unb64(self.text) if self.text else b""


@dataclass
class Namespace:
    ids: list[str] = field(default_factory=list)  # sorted
    records: dict[str, CheckpointRecord] = field(default_factory=dict)


class ThreadState:
    def __init__(self, session: str, cache: ElementCache) -> None:
        self.session = session
        self.thread_id: str | None = None
        self.namespaces: dict[str, Namespace] = {}
        self.writes: dict[tuple[str, str], dict[tuple[str, int], WriteRecord]] = {}
        self.blob_index: dict[tuple[str, str, Any], str | None] = {}
        self.blobs = BlobTable(session, cache)
        self.captured: set[str] = set()

    # ------------------------------------------------------------------ queries
    def record(self, ns: str, checkpoint_id: str | None) -> CheckpointRecord | None:
        space = self.namespaces.get(ns)
        if space is None or not space.ids:
            return None
        if checkpoint_id is None:
            return space.records[space.ids[-1]]
        return space.records.get(checkpoint_id)

    def records(self, ns: str | None = None) -> Iterator[CheckpointRecord]:
        """Every live checkpoint (of ``ns``, or of all namespaces)."""
        spaces = self.namespaces.values() if ns is None else [self.namespaces.get(ns, Namespace())]
        for space in spaces:
            yield from space.records.values()

    def blob_for(self, ns: str, channel: str, version: Any) -> str | None:
        return self.blob_index.get((ns, channel, version))

    def pending_writes(self, ns: str, checkpoint_id: str) -> list[WriteRecord]:
        stored = self.writes.get((ns, checkpoint_id))
        if not stored:
            return []
        return sorted(stored.values(), key=lambda w: (w.task_path, w.task_id, w.idx))

    @property
    def empty(self) -> bool:
        return not any(space.ids for space in self.namespaces.values())

    # ------------------------------------------------------------------ applying events
    def apply(self, seq: int, event_type: str, payload: dict[str, Any]) -> None:
        if event_type not in ev.HANDLED_EVENT_TYPES:
            return
        try:
            self._apply(seq, event_type, payload)
        except (KeyError, TypeError, ValueError, AttributeError):
            logger.warning("skipping malformed %s event at %s seq %s", event_type, self.session, seq)

    def _apply(self, seq: int, event_type: str, payload: dict[str, Any]) -> None:
        if event_type == ev.TRANSCRIPT_TURN:
            if payload.get("message_id"):
                self.captured.add(str(payload["message_id"]))
            return
        if self.thread_id is None and isinstance(payload.get("thread_id"), str):
            self.thread_id = payload["thread_id"]
        if event_type == ev.BLOB:
            self.blobs.apply(payload)
        elif event_type == ev.SAVED:
            self._apply_saved(seq, payload)
        elif event_type == ev.WRITES:
            key = (payload.get("checkpoint_ns", ""), payload["checkpoint_id"])
            stored = self.writes.setdefault(key, {})
            for write in payload["writes"]:
                record = WriteRecord(
                    task_id=payload["task_id"],
                    idx=int(write["idx"]),
                    channel=write["channel"],
                    kind=write.get("type", ""),
                    text=_text(write.get("data", "")),
                    task_path=payload.get("task_path", ""),
                    blob=write.get("blob"),
                )
                stored[(record.task_id, record.idx)] = record
        elif event_type == ev.THREAD_DELETED or (event_type == ev.PRUNED and payload.get("strategy") == "delete"):
            self.namespaces.clear()
            self.writes.clear()
            self.blob_index.clear()
            self.blobs.clear()
        elif event_type in (ev.RUNS_DELETED, ev.PRUNED):
            for group in payload.get("checkpoints", []):
                for checkpoint_id in group["ids"]:
                    self.remove(group["checkpoint_ns"], checkpoint_id)

    def _apply_saved(self, seq: int, payload: dict[str, Any]) -> None:
        ns = payload.get("checkpoint_ns", "")
        record = CheckpointRecord(
            ns=ns,
            id=payload["checkpoint_id"],
            parent_id=payload.get("parent_checkpoint_id"),
            body_stored=payload.get("checkpoint"),
            body_serialized=payload.get("checkpoint_serialized"),
            metadata_stored=payload.get("metadata"),
            metadata_serialized=payload.get("metadata_serialized"),
            run_id=payload.get("run_id"),
            seq=seq,
        )
        for entry in payload.get("channels", []):
            if "inline" in entry:
                self.blobs.apply({**entry["inline"], "ref": entry["blob"]})
            self.blob_index[(ns, entry["channel"], entry["version"])] = entry.get("blob")
        space = self.namespaces.setdefault(ns, Namespace())
        if record.id not in space.records:
            bisect.insort(space.ids, record.id)
        space.records[record.id] = record

    def remove(self, ns: str, checkpoint_id: str) -> None:
        space = self.namespaces.get(ns)
        if space is None or checkpoint_id not in space.records:
            return
        del space.records[checkpoint_id]
        position = bisect.bisect_left(space.ids, checkpoint_id)
        if position < len(space.ids) and space.ids[position] == checkpoint_id:
            del space.ids[position]
        self.writes.pop((ns, checkpoint_id), None)


def _text(data: Any) -> str:
    if not isinstance(data, str):
        raise TypeError("checkpoint write data must be base64 text")
    return data
