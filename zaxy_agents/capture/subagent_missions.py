"""Claude Code and Codex subagents as Coordinate workers (opt-in: ``ZAXY_MISSION`` or ``--mission``).

When a mission is named, the hook sink maps a subagent's lifecycle onto the mission (docs/coordinate.md):

- ``SubagentStart``: the subagent becomes a worker of the mission (created once, id ``<client>-<agent id>``) and
  gets an assignment, written by the hook as the mission's *dispatcher* ``<client>-hooks``: a role that may
  create and assign workers and nothing else (the mission must grant it).
- ``SubagentStop``: the subagent's last reply becomes a finding reported *by that worker*, citing the
  ``hook.subagent_stopped`` event the hook captured; it stays pending and non-authoritative until a reviewer
  (the coordinator or a reviewer the mission grants, through ``coordination_review_finding``) accepts and
  promotes it. The hook never reviews or promotes anything, and no identity it writes as could: it acts as the
  dispatcher or as the worker, never as the coordinator or a reviewer.

A mission that does not exist yet is started on the first subagent, with the coordinator
``ZAXY_MISSION_COORDINATOR`` (default: ``user``, never the client or its hooks), the reviewers
``ZAXY_MISSION_REVIEWERS`` (comma-separated) and both clients' hook dispatchers. An existing mission that does not
grant the dispatcher is refused (hook error log), not joined with more authority. This path opens the full fabric
(the log only, never the graph), so it costs more than the stdlib hook path; it runs only on subagent events, and
only where a mission is named.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any

from zaxy_agents.errors import ConflictError, NotFoundError, UnauthorizedError

ENV_MISSION = "ZAXY_MISSION"
ENV_COORDINATOR = "ZAXY_MISSION_COORDINATOR"
ENV_REVIEWERS = "ZAXY_MISSION_REVIEWERS"
DEFAULT_COORDINATOR = "user"  # the person who named the mission; never the client or its hooks
SUBAGENT_EVENTS = ("SubagentStart", "SubagentStop")
CLAIM_MAX_CHARS = 4_000
_CLIENT_PREFIX = {"claude-code": "cc", "codex": "codex"}


def mission_named(option: str | None) -> str | None:
    """The mission this hook reports into: ``--mission`` first, then ``ZAXY_MISSION``; ``None`` = not opted in."""
    named = option or os.environ.get(ENV_MISSION, "").strip()
    return named or None


def worker_id(client: str, hook: dict[str, Any]) -> str:
    """The same worker id at start and stop: the client and the first 12 letters/digits of the agent id (the
    agent type can differ between a subagent's start and stop payloads, so it is not part of the id)."""
    agent = re.sub(r"[^a-z0-9]", "", str(hook.get("agent_id") or "").lower())[:12] or "subagent"
    return f"{_CLIENT_PREFIX.get(client, 'agent')}-{agent}"


def record(
    client: str,
    event_name: str,
    hook: dict[str, Any],
    captured: list[dict[str, Any]],
    eventloom_path: str,
    mission: str,
) -> dict[str, Any]:
    """Write the coordination events for one subagent hook; returns what was written (for the hook log)."""
    from zaxy_agents.fabric import MemoryFabric

    with MemoryFabric.from_path(eventloom_path) as fabric:
        coordination = fabric.coordination
        dispatcher, brief = _ensure_mission(coordination, mission, client)
        worker = worker_id(client, hook)
        agent_type = str(hook.get("agent_type") or "") or "general-purpose"
        created = _ensure_worker(coordination, mission, worker, f"{client} {agent_type} subagent", dispatcher)
        known = next((w for w in brief["workers"] if w["worker_id"] == worker), None)
        done: dict[str, Any] = {"mission_id": mission, "worker_id": worker, "worker_created": created}
        if event_name == "SubagentStart":
            parent = str(hook.get("session_id") or "")[:8]
            task = f"{agent_type} subagent of {client} session {parent}" if parent else f"{agent_type} subagent"
            done["assignment"] = coordination.assign(mission, worker, task, actor=dispatcher)["citation"]
            return done
        reply = str(hook.get("last_assistant_message") or "").strip()
        if reply:
            evidence = [event["citation"] for event in captured if event.get("type") == "hook.subagent_stopped"]
            done["finding"] = coordination.report_finding(
                mission,
                worker,
                f"{agent_type} subagent result",
                reply[:CLAIM_MAX_CHARS],
                evidence=evidence,
                assignment_id=known["assignments"][-1]["assignment_id"] if known and known["assignments"] else None,
                actor=worker,
            )["finding_id"]
        return done


def dispatcher_for(client: str) -> str:
    """Who the hooks of ``client`` write as when they create and assign workers."""
    return f"{client}-hooks"


def _ensure_mission(coordination: Any, mission: str, client: str) -> tuple[str, dict[str, Any]]:
    """The dispatcher the hooks act as and the mission's brief, starting the mission first when this is its first
    subagent; refused when an existing mission does not grant that dispatcher."""
    dispatcher = dispatcher_for(client)
    try:
        brief = coordination.merge_brief(mission)
    except NotFoundError:
        coordinator = os.environ.get(ENV_COORDINATOR, "").strip() or DEFAULT_COORDINATOR
        reviewers = [r.strip() for r in os.environ.get(ENV_REVIEWERS, "").split(",") if r.strip()]
        with contextlib.suppress(ConflictError):  # a parallel subagent's hook may have started it first
            coordination.start(
                mission,
                f"Subagents of {client} report their results here; they count once a reviewer promotes them.",
                mission_id=mission,
                coordinator=coordinator,
                reviewers=reviewers,
                dispatchers=[dispatcher_for(name) for name in _CLIENT_PREFIX],
            )
        brief = coordination.merge_brief(mission)
    if dispatcher not in brief.get("dispatchers", []):
        raise UnauthorizedError(
            f"mission {mission!r} does not let {dispatcher!r} create workers (its dispatchers: "
            f"{brief.get('dispatchers') or 'none'})",
            field="ZAXY_MISSION",
            remediation=f"Name a new mission (the first subagent starts it with the hook dispatchers), or start one "
            f"with coordination_start dispatchers=[{dispatcher!r}]. The hooks never act as its coordinator.",
        )
    return dispatcher, brief


def _ensure_worker(coordination: Any, mission: str, worker: str, purpose: str, dispatcher: str) -> bool:
    """Create the worker; False when it exists already (its start hook, or a parallel hook, created it)."""
    try:
        coordination.worker_create(mission, worker, purpose=purpose, actor=dispatcher)
    except ConflictError:
        return False
    return True
