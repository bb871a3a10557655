"""The ``checkpoint.*`` and ``transcript.turn`` events ZaxyCheckpointer writes (see docs/langgraph.md).

Every event lives in the thread's session and carries the original ``thread_id``.

``checkpoint.blob``          one channel value: ``ref`` (content address), ``encoding`` (``full`` or
                             ``append``: a list extended by the serialised suffix of ``base``), ``type`` and
                             base64 ``data`` from the serde, ``container`` (``list`` or ``value``),
                             ``part``/``parts`` when a large value is split.
``checkpoint.saved``         a checkpoint: ids, ``parent_checkpoint_id``, ``checkpoint`` (JSON body without
                             channel values) or ``checkpoint_serialized``, ``metadata`` or
                             ``metadata_serialized``, ``channels`` ``[{"channel", "version", "blob"}]``
                             (``blob`` null: the channel is empty at that version; a small new value rides
                             along as ``inline``: the blob fields without ``ref``), ``run_id``, ``step``,
                             ``source``.
``checkpoint.writes``        pending writes of one task: ``task_id``, ``task_path``, ``writes``
                             ``[{"idx", "channel", "type", "data"}]``.
``checkpoint.thread_deleted`` hides everything written to the thread before it.
``checkpoint.runs_deleted``  hides the listed ``checkpoints`` ``{ns: [ids]}`` (those of ``run_ids``).
``checkpoint.pruned``        hides the listed ``checkpoints`` (``strategy`` ``keep_latest``) or all
                             (``delete``).
``checkpoint.thread_copied`` marks the start of a copy from ``source_thread_id``.
``checkpoint.concurrent_write`` a warning written before a ``checkpoint.saved`` that forks the thread because
                             another writer saved ``latest_checkpoint_id`` since this one last looked.
``transcript.turn``          one new message: ``role``, ``text``, ``message_id``, ``thread_id`` and
                             provenance (``checkpoint_ns``, ``checkpoint_id``, ``channel``, ``message_type``,
                             ``name``, ``tool_calls``, ``tool_call_id``).
"""

from __future__ import annotations

from typing import Any

BLOB = "checkpoint.blob"
SAVED = "checkpoint.saved"
WRITES = "checkpoint.writes"
THREAD_DELETED = "checkpoint.thread_deleted"
RUNS_DELETED = "checkpoint.runs_deleted"
PRUNED = "checkpoint.pruned"
THREAD_COPIED = "checkpoint.thread_copied"
CONCURRENT_WRITE = "checkpoint.concurrent_write"
TRANSCRIPT_TURN = "transcript.turn"

CHECKPOINT_EVENT_TYPES = frozenset({BLOB, SAVED, WRITES, THREAD_DELETED, RUNS_DELETED, PRUNED, THREAD_COPIED})
HANDLED_EVENT_TYPES = CHECKPOINT_EVENT_TYPES | {TRANSCRIPT_TURN}


def draft(event_type: str, payload: dict[str, Any], actor: str) -> dict[str, Any]:
    return {"type": event_type, "payload": payload, "actor": actor}


def inline_blob(payload: dict[str, Any]) -> dict[str, Any]:
    """A single-part blob payload as embedded in a ``checkpoint.saved`` channel entry (ref and thread implied)."""
    return {key: value for key, value in payload.items() if key not in ("ref", "thread_id")}


def blob_payloads(
    thread_id: str,
    ref: str,
    *,
    encoding: str,
    kind: str,
    data: str,
    base: str | None,
    container: str,
    chunk_chars: int,
) -> list[dict[str, Any]]:
    """One payload, or several ``part``s when ``data`` (base64) is longer than ``chunk_chars``."""
    chunks = [data[i : i + chunk_chars] for i in range(0, len(data), chunk_chars)] or [""]
    payloads = []
    for part, chunk in enumerate(chunks):
        payload: dict[str, Any] = {
            "thread_id": thread_id,
            "ref": ref,
            "encoding": encoding,
            "type": kind,
            "container": container,
            "data": chunk,
        }
        if base is not None:
            payload["base"] = base
        if len(chunks) > 1:
            payload["part"], payload["parts"] = part, len(chunks)
        payloads.append(payload)
    return payloads
