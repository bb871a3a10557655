"""The checks behind `zaxy doctor`: one command a user runs when something feels wrong (seed 004).

Each check returns a :class:`Check` — ``ok``, ``warn`` (works, but look), ``fail`` (broken: exit 1) or
``skip`` (nothing to check) — with a one-line ``fix`` for anything not ``ok``, and, where a safe repair exists,
a ``repair`` that ``zaxy doctor --fix`` runs (never one that deletes or rewrites an acknowledged event: derived
state is rebuilt from the log, stale records of dead processes are removed, spooled hook events are drained).

Checks: log integrity per session, damaged logs, projection freshness, derived-state files, embedder
(availability, dims, model@version mix), vector cache headroom, MCP profile, hooks (installation, missing
executables, last error, per client), the graph owner record, the hook spool, disk headroom. A check that
itself fails reports ``fail`` with the error: the doctor never crashes on the damage it looks for.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
UNPARSEABLE = ("line is not valid JSON", "line is not a JSON object")  # verify's reasons for damaged bytes
DEFAULT_MIN_FREE_MB = 500
VECTOR_CACHE_SHARE = 0.25  # vectors held in memory should stay under this share of available RAM


class Check:
    """One diagnosis: what was checked, what was found, the one-line fix, and the safe repair (if any)."""

    def __init__(
        self,
        name: str,
        status: str,
        summary: str,
        *,
        fix: str | None = None,
        details: dict[str, Any] | None = None,
        repair: Callable[[], str] | None = None,
    ) -> None:
        self.name, self.status, self.summary, self.fix = name, status, summary, fix
        self.details = details or {}
        self.repair = repair
        self.repaired: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"check": self.name, "status": self.status, "summary": self.summary}
        if self.fix:
            data["fix"] = self.fix
        if self.details:
            data["details"] = self.details
        if self.repaired:
            data["repaired"] = self.repaired
        return data


class DoctorContext:
    """Where the doctor looks: the workspace, its Eventloom, and a lazily opened fabric (read-only use)."""

    def __init__(self, workspace: Any, eventloom: Path, *, min_free_mb: int) -> None:
        self.workspace = workspace
        self.eventloom = eventloom
        self.min_free_mb = min_free_mb
        self._fabric: Any = None
        self.damaged: dict[str, str] = {}  # session -> why it cannot be read

    @property
    def exists(self) -> bool:
        return self.eventloom.is_dir()

    def fabric(self) -> Any:
        """The workspace's fabric, with the configured embedder when it loads (its own check reports when not)."""
        if self._fabric is None:
            from zaxy_agents.config import ZaxySettings
            from zaxy_agents.fabric import MemoryFabric

            try:
                self._fabric = MemoryFabric.from_path(self.eventloom)
            except Exception:
                settings = ZaxySettings.resolve(self.eventloom)
                settings.embedder = None
                self._fabric = MemoryFabric(settings)
        return self._fabric

    def session_files(self) -> list[Path]:
        return sorted(path for path in self.eventloom.glob("*.jsonl") if not path.name.startswith("."))

    def close(self) -> None:
        if self._fabric is not None:
            self._fabric.close()


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


# ---------------------------------------------------------------------------------------------- retrieval
def check_embedder(ctx: DoctorContext) -> Check:
    """The configured embedder loads, embeds, has stable dims, and stored vectors carry its model@version."""
    from zaxy_agents.config import ZaxySettings
    from zaxy_agents.errors import ZaxyError
    from zaxy_agents.retrieval.embeddings import resolve_embedder

    spec = ZaxySettings.resolve(ctx.eventloom).embedder
    if not spec or spec == "none":
        return Check("embedder", OK, "none configured: the lexical, graph and verbatim lanes answer (ZAXY_EMBEDDER)")
    try:
        embedder = resolve_embedder(spec)
        vector = embedder.embed_query("zaxy doctor probe")
    except (ZaxyError, Exception) as exc:  # a missing package, a provider without credentials, a bad name
        message = exc.remediation if isinstance(exc, ZaxyError) else str(exc)[:200]
        return Check(
            "embedder",
            FAIL,
            f"ZAXY_EMBEDDER={spec!r} is unavailable ({type(exc).__name__})",
            fix=f"{message} Or unset ZAXY_EMBEDDER (retrieval works without vectors).",
        )
    dims = int(getattr(vector, "shape", (len(vector),))[-1])
    declared = embedder.dims
    details = {"model_id": embedder.model_id, "dims": dims}
    if declared is not None and declared != dims:
        return Check(
            "embedder",
            FAIL,
            f"{embedder.model_id} declares {declared} dims but returns {dims}",
            fix="Fix the embedder's dims (or its version stamp), then `zaxy memory re-embed`.",
            details=details,
        )
    stamped = _stamped_model(ctx)
    if stamped is not None and stamped != embedder.model_id:
        return Check(
            "embedder",
            WARN,
            f"stored vectors are {stamped}, the configured embedder is {embedder.model_id}: they are never compared "
            "(the next use drops them and re-embeds every event)",
            fix="Run `zaxy memory re-embed` to embed everything with the configured model now.",
            details={**details, "stored_model": stamped},
        )
    return Check("embedder", OK, f"{embedder.model_id} embeds ({dims} dims)", details=details)


