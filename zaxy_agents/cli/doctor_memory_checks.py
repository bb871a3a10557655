"""`zaxy doctor`'s checks of the memory itself: the log's hash chains, the hook spool, projection freshness and
the derived-state files (each repair rebuilds from the log, never rewrites it)."""

from __future__ import annotations

import json

from .doctor_base import FAIL, OK, SKIP, UNPARSEABLE, WARN, Check, DoctorContext, _failed_check


# ---------------------------------------------------------------------------------------------- the log
def check_log_integrity(ctx: DoctorContext) -> list[Check]:
    """Recompute every session's hash chain; a damaged file is reported by name, the others keep working."""
    if not ctx.exists:
        return [Check("log integrity", SKIP, f"no memory at {ctx.eventloom} yet")]
    from zaxy_agents.fabric.health import verify_sessions

    broken, verified, events = [], 0, 0
    names = [path.name[: -len(".jsonl")] for path in ctx.session_files()]
    for session, report in verify_sessions(ctx.eventloom, names).items():
        if isinstance(report, Exception):  # unparseable bytes, an unreadable file: damaged, not fatal
            ctx.damaged[session] = f"{type(report).__name__}: {report}"
            continue
        if not report.ok and str(report.reason or "").startswith(UNPARSEABLE):
            ctx.damaged[session] = f"seq {report.first_broken_seq}: {report.reason}"  # bytes, not tampering
            continue
        verified += 1
        events += report.event_count or 0
        if not report.ok:
            broken.append({"session": session, "first_broken_seq": report.first_broken_seq, "why": report.reason})
    checks = []
    if broken:
        first = broken[0]
        checks.append(
            Check(
                "log integrity",
                FAIL,
                f"{len(broken)} of {verified} sessions do not verify (first: {first['session']} at seq "
                f"{first['first_broken_seq']}: {first['why']})",
                fix=f"`zaxy verify -s {first['session']}` shows the first broken event; restore that log from a backup "
                "(or `zaxy repair` where available); other sessions keep working.",
                details={"broken": broken},
            )
        )
    else:
        checks.append(Check("log integrity", OK, f"{verified} sessions verify ({events} events)"))
    if ctx.damaged:
        name, why = next(iter(ctx.damaged.items()))
        checks.append(
            Check(
                "damaged logs",
                FAIL,
                f"{len(ctx.damaged)} session files cannot be read (first: {name}: {why[:160]})",
                fix=_repair_hint(name),
                details={"damaged": ctx.damaged},
                repair=lambda: _repair_damaged(ctx, sorted(ctx.damaged)),
            )
        )
    else:
        checks.append(Check("damaged logs", OK, "every session file parses"))
    return checks


def _repair_hint(session: str) -> str:
    return (
        f"`zaxy doctor --fix` (or `zaxy repair -s {session}`) moves the unparseable bytes of {session}.jsonl to "
        "`.repair/` and records it; every readable event keeps its bytes, seq and citation."
    )


def _repair_damaged(ctx: DoctorContext, sessions: list[str]) -> str:
    """``zaxy repair`` for each damaged session: unreadable bytes go to a sidecar, an ``eventloom.repaired`` record
    says so; no readable event is deleted or rewritten (a session that was edited, not damaged, is refused)."""
    repaired, refused = [], []
    fabric = ctx.fabric()
    for session in sessions:
        try:
            result = fabric.repair(session, actor="zaxy-doctor")
        except Exception as exc:  # a file name that is no session id, an unreadable file
            refused.append(f"{session} ({type(exc).__name__}: {exc})")
            continue
        repaired.extend(result["repaired"])
        refused.extend(
            f"{report['session']} ({report['refused']})" for report in result["sessions"] if report.get("refused")
        )
    text = f"moved the unreadable bytes of {len(repaired)} sessions to .repair/ ({', '.join(repaired) or 'none'})"
    return text + (f"; not repaired: {'; '.join(refused)}" if refused else "")


