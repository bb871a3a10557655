"""Writing checkpoints: ``put`` (blobs + ``checkpoint.saved`` + transcript turns, one atomic append) and
``put_writes``.

One ``put`` is one ``append_many``: new blobs first, then the ``checkpoint.saved`` event, then the
``transcript.turn`` events of new messages. A process killed mid-write can leave at most a torn tail, which the
log never yields, or whole blob events with no checkpoint referring to them, which nothing reads: the last
complete checkpoint always survives intact.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import WRITES_IDX_MAP, get_serializable_checkpoint_metadata
from langgraph.checkpoint.serde.base import SerializerProtocol

from zaxy_agents.errors import ConflictError
from zaxy_agents.eventloom.protocol import EventLog

from . import events as ev
from .codec import b64, encode_mapping
from .state import ThreadState
from .transcript import new_messages, turn_payload
from .views import ThreadView, ThreadViews, record_versions

logger = logging.getLogger(__name__)

MAX_TURN_TEXT_CHARS = 200_000
# A new channel value up to this size (base64) is stored inside its checkpoint.saved event, not as its own
# checkpoint.blob event: fewer events per step, same content addressing.
INLINE_BLOB_CHARS = 16 * 1024


class CheckpointWrites:
    views: ThreadViews
    writes_log: EventLog  # a property of CheckpointStore: the group-commit log, opened on first use
    actor: str
    capture_transcripts: bool
    chunk_chars: int
    concurrent_writes: str

    def put(
        self,
        config: dict[str, Any],
        checkpoint: dict[str, Any],
        metadata: dict[str, Any],
        new_versions: dict[str, Any],
        serde: SerializerProtocol,
    ) -> dict[str, Any]:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        parent_id = configurable.get("checkpoint_id")
        body = {key: value for key, value in checkpoint.items() if key != "channel_values"}
        values = checkpoint.get("channel_values", {})
        saved_metadata = get_serializable_checkpoint_metadata(config, metadata)  # type: ignore[arg-type]
        with self.views.lock:
            view = self.views.view(thread_id)
            warning = self._concurrent_write(view, thread_id, ns, checkpoint["id"], parent_id)
            state = view.state
            parent = state.record(ns, parent_id) if parent_id else None
            parent_versions = record_versions(parent, serde) if parent is not None else {}
            blob_drafts: list[dict[str, Any]] = []
            turn_drafts: list[dict[str, Any]] = []
            channels: list[dict[str, Any]] = []
            for channel, version in new_versions.items():
                if channel not in values:
                    channels.append({"channel": channel, "version": version, "blob": None})
                    continue
                value = values[channel]
                base_ref = state.blob_for(ns, channel, parent_versions[channel]) if channel in parent_versions else None
                ref, payloads, prefix = state.blobs.encode(value, base_ref, serde, thread_id, self.chunk_chars)
                entry: dict[str, Any] = {"channel": channel, "version": version, "blob": ref}
                if len(payloads) == 1 and len(payloads[0]["data"]) <= INLINE_BLOB_CHARS:
                    entry["inline"] = ev.inline_blob(payloads[0])  # small values ride in the checkpoint event
                else:
                    blob_drafts.extend(ev.draft(ev.BLOB, payload, self.actor) for payload in payloads)
                channels.append(entry)
                if self.capture_transcripts and type(value) is list and value:
                    turn_drafts.extend(
                        self._turns(state, thread_id, ns, checkpoint["id"], channel, value, base_ref, prefix, serde)
                    )
            payload = saved_payload(thread_id, ns, checkpoint["id"], parent_id, body, saved_metadata, channels, serde)
            events = self.views.log.append_many(
                view.state.session, [*warning, *blob_drafts, ev.draft(ev.SAVED, payload, self.actor), *turn_drafts]
            )
            view.follower.absorb(events)
            view.observed[ns] = checkpoint["id"]
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def _concurrent_write(
        self, view: ThreadView, thread_id: str, ns: str, checkpoint_id: str, parent_id: str | None
    ) -> list[dict[str, Any]]:
        """Detect a put that forks the thread behind another writer's back: the thread's latest checkpoint is
        neither this put's parent nor one this saver has seen. Returns the warning event to write first
        (``warn``) or raises ``ConflictError`` (``error``)."""
        latest = view.state.record(ns, None)
        if latest is None or latest.id in (parent_id, checkpoint_id, view.observed.get(ns)):
            return []
        detail = {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
            "parent_checkpoint_id": parent_id,
            "latest_checkpoint_id": latest.id,
            "latest_seq": latest.seq,
        }
        message = (
            f"thread {thread_id!r}: another writer saved checkpoint {latest.id} after this saver last read the "
            f"thread, so saving {checkpoint_id} on parent {parent_id} forks it"
        )
        if self.concurrent_writes == "error":
            raise ConflictError(
                message,
                field="configurable.thread_id",
                remediation="Run one graph per thread at a time (or re-read the thread and retry the step); "
                "concurrent_writes='warn' saves the fork and reports it instead.",
                details=detail,
            )
        logger.warning("%s (recorded as %s)", message, ev.CONCURRENT_WRITE)
        view.observed[ns] = latest.id  # reported: warn again only if that writer saves once more
        return [ev.draft(ev.CONCURRENT_WRITE, detail, self.actor)]

    def _turns(
        self,
        state: ThreadState,
        thread_id: str,
        ns: str,
        checkpoint_id: str,
        channel: str,
        value: list[Any],
        base_ref: str | None,
        prefix: tuple[Any, ...] | None,
        serde: SerializerProtocol,
    ) -> list[dict[str, Any]]:
        base = prefix if prefix is not None else (state.blobs.elements(base_ref, serde) if base_ref else None)
        drafts = []
        for _position, message, identifier in new_messages(value, base, prefix is not None, state.captured):
            payload = turn_payload(
                message, identifier, thread_id=thread_id, checkpoint_ns=ns, checkpoint_id=checkpoint_id, channel=channel
            )
            if len(payload["text"]) > MAX_TURN_TEXT_CHARS:
                payload["text"], payload["truncated"] = payload["text"][:MAX_TURN_TEXT_CHARS], True
            drafts.append(ev.draft(ev.TRANSCRIPT_TURN, payload, self.actor))
        return drafts

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
        serde: SerializerProtocol,
    ) -> None:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = configurable["checkpoint_id"]
        with self.views.lock:
            view = self.views.view(thread_id)
            existing = view.state.writes.get((ns, checkpoint_id), {})
            blob_drafts: list[dict[str, Any]] = []
            entries: list[dict[str, Any]] = []
            for position, (channel, value) in enumerate(writes):
                idx = WRITES_IDX_MAP.get(channel, position)
                if idx >= 0 and (task_id, idx) in existing:
                    continue  # idempotent: a retried task does not duplicate its writes
                kind, data = serde.dumps_typed(value)
                text = b64(data)
                if len(text) <= self.chunk_chars:
                    entries.append({"idx": idx, "channel": channel, "type": kind, "data": text})
                    continue
                ref, payloads, _ = view.state.blobs.encode(value, None, serde, thread_id, self.chunk_chars)
                blob_drafts.extend(ev.draft(ev.BLOB, payload, self.actor) for payload in payloads)
                entries.append({"idx": idx, "channel": channel, "blob": ref})
            if not entries:
                return
            payload = {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint_id,
                "task_id": task_id,
                "task_path": task_path,
                "writes": entries,
            }
            events = self.writes_log.append_many(
                view.state.session, [*blob_drafts, ev.draft(ev.WRITES, payload, self.actor)]
            )
            view.follower.absorb(events)


def saved_payload(
    thread_id: str,
    ns: str,
    checkpoint_id: str,
    parent_id: str | None,
    body: dict[str, Any],
    metadata: dict[str, Any],
    channels: list[dict[str, Any]],
    serde: SerializerProtocol,
) -> dict[str, Any]:
    """The ``checkpoint.saved`` payload (JSON where possible, serde bytes otherwise)."""
    body_json, body_serialized = encode_mapping(body, serde)
    metadata_json, metadata_serialized = encode_mapping(metadata, serde)
    payload: dict[str, Any] = {
        "thread_id": thread_id,
        "checkpoint_ns": ns,
        "checkpoint_id": checkpoint_id,
        "parent_checkpoint_id": parent_id,
        "channels": channels,
    }
    if body_json is not None:
        payload["checkpoint"] = body_json
    else:
        payload["checkpoint_serialized"] = body_serialized
    if metadata_json is not None:
        payload["metadata"] = metadata_json
    else:
        payload["metadata_serialized"] = metadata_serialized
    for key in ("run_id", "step", "source"):
        if isinstance(metadata.get(key), (str, int)):
            payload[key] = metadata[key]
    return payload


def next_version(current: str | int | float | None) -> str:
    """Zero-padded counter plus a random fraction, as LangGraph's own savers: monotonic, and distinct across
    forks of the same parent."""
    if current is None:
        number = 0
    elif isinstance(current, (int, float)):
        number = int(current)
    else:
        number = int(str(current).split(".")[0])
    return f"{number + 1:032}.{random.random():016}"