def _stamped_model(ctx: DoctorContext) -> str | None:
    """A model other than the configured one that stored vectors are of (``None``: no mix)."""
    try:
        vectors = ctx.fabric().retriever.vectors
        stored = vectors.stored_models()
    except Exception:
        return None
    others = sorted(model for model, rows in stored.items() if rows and model != vectors.model_id)
    return ", ".join(others) or None


def check_vector_cache(ctx: DoctorContext) -> Check:
    """The vector files exact search maps into memory, against the memory available (headroom for the cache)."""
    try:
        held = ctx.fabric().retriever.vectors.mapped_bytes() if ctx.exists else 0
    except Exception as exc:
        return _failed_check("vector cache", exc, "`zaxy reproject` rebuilds derived state from the log.")
    available = _available_memory()
    if available is None:
        return Check("vector cache", SKIP, f"{held / 1e6:.1f} MB of vectors in memory (available memory unknown)")
    details = {"vector_bytes": held, "available_bytes": available}
    if held > VECTOR_CACHE_SHARE * available:
        return Check(
            "vector cache",
            WARN,
            f"{held / 1e6:.0f} MB of vectors against {available / 1e6:.0f} MB available",
            fix="Install the ann extra (`pip install zaxy-agents[ann]`) for the HNSW index, or embed fewer events.",
            details=details,
        )
    return Check(
        "vector cache", OK, f"{held / 1e6:.1f} MB of vectors, {available / 1e6:.0f} MB available", details=details
    )


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


# ---------------------------------------------------------------------------------------------- surfaces
def check_mcp_profile(ctx: DoctorContext) -> Check:
    from zaxy_agents.mcp.config import ENV_PROFILE

    profile = (os.environ.get(ENV_PROFILE) or "core").strip().lower()
    if profile not in ("core", "full"):
        return Check(
            "MCP profile",
            FAIL,
            f"{ENV_PROFILE}={os.environ.get(ENV_PROFILE)!r}: `zaxy serve` refuses to start",
            fix=f"Set {ENV_PROFILE} to core (the default) or full, or unset it.",
        )
    return Check("MCP profile", OK, f"{profile} ({'8 tools listed' if profile == 'core' else 'every tool listed'})")


def check_hooks(ctx: DoctorContext) -> list[Check]:
    """Per client: where hooks are installed, executables that are gone, the last hook event and error."""
    from zaxy_agents.capture import hook_install
    from zaxy_agents.fabric.hook_state import read_hook_errors

    checks = []
    errors = read_hook_errors(str(ctx.eventloom), ctx.workspace.root)
    for client in hook_install.SCOPES:
        rows = hook_install.installed(client, ctx.workspace.root)
        scopes = [row["scope"] for row in rows if row["events"]]
        stale = sorted({exe for row in rows for exe in row.get("stale", [])})
        unreadable = [row["path"] for row in rows if row.get("error")]
        name = f"hooks: {client}"
        client_errors = [record for record in errors["recent"] if record.get("client", "claude-code") == client]
        if unreadable:
            checks.append(
                Check(name, FAIL, f"settings file does not parse: {unreadable[0]}", fix="Fix the JSON of that file.")
            )
        elif stale:
            checks.append(
                Check(
                    name,
                    FAIL,
                    f"installed ({', '.join(scopes)}) but runs a zaxy that is gone: {stale[0]}",
                    fix=f"Reinstall: zaxy hooks {client} --force"
                    + (f" --scope {scopes[0]}" if scopes and scopes[0] != hook_install.DEFAULT_SCOPE[client] else ""),
                    details={"missing_executables": stale},
                )
            )
        elif not scopes:
            checks.append(
                Check(name, SKIP, "not installed", fix=f"Optional: `zaxy hooks {client}` captures its sessions.")
            )
        elif client_errors:
            last = client_errors[-1]
            checks.append(
                Check(
                    name,
                    WARN,
                    f"installed ({', '.join(scopes)}); last hook error {last.get('at')}: "
                    f"{last.get('error_type')} {str(last.get('error', ''))[:160]}",
                    fix="`zaxy hooks status` lists recent hook errors (the hooks never block the client).",
                    details={"errors": errors["count"], "last_error": last},
                )
            )
        else:
            checks.append(Check(name, OK, f"installed ({', '.join(scopes)}), no hook errors"))
    return checks