def check_spool(ctx: DoctorContext) -> Check:
    """Hook events waiting for a held lock (they drain on the next write; stuck ones name the lock holder)."""
    from zaxy_agents.fabric.health import drain_spools, spooled

    waiting = spooled(ctx.eventloom)
    if not waiting:
        return Check("hook spool", OK, "no spooled hook events")

    def repair() -> str:
        drained = drain_spools(ctx.eventloom, list(waiting))
        return f"drained {len(waiting)} sessions' spools ({drained} events written in order)"

    return Check(
        "hook spool",
        WARN,
        f"{sum(waiting.values())} spool files wait for the log lock ({', '.join(sorted(waiting))})",
        fix="They drain on the next write; `zaxy doctor --fix` drains them now (a process holding the log lock for "
        "long shows in `lsof <eventloom>/<session>.jsonl`).",
        details={"spool_files": waiting},
        repair=repair,
    )


# ---------------------------------------------------------------------------------------------- derived state
def check_projection(ctx: DoctorContext) -> Check:
    """Is the projection (catalog + graph) caught up with the log, and does it agree with it?"""
    if not ctx.exists or not ctx.session_files():
        return Check("projection freshness", SKIP, "no sessions to project")
    try:
        fabric = ctx.fabric()
        projector = fabric.projector
        cursors = dict(projector.catalog.cursors)
        heads = {
            summary.session: summary.event_count
            for summary in fabric.log.sessions()
            if summary.session not in ctx.damaged
        }
    except Exception as exc:
        return _failed_check("projection freshness", exc, "`zaxy reproject` rebuilds the projection from the log.")
    lag = {session: count - cursors.get(session, (0, ""))[0] for session, count in heads.items()}
    behind = {session: value for session, value in lag.items() if value > 0}
    mismatches = dict(getattr(projector, "mismatches", {}) or {})
    degraded = projector.degraded or projector.writer_error()

    def repair() -> str:
        digest = fabric.reproject()
        return f"reprojected from the log (graph digest {digest[:12]})"

    if mismatches or degraded:
        return Check(
            "projection freshness",
            FAIL,
            f"the projection disagrees with the log ({mismatches or degraded})",
            fix="Run `zaxy reproject` (or `zaxy doctor --fix`): the projection is rebuilt from the log.",
            details={"mismatches": mismatches, "degraded": degraded},
            repair=repair,
        )
    if behind:
        return Check(
            "projection freshness",
            WARN,
            f"{sum(behind.values())} events not projected yet ({len(behind)} sessions); reads catch up first",
            fix="Nothing to do (the next read catches up); `zaxy doctor --fix` catches up now.",
            details={"lag": behind},
            repair=lambda: f"caught up {fabric.project()} events",
        )
    return Check("projection freshness", OK, f"caught up with the log ({len(heads)} sessions)")


def check_derived_files(ctx: DoctorContext) -> Check:
    """Derived JSON state (working-set caches, capture cursors) parses and is of a version this code reads."""
    from zaxy_agents.config import DERIVED_DIR_NAME
    from zaxy_agents.workingset.digest import FOLD_VERSION

    derived = ctx.eventloom / DERIVED_DIR_NAME
    if not derived.is_dir():
        return Check("derived state", SKIP, "no derived state yet")
    bad: dict[str, str] = {}
    seen = 0
    for folder, expect_version in (("workingset", FOLD_VERSION), ("capture", None)):
        for path in sorted((derived / folder).glob("*.json")) if (derived / folder).is_dir() else []:
            seen += 1
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                bad[str(path.relative_to(ctx.eventloom))] = f"does not parse ({type(exc).__name__})"
                continue
            if expect_version is not None and (not isinstance(data, dict) or data.get("version") != expect_version):
                found = data.get("version") if isinstance(data, dict) else None
                bad[str(path.relative_to(ctx.eventloom))] = f"version {found!r}, this code reads {expect_version}"
    if not bad:
        return Check("derived state", OK, f"{seen} derived files parse and match this version")

    def repair() -> str:
        for relative in bad:
            (ctx.eventloom / relative).unlink(missing_ok=True)
        return f"removed {len(bad)} derived files (rebuilt from the log on next use)"

    first, why = next(iter(bad.items()))
    return Check(
        "derived state",
        FAIL,
        f"{len(bad)} derived files cannot be used (first: {first}: {why}); they are ignored and rebuilt",
        fix=f"Delete {first} (derived from the log, rebuilt on next use), or run `zaxy doctor --fix`.",
        details={"files": bad},
        repair=repair,
    )
