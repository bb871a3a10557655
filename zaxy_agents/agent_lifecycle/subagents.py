"""A subagent finished: record its outcome, and close or hand over the work it left open.

The seed's contract (seed 003): ``subagent.cleaned`` is recorded in the subagent's session with the integrity
status of that session's hash chain (verified before the clean-up is written), ``subagent.completed`` in the
parent session, and the caller gets a handoff bundle with the summary and the integrity status.

Open items are open tasks (current task versions whose status is not done). A subagent that ran in its own
session leaves them there: ``close`` marks them closed in that session, ``handover`` re-opens each in the parent
session (citing where it came from) and closes the subagent's copy. A subagent that shared the parent's session
names its tasks with ``task_ids``; handing those over changes nothing but the record.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.errors import InvalidRequestError, NotFoundError
from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.model import entity_key

SUBAGENT_STATUSES = ("completed", "failed", "cancelled")
DISPOSITIONS = ("close", "handover")
DONE_STATUSES = frozenset({"done", "completed", "cancelled", "closed", "resolved"})
MAX_OPEN_ITEMS = 100


def open_tasks(
    catalog: EntityCatalog, session: str, task_ids: list[str] | None, *, implicit: bool
) -> list[dict[str, Any]]:
    """The open tasks to settle: the named ones (must exist), or every open task of ``session`` if ``implicit``."""
    tasks: list[dict[str, Any]] = []
    if task_ids is not None:
        for index, task_id in enumerate(task_ids):
            version = catalog.current(entity_key(session, "task", task_id))
            if version is None:
                raise NotFoundError(
                    f"no open task {task_id!r} in session {session!r}",
                    field=f"task_ids[{index}]",
                    remediation="Use task ids exactly as they were created (task.created payload task_id).",
                )
            if _status(version) not in DONE_STATUSES:
                tasks.append(_task(version))
        return tasks
    if not implicit:
        return tasks
    for key in catalog.recent_keys(session, "task", scan=5000):
        version = catalog.current(key)
        if version is not None and _status(version) not in DONE_STATUSES:
            tasks.append(_task(version))
        if len(tasks) >= MAX_OPEN_ITEMS:
            break
    return tasks


def cleanup_drafts(
    *,
    parent_session: str,
    subagent_session: str,
    subagent_id: str,
    status: str,
    summary: str,
    disposition: str,
    tasks: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """``(drafts for the subagent's session, drafts for the parent session, the completion payload)``."""
    if status not in SUBAGENT_STATUSES:
        raise InvalidRequestError(
            f"unknown subagent status {status!r}", field="status", remediation=f"Use one of {SUBAGENT_STATUSES}."
        )
    if disposition not in DISPOSITIONS:
        raise InvalidRequestError(
            f"unknown disposition {disposition!r}", field="open_items", remediation=f"Use one of {DISPOSITIONS}."
        )
    separate = subagent_session != parent_session
    own: list[dict[str, Any]] = []
    parent: list[dict[str, Any]] = []
    closed: list[str] = []
    handed: list[str] = []
    for task in tasks:
        if disposition == "close":
            own.append(_task_update(task, "closed", f"closed when subagent {subagent_id} {status}"))
            closed.append(task["task_id"])
            continue
        handed.append(task["task_id"])
        if separate:
            own.append(_task_update(task, "closed", f"handed over to session {parent_session}"))
            parent.append(
                {
                    "type": "task.created",
                    "actor": "agent",
                    "payload": {
                        "task_id": task["task_id"],
                        "title": task["title"],
                        "status": "open",
                        "description": f"handed over by subagent {subagent_id} from {task['citation']}",
                        "handed_over_from": task["citation"],
                    },
                }
            )
    completion = {
        "subagent_id": subagent_id,
        "status": status,
        "summary": summary,
        "subagent_session": subagent_session,
        "open_items": disposition,
        "closed": closed,
        "handed_over": handed,
    }
    parent.append({"type": "subagent.completed", "actor": "agent", "payload": completion})
    return own, parent, completion


def integrity_report(report: Any) -> dict[str, Any]:
    """A :class:`VerifyReport` (``None``: no log) as the integrity block of ``subagent.cleaned`` and the handoff."""
    if report is None:
        return {"status": "empty", "event_count": 0, "head_hash": None}
    status = "empty" if report.event_count == 0 else ("verified" if report.ok else "broken")
    return {
        "status": status,
        "event_count": report.event_count,
        "head_hash": report.head_hash,
        **({"first_broken_seq": report.first_broken_seq, "reason": report.reason} if not report.ok else {}),
    }


def cleaned_draft(
    *, parent_session: str, subagent_id: str, status: str, summary: str, integrity: dict[str, Any]
) -> dict[str, Any]:
    return {
        "type": "subagent.cleaned",
        "actor": "agent",
        "payload": {
            "parent_session_id": parent_session,
            "subagent_id": subagent_id,
            "status": status,
            "summary": summary,
            "integrity_status": integrity["status"],
            "integrity": integrity,
        },
    }


def _status(version: Any) -> str:
    return str(version.properties.get("status") or "").lower()


def _task(version: Any) -> dict[str, Any]:
    return {
        "task_id": version.name,
        "title": version.properties.get("title") or version.name,
        "status": _status(version),
        "citation": version.citation,
    }


def _task_update(task: dict[str, Any], status: str, note: str) -> dict[str, Any]:
    return {
        "type": "task.updated",
        "actor": "agent",
        "payload": {"task_id": task["task_id"], "title": task["title"], "status": status, "description": note},
    }