def check_owner(ctx: DoctorContext) -> Check:
    """The graph owner record (``.zaxy/owner.json``): a live `zaxy serve`, or a stale record of a dead one."""
    from zaxy_agents.config import DERIVED_DIR_NAME
    from zaxy_agents.fabric.sharing import INFO_FILE, LOCK_FILE, pid_alive, read_owner, try_claim

    derived = ctx.eventloom / DERIVED_DIR_NAME
    record = read_owner(derived) if derived.is_dir() else None
    if record is None:
        return Check("graph owner", OK, "no MCP server owns the graph now")
    pid = record["pid"]
    lock_held = _lock_held(derived / LOCK_FILE)
    if pid_alive(pid) and lock_held:
        return Check("graph owner", OK, f"`zaxy serve` pid {pid} owns the graph; other servers proxy to it")

    def repair() -> str:
        lease = try_claim(derived)
        if lease is None:
            return "the lock is held by a live process: nothing removed"
        lease.release()  # claiming clears the stale record and socket; releasing hands over cleanly
        return f"removed the stale owner record of pid {pid}"

    if lock_held:
        return Check(
            "graph owner",
            FAIL,
            f"owner.json names pid {pid}, which is gone, but another process holds {LOCK_FILE}",
            fix="Fully exit stale `zaxy serve` processes (ps -ef | grep '[z]axy serve'), then retry.",
        )
    return Check(
        "graph owner",
        WARN,
        f"stale {INFO_FILE}: pid {pid} is gone and nobody holds the lock",
        fix="Harmless (the next server clears it); `zaxy doctor --fix` removes it now.",
        details={"record": record},
        repair=repair,
    )


def _lock_held(path: Path) -> bool:
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def check_disk(ctx: DoctorContext) -> Check:
    target = ctx.eventloom if ctx.exists else Path(ctx.workspace.root)
    usage = shutil.disk_usage(target)
    free_mb = usage.free / 1e6
    details = {"free_bytes": usage.free, "total_bytes": usage.total, "path": str(target)}
    if free_mb < ctx.min_free_mb:
        return Check(
            "disk headroom",
            FAIL,
            f"{free_mb:.0f} MB free on {target} (minimum {ctx.min_free_mb} MB)",
            fix="Free disk space: appends are refused when the disk fills, and derived state needs room to rebuild.",
            details=details,
        )
    if usage.free < 0.05 * usage.total:
        return Check(
            "disk headroom",
            WARN,
            f"{free_mb:.0f} MB free ({100 * usage.free / usage.total:.1f}% of the disk)",
            fix="Free disk space before the log or the graph runs out of room.",
            details=details,
        )
    return Check("disk headroom", OK, f"{free_mb / 1000:.1f} GB free", details=details)


def _failed_check(name: str, exc: BaseException, fix: str) -> Check:
    from zaxy_agents.errors import LockedError, ZaxyError

    if isinstance(exc, LockedError):
        return Check(name, SKIP, f"held by another process ({exc.message})", fix=exc.remediation)
    message = exc.message if isinstance(exc, ZaxyError) else str(exc)
    return Check(name, FAIL, f"{type(exc).__name__}: {message[:200]}", fix=fix)


CHECKS: list[Callable[[DoctorContext], Check | list[Check]]] = [
    check_log_integrity,
    check_spool,
    check_projection,
    check_derived_files,
    check_embedder,
    check_vector_cache,
    check_mcp_profile,
    check_hooks,
    check_owner,
    check_disk,
]


def run_checks(ctx: DoctorContext, *, fix: bool = False) -> list[Check]:
    """Every check in order (a crashing check is a failed check); with ``fix``, the safe repairs run and the
    repaired checks are run again."""
    results: list[Check] = []
    for check in CHECKS:
        try:
            found = check(ctx)
        except Exception as exc:
            found = _failed_check(check.__name__.removeprefix("check_").replace("_", " "), exc, "Report this.")
        results.extend(found if isinstance(found, list) else [found])
    if not fix:
        return results
    for result in results:
        if result.repair is not None and result.status in (WARN, FAIL):
            try:
                result.repaired = result.repair()
            except Exception as exc:
                result.repaired = f"repair failed: {type(exc).__name__}: {exc}"
    return results
