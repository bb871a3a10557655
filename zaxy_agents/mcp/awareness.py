"""The session-awareness loop of seed 003: what memory_capabilities and memory_bootstrap tell the model.

Session-start awareness is not enough; the model is told what Zaxy is, which tools exist (listed or callable by
name), when to refresh memory, whether capture into this session looks healthy, which call should normally
come next, and how far to trust what memory returns:

* ``profile`` — the active tool profile, listed and unlisted tools.
* ``front_door`` — ``memory_checkout``.
* ``refresh_policy`` — when to check memory out again (before major work, after compaction/resume, before
  status/roadmap/architecture answers).
* ``capture`` — ``{"status": "healthy"|"degraded"|"off", "paths": {"hooks", "mcp_lifecycle", "spool"},
  "issues": [{"problem", "fix"}]}``: read from the hook settings files, the log's recent hook and lifecycle
  events, the hook error log and the spool.
* ``recommended_next_call`` / ``recommended_checkout`` — ``{"tool": "memory_checkout", "arguments": {"query":
  ...}, "reason"}`` built from ``current_task``.
* ``trust_policy`` — ``cited_current_facts``, ``unsupported_context``, ``feedback_recording``.

The MCP lifecycle capture (one ``tool.call.completed`` per call, ``capture: "lifecycle"``) is the activity
marker of checkouts and bootstraps the hooks read to decide when to remind (``memory.reminder.suggested``).
"""

from __future__ import annotations

from typing import Any

FRONT_DOOR = "memory_checkout"
DEFAULT_TASK_QUERY = "current task, open tasks, recent decisions and blockers"
REFRESH_POLICY = [
    "At session start: memory_bootstrap (or memory_capabilities when unsure which tools exist), then "
    "memory_checkout for the task at hand.",
    "Before substantial work or a change of task: memory_checkout with that task.",
    "After a context compaction or a resume: memory_checkout again; what the context lost is in memory.",
    "Before answering status, roadmap or architecture questions: memory_checkout, and answer only what it cites.",
    "After cited context shaped an answer: memory_feedback; record new decisions, facts and task changes with "
    "memory_append.",
]
TRUST_POLICY = {
    "cited_current_facts": "Rely on current facts and evidence that carry an eventloom:// citation and cite them; "
    "answer from memory only when quality.answerability is answer_from_memory.",
    "unsupported_context": "Anything without a citation, superseded, or marked non_authoritative (inferred edges, "
    "consolidation candidates, reminders) is a lead to verify, never a fact; when answerability is ask_user, ask "
    "the user instead of inventing continuity.",
    "feedback_recording": "When a cited fact materially shaped your answer, call memory_feedback with its entity "
    "and 'used' or 'helpful'; record new decisions, facts and task changes with memory_append.",
}
HOOK_CLIENTS = ("claude-code", "codex")


def recommended_call(current_task: str | None, *, reason: str | None = None) -> dict[str, Any]:
    """The checkout the model should make next (seed 003's ``required_action`` shape)."""
    query = (current_task or "").strip()[:4000] or DEFAULT_TASK_QUERY
    return {
        "tool": FRONT_DOOR,
        "arguments": {"query": query},
        "reason": reason or "Check memory out for the task before answering or starting work.",
    }


def profile_block(server: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": server.get("profile"),
        "listed_tools": list(server.get("listed_tools", [])),
        "unlisted_tools": list(server.get("unlisted_tools", [])),
    }


def capture_status(fabric: Any, session: str, server: dict[str, Any], *, restricted: bool) -> dict[str, Any]:
    """How capture into ``session`` looks right now, with one fix per problem found."""
    workspace = server.get("workspace") or {}
    root = workspace.get("root")
    signals = fabric.capture_signals(session, workspace=root)
    issues: list[dict[str, str]] = []
    hooks: dict[str, Any] = {"last_event": signals["last_hook_event"], "errors": signals["hook_errors"]["count"]}
    installed_any = False
    if root:
        from zaxy_agents.capture import hook_install

        for client in HOOK_CLIENTS:
            rows = hook_install.installed(client, root)
            scopes = [row["scope"] for row in rows if row["events"]]
            stale = sorted({exe for row in rows for exe in row.get("stale", [])})
            hooks[client] = {"installed_scopes": scopes, "missing_executables": stale}
            installed_any = installed_any or bool(scopes)
            if stale:
                issues.append(
                    {
                        "problem": f"{client} hooks run a zaxy that no longer exists ({', '.join(stale)})",
                        "fix": f"Reinstall them: zaxy hooks {client} --force",
                    }
                )
    else:
        hooks["installed"] = "unknown: the server was not started for a workspace (zaxy serve --client)"
    if signals["hook_errors"]["count"]:
        recent = signals["hook_errors"]["recent"][-1:] or [{}]
        issues.append(
            {
                "problem": f"{signals['hook_errors']['count']} hook errors, the last: "
                f"{recent[0].get('error_type', '')} {str(recent[0].get('error', ''))[:200]}",
                "fix": "Run `zaxy hooks status` (and `zaxy doctor`) in the workspace.",
            }
        )
    if signals["spool_pending_files"]:
        issues.append(
            {
                "problem": f"{signals['spool_pending_files']} hook spool files wait for the log lock",
                "fix": "They drain on the next write; if they stay, `zaxy doctor` names what holds the lock.",
            }
        )
    lifecycle = {
        "enabled": bool(server.get("lifecycle_capture")),
        "last_event": signals["last_mcp_activity"],
        **(server.get("lifecycle_stats") or {}),
    }
    if lifecycle.get("failed") or lifecycle.get("dropped"):
        issues.append(
            {
                "problem": f"lifecycle capture failed {lifecycle.get('failed', 0)} and dropped "
                f"{lifecycle.get('dropped', 0)} events",
                "fix": "Check the server's stderr; `zaxy doctor` checks the Eventloom folder.",
            }
        )
    active = installed_any or signals["last_hook_event"] is not None or lifecycle["enabled"]
    status = "off" if not active else ("degraded" if issues else "healthy")
    report: dict[str, Any] = {
        "status": status,
        "session": session,
        "events": signals["events"],
        "paths": {
            "hooks": hooks,
            "mcp_lifecycle": lifecycle,
            "spool": {"pending_files": signals["spool_pending_files"]},
        },
        "issues": issues,
    }
    if restricted:  # over HTTP: no local paths
        for client in HOOK_CLIENTS:
            hooks.get(client, {}).pop("missing_executables", None)
    return report


def awareness(call: Any, current_task: str | None) -> dict[str, Any]:
    """The fields memory_capabilities adds to the capability dict (and memory_bootstrap embeds)."""
    server = dict(call.caller.server)
    capture = capture_status(call.fabric, call.session, server, restricted=call.caller.restricted)
    reason = "Check memory out for the task before answering or starting work."
    if capture["status"] != "healthy" and capture["issues"]:
        reason += " Capture needs attention: " + capture["issues"][0]["fix"]
    return {
        "what": "Zaxy is this workspace's memory: an append-only, hash-chained Eventloom with a budgeted, cited "
        "Memory Checkout (facts, decisions, tasks and evidence, each with an eventloom:// citation).",
        "profile": profile_block(server),
        "front_door": FRONT_DOOR,
        "refresh_policy": list(REFRESH_POLICY),
        "capture": capture,
        "recommended_next_call": recommended_call(current_task, reason=reason),
    }
